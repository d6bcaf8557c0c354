"""Which results a message shows (`PageState`) and how that state travels in a custom_id.

Pure state, no views: the buttons (`bot.app.results.views`), the cogs and the console build
pages from it. Custom_ids (all built by `limits.custom_id`):

    pb:s:{page}:{limit}:{venue}:{query}   a page of /search results (◀ ▶)
    pb:l:{page}:{limit}:{paper}           a page of "more like" results (◀ ▶)
    pb:n:{page}:{limit}:{venue}:{days}    a page of /new (◀ ▶)

`{paper}` is the paper id, or its key (`bot.app.refs`: `~` and 12 hex digits) when the id
is too long to fit; `{venue}` is the venue filter, or the key of a venue name longer than
`VENUE_INLINE` or holding ":". Keys depend on the id or name only, so a button keeps working
after a restart and after a corpus reload that keeps its paper; when the paper or venue is
gone, the click answers so. A query too long for the custom_id (a pasted title) is stored as
`QUERY_IN_MESSAGE` instead: the button then reads the query back from the message it sits
on, whose heading is `embeds.HEADING_MARK` + `embeds.SEARCH_TITLE_PREFIX` + the escaped query
(an older page's embed title: the prefix + the query), written and read through those
constants (`embeds.HEADING_MAX` keeps a `QUERY_MAX` query whole).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

import discord

from bot.app import limits, refs, render
from bot.app.markdown import ZERO_WIDTH, escape
from bot.app.results.embeds import HEADING_MARK, SEARCH_TITLE_PREFIX
from bot.search.recent import newest
from bot.search.results import Filters, SearchResult

if TYPE_CHECKING:
    from bot.search.engine import SearchEngine

QUERY_MAX = 250
QUERY_IN_MESSAGE = "^"
VENUE_MAX = limits.CHOICE_VALUE  # a venue option holds any autocomplete value
VENUE_INLINE = 24  # longer venue names travel in a custom_id as their key
LIMIT_MAX = 10  # hits per page: a custom_id holds it in two digits, a menu lists them all
PAGE_MAX = 9999
# A results message lists a search ("s") or the papers like one paper ("l").
PageKind = Literal["s", "l", "n"]


def page_limit(requested: int) -> int:
    """Hits per page as every surface shows them (/search, /similar, buttons, the console):
    `requested` (a setting, an option, a clicked custom_id) brought within 1..LIMIT_MAX."""
    return max(1, min(LIMIT_MAX, requested))


def _inline_venue(venue: str) -> bool:
    return ":" not in venue and len(venue) <= VENUE_INLINE and not refs.is_key(venue)


@dataclass(frozen=True, slots=True)
class PageState:
    """Which results a message shows: a search ("s"), papers like one paper ("l"), or the
    papers added in the last days ("n", bot/search/recent.py)."""

    kind: PageKind
    ref: str  # the query; the paper id (or its key, from a custom_id); or the number of days
    page: int = 1
    limit: int = 5
    venue: str = ""  # a venue filter (or the key of a venue name, as read from a custom_id)
    paged: bool = True  # False when the venue cannot travel in a custom_id: no ◀ ▶

    def custom_id(self, page: int) -> str | None:
        """The custom_id of a button showing `page`; None when the state cannot be carried."""
        if page > PAGE_MAX or not self.paged:
            return None
        if self.kind in ("s", "n"):
            venue = self.venue if _inline_venue(self.venue) else refs.key_of(self.venue)
            head: tuple[object, ...] = ("pb", self.kind, page, self.limit, venue)
            room = limits.custom_id_room(*head)
            if len(self.ref) <= room:
                return limits.custom_id(*head, self.ref)
            return limits.custom_id(*head, QUERY_IN_MESSAGE) if self.kind == "s" else None
        head = ("pb", "l", page, self.limit)
        return limits.custom_id(*head, refs.ref_for(self.ref, limits.custom_id_room(*head)))

    def resolved(self, engine: SearchEngine) -> PageState:
        """Keys replaced by the paper id or venue name they stand for (raises `StaleRef` when
        the corpus no longer has them); a venue filter that is neither short nor a venue's
        exact name cannot travel as a key, so its results get no ◀ ▶."""
        if self.kind == "l":
            return replace(self, ref=refs.find_paper(engine, self.ref).id)
        if not self.venue:
            return self
        venue = refs.canonical_venue(engine, refs.find_venue(engine, self.venue))
        paged = _inline_venue(venue) or venue in engine.venues()
        return replace(self, venue=venue, paged=paged)

    def run(self, engine: SearchEngine, hidden: Collection[str] = ()) -> SearchResult:
        """The page's results for a resolved state (CPU work: call through `respond.compute`);
        `/new` leaves out the `hidden` ids (what the member said 👎 to)."""
        offset = (self.page - 1) * self.limit
        if self.kind == "s":
            filters = Filters(venue=self.venue) if self.venue else None
            return engine.search(self.ref, limit=self.limit, offset=offset, filters=filters)
        if self.kind == "n":
            return newest(
                engine,
                self.days,
                venue=self.venue or None,
                limit=self.limit,
                offset=offset,
                hidden=hidden,
            )
        return engine.similar(self.ref, limit=self.limit, offset=offset)

    @property
    def days(self) -> int:
        return int(self.ref) if self.ref.isdigit() else 7

    def heading(self, engine: SearchEngine) -> str | None:
        """The embed title of "more like" results (markdown: the paper's title is escaped)."""
        if self.kind == "l":
            return "More like: " + escape(render.title_text(engine.paper(self.ref)))
        if self.kind == "n":
            return f"🆕 New papers: added in the last {self.days} day" + "s" * (self.days != 1)
        return None

    def empty_text(self) -> str | None:
        """What an empty first page says (None: the search wording)."""
        if self.kind != "n":
            return None
        where = f" in {self.venue}" if self.venue else ""
        return (
            f"No paper was added{where} in the last {self.days} day{'s' * (self.days != 1)}. "
            "Papers arrive when the bot's sources are refreshed; try more days "
            "(`/new days:30`) or `/search`."
        )


def query_from_message(message: discord.Message | None) -> str | None:
    """The query of a results message: from its heading "### 🔎 {query}" (a v2 page, the
    query escaped) or, on a page an older version sent, its embed title "🔎 {query}"."""
    if message is None:
        return None
    if message.embeds:
        title = message.embeds[0].title or ""
    else:
        line = (first_text(message.components) or "").split("\n", 1)[0]
        if not line.startswith(HEADING_MARK):
            return None
        title = unescape(line.removeprefix(HEADING_MARK))
    return (
        title.removeprefix(SEARCH_TITLE_PREFIX) if title.startswith(SEARCH_TITLE_PREFIX) else None
    )


def first_text(components: Sequence[discord.Component]) -> str | None:
    """The first text display of a v2 message, depth first."""
    for component in components:
        if isinstance(component, discord.components.TextDisplay):
            return component.content
        children = getattr(component, "children", None)
        if children:
            found = first_text(children)
            if found is not None:
                return found
    return None


_ESCAPED = re.compile(r"\\(.)", re.S)


def unescape(text: str) -> str:
    """Text as `markdown.escape` was given it: its backslashes and @everyone's zero-width
    space taken out (a query is one line, so no line-start escapes remain ambiguous)."""
    return _ESCAPED.sub(r"\1", text).replace("@" + ZERO_WIDTH, "@")

"""Buttons and menus whose whole state lives in their custom_id, so they survive restarts.

Each class is a `discord.ui.DynamicItem` registered once in `setup_hook`; Discord sends the
custom_id back with every click, and the item rebuilds what it needs from it. Every custom_id
is built by `limits.custom_id`:

    pb:s:{page}:{limit}:{venue}:{query}   a page of /search results (◀ ▶)
    pb:l:{page}:{limit}:{paper}           a page of "more like" results (◀ ▶)
    pb:n:{page}:{limit}:{venue}:{days}    a page of /new (◀ ▶)
    pb:open                                the menu opening one hit (the value is the paper)
    pb:more:{paper}                        "More like this" on a paper's detail
    pb:share                               post this ephemeral reply to the channel
    pb:save:…, pb:lib:…, pb:fb:…               Save, library and follow-notice pages (`saving`)

`{paper}` is the paper id, or its key (`bot.search.refs`: `~` and 12 hex digits) when the id
is too long to fit; `{venue}` is the venue filter, or the key of a venue name longer than
`VENUE_INLINE` or holding ":". Keys depend on the id or name only, so a button keeps working
after a restart and after a corpus reload that keeps its paper; when the paper or venue is
gone, the click answers so. A query too long for the custom_id (a pasted title) is stored as
`QUERY_IN_MESSAGE` instead: the button then reads the query back from the message it sits
on, whose embed title is "🔎 {query}" (`QUERY_MAX` keeps that title whole within 256).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

import discord

from bot.app import limits, render, respond, saving
from bot.app.items import BotItem, Match
from bot.app.markdown import escape
from bot.search import refs
from bot.search.models import Filters, Paper, SearchResult
from bot.search.recent import newest

if TYPE_CHECKING:
    from bot.app.client import PaperBot
    from bot.search.engine import SearchEngine

QUERY_MAX = 250
QUERY_IN_MESSAGE = "^"
SEARCH_TITLE_PREFIX = "🔎 "
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

    def run(self, engine: SearchEngine) -> SearchResult:
        """The page's results for a resolved state (CPU work: call through `respond.compute`)."""
        offset = (self.page - 1) * self.limit
        if self.kind == "s":
            filters = Filters(venue=self.venue) if self.venue else None
            return engine.search(self.ref, limit=self.limit, offset=offset, filters=filters)
        if self.kind == "n":
            return newest(
                engine, self.days, venue=self.venue or None, limit=self.limit, offset=offset
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
    """The query of a results message, from its embed title "🔎 {query}"."""
    if message is None or not message.embeds:
        return None
    title = message.embeds[0].title or ""
    return (
        title.removeprefix(SEARCH_TITLE_PREFIX) if title.startswith(SEARCH_TITLE_PREFIX) else None
    )


def engine_of(interaction: discord.Interaction[PaperBot]) -> SearchEngine:
    return interaction.client.engine


def ephemeral_default(interaction: discord.Interaction[PaperBot]) -> bool:
    return interaction.client.settings.discord.ephemeral


def results_view(result: SearchResult, state: PageState, *, share: bool) -> discord.ui.View:
    """Menu of the hits on row 0; ◀ ▶ and Share on row 1."""
    view = discord.ui.View(timeout=None)
    if result.hits:
        view.add_item(OpenMenu(result))
    page, pages = render.page_of(result)
    for target, label in ((page - 1, "◀"), (page + 1, "▶")):
        cid = state.custom_id(max(0, target))
        if cid is None:
            continue
        button = PageButton(replace(state, page=max(0, target)), label=label)
        button.item.disabled = not 1 <= target <= pages
        view.add_item(button)
    if result.suggestion and state.kind == "s":
        # Did you mean: one click runs the corrected query in place (a page-1 PageButton).
        fixed = replace(state, ref=result.suggestion, page=1)
        cid = fixed.custom_id(1)
        if cid is not None and not cid.endswith(":" + QUERY_IN_MESSAGE):
            label = limits.truncate(f"Search “{result.suggestion}”", limits.BUTTON_LABEL)
            view.add_item(PageButton(fixed, label=label))
    if share:
        view.add_item(ShareButton())
    return view


def paper_view(paper_id: str, links: list[tuple[str, str]], *, share: bool) -> discord.ui.View:
    """ "More like this", Share, and up to three link buttons (URLs from `render.found_links`,
    already well formed)."""
    view = discord.ui.View(timeout=None)
    view.add_item(MoreLikeButton(paper_id))
    save = saving.save_button(paper_id)
    if save is not None:
        view.add_item(save)
    if share:
        view.add_item(ShareButton())
    for label, url in links[:3]:
        if len(url) <= limits.LINK_URL:
            view.add_item(discord.ui.Button(label=label[: limits.BUTTON_LABEL], url=url))
    return view


async def show_page(
    interaction: discord.Interaction[PaperBot], state: PageState, *, edit: bool, ephemeral: bool
) -> None:
    """Run the page's query and render it (in a worker, deferring if slow), then show it, as
    a new message or in place."""
    engine = engine_of(interaction)

    def work() -> tuple[PageState, SearchResult, discord.Embed]:
        done = state.resolved(engine)
        result = done.run(engine)
        venue = done.venue or None
        embed = render.results_embed(
            result, heading=done.heading(engine), venue=venue, empty=done.empty_text()
        )
        return replace(done, page=render.page_of(result)[0]), result, embed

    shown, result, embed = await respond.compute(interaction, work, ephemeral=ephemeral, edit=edit)
    share = ephemeral and not (
        edit and interaction.message is not None and not interaction.message.flags.ephemeral
    )
    view = results_view(result, shown, share=share)
    await respond.send(interaction, embed=embed, view=view, ephemeral=ephemeral, edit=edit)


async def show_paper(
    interaction: discord.Interaction[PaperBot], ref: str, *, ephemeral: bool
) -> None:
    """One paper in full; `ref` is an id, a key or a title. Rendered in a worker thread."""
    engine = engine_of(interaction)

    def work() -> tuple[Paper, discord.Embed, list[tuple[str, str]]]:
        paper = refs.find_paper(engine, ref)
        return paper, render.paper_embed(paper), render.found_links(paper)

    paper, embed, links = await respond.compute(interaction, work, ephemeral=ephemeral)
    await respond.send(
        interaction,
        embed=embed,
        ephemeral=ephemeral,
        view=paper_view(paper.id, links, share=ephemeral),
    )


class PageButton(
    BotItem[discord.ui.Button[discord.ui.View]],
    template=re.compile(
        r"pb:(?P<kind>[sln]):(?P<page>\d{1,4}):(?P<limit>\d{1,2}):"
        r"(?:(?P<venue>[^:]*):)?(?P<ref>.+)",
        re.S,
    ),
):
    """◀ or ▶: re-runs the query for another page and edits the message in place."""

    def __init__(self, state: PageState, *, label: str = "▶") -> None:
        cid = state.custom_id(state.page)
        if cid is None:
            raise ValueError("page state does not fit a custom_id")
        super().__init__(
            discord.ui.Button(
                label=label, custom_id=cid, row=1, style=discord.ButtonStyle.secondary
            )
        )
        self.state = state

    @classmethod
    def restore(
        cls, interaction: discord.Interaction[PaperBot], item: discord.ui.Item[Any], match: Match
    ) -> PageButton:
        raw = match["kind"]
        kind: PageKind = "l" if raw == "l" else "n" if raw == "n" else "s"
        if kind == "l" and match["venue"] is not None:  # a paper id holding ":" parsed as venue
            ref = match["venue"] + ":" + match["ref"]
        else:
            ref = match["ref"]
        if kind == "s" and ref == QUERY_IN_MESSAGE:
            ref = query_from_message(interaction.message) or ref
        state = PageState(
            kind=kind,
            ref=ref,
            page=max(1, int(match["page"])),
            limit=page_limit(int(match["limit"])),
            venue=(match["venue"] or "") if kind in ("s", "n") else "",
        )
        button = cls.__new__(cls)
        discord.ui.DynamicItem.__init__(button, item)  # keep the clicked custom_id as is
        button.state = state
        return button

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        await show_page(
            interaction, self.state, edit=True, ephemeral=ephemeral_default(interaction)
        )


class OpenMenu(BotItem[discord.ui.Select[discord.ui.View]], template=r"pb:open"):
    """The menu listing the hits on screen; picking one opens its detail."""

    def __init__(self, result: SearchResult | None = None) -> None:
        options = []
        for hit in (result.hits if result else [])[: limits.SELECT_OPTIONS]:
            meta = " · ".join(
                x for x in (render.venue_line(hit.paper), render.authors_short(hit.paper, 2)) if x
            )
            options.append(
                discord.SelectOption(
                    label=limits.truncate(
                        f"{hit.rank}. {render.title_text(hit.paper)}", limits.OPTION_LABEL
                    ),
                    value=refs.ref_for(hit.paper.id, limits.OPTION_VALUE),
                    description=limits.truncate(meta, limits.OPTION_DESCRIPTION) or None,
                )
            )
        select: discord.ui.Select[discord.ui.View] = discord.ui.Select(
            custom_id=limits.custom_id("pb", "open"),
            placeholder="Open a paper…",
            row=0,
            options=options or [discord.SelectOption(label="(no papers)", value="-")],
        )
        super().__init__(select)

    @classmethod
    def restore(
        cls, interaction: discord.Interaction[PaperBot], item: discord.ui.Item[Any], match: Match
    ) -> OpenMenu:
        menu = cls.__new__(cls)
        discord.ui.DynamicItem.__init__(menu, item)
        return menu

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        values = respond.data_of(interaction).get("values") or []
        ref = str(values[0]) if values else ""
        await show_paper(interaction, ref, ephemeral=ephemeral_default(interaction))


class MoreLikeButton(
    BotItem[discord.ui.Button[discord.ui.View]],
    template=re.compile(r"pb:more:(?P<ref>.+)", re.S),
):
    """ "More like this" under a paper: the first page of papers similar to it."""

    def __init__(self, paper_id: str) -> None:
        head = ("pb", "more")
        super().__init__(
            discord.ui.Button(
                label="More like this",
                custom_id=limits.custom_id(
                    *head, refs.ref_for(paper_id, limits.custom_id_room(*head))
                ),
                style=discord.ButtonStyle.primary,
                emoji="🔁",
            )
        )
        self.paper_ref = paper_id

    @classmethod
    def restore(
        cls, interaction: discord.Interaction[PaperBot], item: discord.ui.Item[Any], match: Match
    ) -> MoreLikeButton:
        button = cls.__new__(cls)
        discord.ui.DynamicItem.__init__(button, item)  # the ref may be a key: keep it as sent
        button.paper_ref = match["ref"]
        return button

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        limit = page_limit(interaction.client.settings.search.page_size)
        state = PageState(kind="l", ref=self.paper_ref, limit=limit)
        await show_page(interaction, state, edit=False, ephemeral=ephemeral_default(interaction))


class ShareButton(BotItem[discord.ui.Button[discord.ui.View]], template=r"pb:share"):
    """Posts the embeds of an ephemeral reply to the channel, credited to who shared it."""

    def __init__(self) -> None:
        super().__init__(
            discord.ui.Button(
                label="Share",
                custom_id=limits.custom_id("pb", "share"),
                emoji="📣",
                style=discord.ButtonStyle.success,
            )
        )

    @classmethod
    def restore(
        cls, interaction: discord.Interaction[PaperBot], item: discord.ui.Item[Any], match: Match
    ) -> ShareButton:
        return cls()

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        message = interaction.message
        embeds = message.embeds if message else []
        if not embeds:
            raise discord.ClientException("nothing to share on this message")
        await interaction.response.send_message(
            content=f"Shared by {interaction.user.mention}",
            # Within the one message's budget even if the original was built by an older
            # version with other limits.
            embeds=[
                discord.Embed.from_dict(e)
                for e in limits.fit_embeds(embed.to_dict() for embed in embeds)
            ],
            allowed_mentions=discord.AllowedMentions.none(),
            ephemeral=False,
        )


DYNAMIC_ITEMS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (
    PageButton,
    OpenMenu,
    MoreLikeButton,
    ShareButton,
    *saving.DYNAMIC_ITEMS,
)

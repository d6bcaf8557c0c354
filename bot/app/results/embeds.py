"""The text of a page of results: the look of /search, /similar and /new.

Two shapes share the same hit text (`hit_block`): the Components v2 page Discord shows
(`page_texts`: the heading and `hit_block(phone=True)` in text displays, laid out by
`views.results_layout`), and the one embed the console prints (`results_embed`). A page's
heading is `SEARCH_TITLE_PREFIX` + the query; `pages.query_from_message` reads a long query
back through that same constant.
"""

from __future__ import annotations

from dataclasses import dataclass

import discord

from bot.app import limits
from bot.app.markdown import escape, escape_snippet, masked_link
from bot.app.render import COLOR, authors_short, finish, title_text, venue_line
from bot.search.results import Hit, SearchResult

# A results page's title: this prefix, then the query (which a long query's ◀ ▶ read back).
SEARCH_TITLE_PREFIX = "🔎 "
# The v2 page's heading is a markdown header: "### 🔎 query".
HEADING_MARK = "### "
# Characters of text a v2 page may show (Discord: 4000 across all text displays), less the
# room Share's "Shared by @member" line takes on the shared copy.
PAGE_TEXT = 4000 - 100
# On a phone a hit is its title, one line of venue and authors, and about three lines of
# snippet: the first screen then holds the controls and the first hits.
PHONE_SNIPPET = 120
# A heading holds a whole query even escaped (QUERY_MAX 250: a long query's ◀ ▶ read it back).
HEADING_MAX = 600
FOOTER_MAX = 200  # the small print under the heading: page, matches, query (cut)
NO_MATCH = (
    "No paper matches. Try fewer or broader words, check the spelling, or drop the venue filter."
)


def page_of(result: SearchResult) -> tuple[int, int]:
    """(current page, page count), both from 1."""
    return result.offset // max(1, result.limit) + 1, result.pages


def footer_text(result: SearchResult, venue: str | None = None) -> str:
    """ "page 2/7 · 31 matches for …", or "page 2/40+ · 200+ matches for …" when the total
    is a lower bound (`SearchResult.total_exact`)."""
    page = page_of(result)[0]
    where = f" in {venue}" if venue else ""
    return (
        f"page {page}/{result.pages_text()} · {result.matches_text()} for “{result.query}”{where}"
    )


def who_text(hit: Hit) -> str:
    """The hit's authors as its line shows them: the ones an `author:` filter matched, else
    the first three and "et al."."""
    if hit.matched_authors:
        return ", ".join(hit.matched_authors)
    return authors_short(hit.paper)


def hit_block(hit: Hit, budget: int, *, phone: bool = False) -> str:
    """One hit: numbered linked title, venue/status and authors, highlighted snippet. `phone`
    puts venue and authors in small print and keeps the snippet to `PHONE_SNIPPET`."""
    paper = hit.paper
    title = limits.truncate(title_text(paper), 200)
    head = f"**{hit.rank}. {masked_link(title, paper.link('page'))}**"
    meta = escape(" · ".join(x for x in (venue_line(paper), who_text(hit)) if x))
    if paper.title_derived:
        meta += " · _headline from abstract_"
    if meta and phone:
        meta = "-# " + meta
    lines = [head, meta] if meta else [head]
    room = budget - sum(len(x) + 1 for x in lines)
    if phone:
        room = min(room, PHONE_SNIPPET)
    if hit.snippet and room > 20:
        lines.append(limits.truncate(escape_snippet(hit.snippet), room, markdown=True))
    return limits.truncate("\n".join(lines), budget, markdown=True)


def notes_text(result: SearchResult) -> str:
    """What a page says above its hits: the search's notices, then "Did you mean"."""
    lines = [f"ℹ️ {escape(notice)}" for notice in result.notices if notice.strip()]
    if result.suggestion and result.hits:
        lines.append(f"Did you mean **{escape(result.suggestion)}**?")
    return "\n".join(lines)


def empty_page_text(result: SearchResult, empty: str | None = None) -> str:
    """What a page without hits says: past the end, a suggestion, or no match at all."""
    if result.total or result.suggestion:
        return result.empty_text()
    return empty or NO_MATCH


def search_title(result: SearchResult) -> str:
    return limits.truncate(f"{SEARCH_TITLE_PREFIX}{escape(result.query)}", HEADING_MAX)


@dataclass(frozen=True, slots=True)
class PageText:
    """The texts of a v2 page: its heading and one block per hit (markdown, within
    `PAGE_TEXT` together), rendered in a worker thread before the layout is built."""

    heading: str
    hits: list[str]


def page_texts(
    result: SearchResult,
    *,
    heading: str | None = None,
    venue: str | None = None,
    empty: str | None = None,
) -> PageText:
    """The heading ("### 🔎 query", the page and match count in small print, the notices, or
    what an empty page says) and the hits (markdown; the query is escaped)."""
    # A search's heading holds its whole query (a long query's ◀ ▶ read it back); another
    # heading ("More like: {title}") is cut as an embed title was.
    title = limits.truncate(heading, limits.EMBED_TITLE, markdown=True) if heading else None
    lines = [
        HEADING_MARK + (title or search_title(result)),
        "-# " + limits.truncate(escape(footer_text(result, venue)), FOOTER_MAX),
    ]
    notes = notes_text(result)
    if notes:
        lines.append(notes)
    if not result.hits:
        lines.append(empty_page_text(result, empty))
    top = limits.truncate("\n".join(lines), PAGE_TEXT // 2, markdown=True)
    budget = (PAGE_TEXT - len(top)) // max(1, len(result.hits))
    return PageText(top, [hit_block(hit, budget, phone=True) for hit in result.hits])


def results_embed(
    result: SearchResult,
    *,
    heading: str | None = None,
    venue: str | None = None,
    empty: str | None = None,
) -> discord.Embed:
    """One page of hits as one embed, footer "page 1/N · M matches for …" (the console's
    page, and the text a v2 page holds)."""
    title = heading or f"{SEARCH_TITLE_PREFIX}{result.query}"
    embed = discord.Embed(title=limits.truncate(title, limits.EMBED_TITLE), colour=COLOR)
    if result.hits:
        budget = (limits.EMBED_DESCRIPTION - 2 * len(result.hits)) // len(result.hits)
        notes = notes_text(result)
        note = notes + "\n\n" if notes else ""
        budget -= len(note) // len(result.hits) + 1
        embed.description = note + "\n\n".join(hit_block(hit, budget) for hit in result.hits)
    else:
        embed.description = empty_page_text(result, empty)
    embed.set_footer(text=footer_text(result, venue))
    return finish(embed)

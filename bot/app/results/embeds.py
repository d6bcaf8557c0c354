"""A page of results as one embed: the look of /search, /similar and /new (and the console's
pages). Its title is `SEARCH_TITLE_PREFIX` + the query; `pages.query_from_message` reads a long
query back through that same constant."""

from __future__ import annotations

import discord

from bot.app import limits
from bot.app.markdown import escape, escape_snippet, masked_link
from bot.app.render import COLOR, authors_short, finish, title_text, venue_line
from bot.search.results import Hit, SearchResult

# A results page's title: this prefix, then the query (which a long query's ◀ ▶ read back).
SEARCH_TITLE_PREFIX = "🔎 "


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


def hit_block(hit: Hit, budget: int) -> str:
    """One hit: numbered linked title, venue/status and first authors, highlighted snippet."""
    paper = hit.paper
    title = limits.truncate(title_text(paper), 200)
    head = f"**{hit.rank}. {masked_link(title, paper.link('page'))}**"
    # The authors `author:` matched (issue 27), else the first names.
    who = ", ".join(hit.matched_authors) if hit.matched_authors else authors_short(paper)
    meta = escape(" · ".join(x for x in (venue_line(paper), who) if x))
    if paper.title_derived:
        meta += " · _headline from abstract_"
    lines = [head, meta] if meta else [head]
    room = budget - sum(len(x) + 1 for x in lines)
    if hit.snippet and room > 20:
        lines.append(limits.truncate(escape_snippet(hit.snippet), room, markdown=True))
    return limits.truncate("\n".join(lines), budget, markdown=True)


def results_embed(
    result: SearchResult,
    *,
    heading: str | None = None,
    venue: str | None = None,
    empty: str | None = None,
) -> discord.Embed:
    """One page of hits as one embed, footer "page 1/N · M matches for …"."""
    title = heading or f"{SEARCH_TITLE_PREFIX}{result.query}"
    embed = discord.Embed(title=limits.truncate(title, limits.EMBED_TITLE), colour=COLOR)
    if result.hits:
        budget = (limits.EMBED_DESCRIPTION - 2 * len(result.hits)) // len(result.hits)
        note = f"Did you mean **{result.suggestion}**?\n\n" if result.suggestion else ""
        budget -= len(note) // len(result.hits) + 1
        embed.description = note + "\n\n".join(hit_block(hit, budget) for hit in result.hits)
    elif result.total or result.suggestion:
        embed.description = result.empty_text()
    else:
        embed.description = empty or (
            "No paper matches. Try fewer or broader words, check the "
            "spelling, or drop the venue filter."
        )
    embed.set_footer(text=footer_text(result, venue))
    return finish(embed)

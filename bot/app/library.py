"""A reader's library, follows and a server's top papers as embeds and files, for Discord and the
console alike.

The library cog, the follows cog, the Save button and the console all call these functions, so
"saved", a page of the library or an export reads the same everywhere. Nothing here answers an
interaction: callers do (`bot.app.respond`), or print (`bot.console`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import discord

from bot.app import limits, markdown, refs, render
from bot.config import LibrarySettings
from bot.follows.store import Follow
from bot.library import export
from bot.library.store import Library, SavedPaper, TopEntry
from bot.papers.records import Paper
from bot.search.results import SearchError, UnknownPaper

if TYPE_CHECKING:
    from bot.search.engine import SearchEngine
    from bot.storage.store import Storage

PAGE_SIZE = 5
EXPORT_MAX_BYTES = 8 * 1024 * 1024  # under the smallest upload limit Discord has for bots
PERIODS = {"week": timedelta(days=7), "month": timedelta(days=30), "all": None}
TOP_SIZE = 5


class Refused(SearchError):
    """A library or follow request that cannot be done; the message tells the reader why."""


def library_of(storage: Storage | None) -> Library:
    if storage is None:
        raise Refused(
            "The library needs the bot's database, which is not available right now "
            "(see [storage] database in the settings)."
        )
    return Library(storage)


def now() -> datetime:
    return datetime.now(UTC)


def find(engine: SearchEngine, paper_id: str) -> Paper | None:
    """The paper if the corpus still has it (a reload may have dropped it)."""
    try:
        return engine.paper(paper_id)
    except UnknownPaper:
        return None


async def save(
    library: Library,
    engine: SearchEngine,
    user_id: int,
    ref: str,
    guild_id: int | None = None,
    *,
    max_saved: int = LibrarySettings().max_saved,
) -> tuple[Paper, bool]:
    """Save a paper (by id, key or title); (paper, newly saved). Saving twice changes nothing.
    `max_saved` is [library] max_saved."""
    paper = refs.find_paper(engine, ref)
    if await library.get(user_id, paper.id) is None and await library.count(user_id) >= max_saved:
        raise Refused(
            f"Your library is full ({max_saved} papers). Remove some with /library remove "
            "or export and clear it."
        )
    return paper, await library.save(user_id, paper.id, now(), guild_id)


def saved_text(paper: Paper, new: bool) -> str:
    title = limits.truncate(render.title_text(paper), 200)
    if new:
        return f"📚 Saved **{markdown.escape(title)}** to your library (`/library show`)."
    return f"📚 **{markdown.escape(title)}** is already in your library."


async def resolve_saved(library: Library, engine: SearchEngine, user_id: int, ref: str) -> str:
    """The id of a paper in the reader's library, from an id or a title as typed."""
    if await library.get(user_id, ref) is not None:
        return ref
    try:
        paper_id = engine.paper(ref).id
    except UnknownPaper:
        paper_id = None
    if paper_id is None or await library.get(user_id, paper_id) is None:
        raise Refused(f"{ref!r} is not in your library. `/library show` lists what is.")
    return paper_id


@dataclass(frozen=True, slots=True)
class LibraryPage:
    items: list[SavedPaper]
    page: int
    pages: int
    total: int
    unread: int


async def load_page(library: Library, user_id: int, page: int) -> LibraryPage:
    entries = await library.all(user_id)
    total = len(entries)
    pages = max(1, -(-total // PAGE_SIZE))
    page = max(1, min(page, pages))
    items = entries[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    unread = sum(1 for e in entries if not e.read)
    return LibraryPage(items, page, pages, total, unread)


def library_embed(view: LibraryPage, engine: SearchEngine) -> discord.Embed:
    """One page of the library, newest first, each paper marked read (✅) or unread (🔵)."""
    embed = discord.Embed(title="📚 Your library", colour=render.COLOR)
    if not view.items:
        embed.description = (
            "Nothing saved yet. Press **Save** under any paper (search results, /paper, "
            "/random, the paper of the day) to keep it here."
        )
    else:
        blocks = []
        budget = (limits.EMBED_DESCRIPTION - 2 * len(view.items)) // len(view.items)
        for i, item in enumerate(view.items, start=(view.page - 1) * PAGE_SIZE + 1):
            paper = find(engine, item.paper_id)
            mark = "✅ read" if item.read else "🔵 unread"
            if paper is None:
                head = f"**{i}. `{item.paper_id}`** (no longer in the corpus)"
                meta = f"{mark} · saved {item.saved_at:%Y-%m-%d}"
            else:
                title = limits.truncate(render.title_text(paper), 200)
                head = f"**{i}. {markdown.masked_link(title, paper.link('page'))}**"
                meta = " · ".join(
                    x
                    for x in (mark, render.venue_line(paper), f"saved {item.saved_at:%Y-%m-%d}")
                    if x
                )
            meta += f" · `{item.paper_id}`"
            blocks.append(limits.truncate(f"{head}\n{meta}", budget, markdown=True))
        embed.description = "\n\n".join(blocks)
    embed.set_footer(
        text=f"page {view.page}/{view.pages} · {view.total} saved · {view.unread} unread"
    )
    return render.finish(embed)


async def export_file(
    library: Library, engine: SearchEngine, user_id: int, fmt: str
) -> tuple[str, bytes, int, int]:
    """(file name, contents, papers exported, saved papers no longer in the corpus)."""
    if fmt not in export.FORMATS:
        raise Refused(f"Unknown format {fmt!r}: use bibtex, markdown or csv.")
    saved = await library.all(user_id)
    if not saved:
        raise Refused("Your library is empty: nothing to export.")
    entries = []
    for item in saved:
        paper = find(engine, item.paper_id)
        if paper is not None:
            entries.append(export.Entry(paper, item.saved_at, item.read))
    data = export.export(entries, fmt).encode("utf-8")
    if len(data) > EXPORT_MAX_BYTES:
        raise Refused("Your library is too large to send as one file; remove some papers first.")
    name = f"library.{export.EXTENSIONS[fmt]}"
    return name, data, len(entries), len(saved) - len(entries)


def since(period: str, at: datetime) -> datetime | None:
    if period not in PERIODS:
        raise Refused("Period must be week, month or all.")
    span = PERIODS[period]
    return None if span is None else at - span


def top_embed(
    saved: Sequence[TopEntry], reacted: Sequence[TopEntry], engine: SearchEngine, period: str
) -> discord.Embed:
    label = {"week": "this week", "month": "this month", "all": "of all time"}[period]
    embed = discord.Embed(title=f"🏆 This server's top papers {label}", colour=render.COLOR)
    for name, rows, unit in (
        ("Most saved", saved, "save"),
        ("Most reacted-to daily posts", reacted, "reader"),
    ):
        lines = []
        for i, row in enumerate(rows, 1):
            paper = find(engine, row.paper_id)
            title = (
                markdown.masked_link(
                    limits.truncate(render.title_text(paper), 90), paper.link("page")
                )
                if paper
                else f"`{row.paper_id}`"
            )
            lines.append(f"{i}. {title} · {row.count} {unit}{'s' if row.count != 1 else ''}")
        embed.add_field(
            name=name,
            inline=False,
            value=limits.join_limited(lines, limits.FIELD_VALUE, sep="\n") or "nothing yet",
        )
    return render.finish(embed)


def follows_embed(
    follows: Sequence[Follow], heading: str, personal: str = "your DMs"
) -> discord.Embed:
    """`/follow list`: each follow with where it goes and, when it stopped, why."""
    embed = discord.Embed(title=heading, colour=render.COLOR)
    lines = []
    for f in follows:
        where = f"<#{f.channel_id}>" if f.channel_id is not None else personal
        state = f" · ⚠️ stopped: {f.disabled_reason}" if f.disabled_reason else ""
        lines.append(f"`{f.follow_id}` **{markdown.escape(f.query)}** → {where}{state}")
    embed.description = (
        "\n".join(lines)
        if lines
        else "No follows. `/follow add query` tells you about new papers matching a query."
    )
    return render.finish(embed)


def notice_embed(
    query: str, papers: Sequence[Paper], page: int, total: int, per_page: int
) -> discord.Embed:
    """A follow's notification: up to `per_page` new papers, then "and N more"."""
    start = (page - 1) * per_page
    shown = papers[start : start + per_page]
    lines = []
    for i, paper in enumerate(shown, start + 1):
        title = limits.truncate(render.title_text(paper), 150)
        meta = " · ".join(x for x in (render.venue_line(paper), render.authors_short(paper)) if x)
        link = markdown.masked_link(title, paper.link("page"))
        lines.append(f"{i}. {link}" + (f"\n{markdown.escape(meta)}" if meta else ""))
    more = total - start - len(shown)
    if more > 0:
        lines.append(f"…and {more} more (▶)")
    embed = discord.Embed(
        title=limits.truncate(f"🆕 New papers for “{query}”", limits.EMBED_TITLE),
        colour=render.COLOR,
        description=limits.truncate("\n".join(lines), limits.EMBED_DESCRIPTION, markdown=True),
    )
    pages = max(1, -(-total // per_page))
    embed.set_footer(text=f"{total} new · page {page}/{pages} · /follow list to manage")
    return render.finish(embed)

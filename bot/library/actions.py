"""What a reader can do with their library, discord-free: find a saved paper, page it, export
it, and the periods of a server's top list. The library cog, the Save button and the console
call these, so "saved", a page of the library or an export reads the same everywhere; nothing
here answers an interaction or builds an embed (bot/app/exts/library does).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.library import export
from bot.library.store import Library, SavedPaper
from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from bot.search.results import SearchError, UnknownPaper
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

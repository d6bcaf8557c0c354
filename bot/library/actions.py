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
# One export file: the smallest upload limit Discord has had for bots, under the 10 MiB an
# interaction announces (`attachment_size_limit`), with room for the request's own parts.
EXPORT_MAX_BYTES = 8 * 1024 * 1024
EXPORT_MAX_FILES = 10  # attachments Discord takes on one message
# All files of one message: Discord refuses a message request over 25 MiB.
EXPORT_MAX_TOTAL_BYTES = 24 * 1024 * 1024
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
    """The id of a paper in the reader's library, from an id or a title as typed; an entry
    saved under another id of a merged paper (its preprint's) counts (`Paper.aliases`)."""
    if await library.get(user_id, ref) is not None:
        return ref
    try:
        paper = engine.paper(ref)
    except UnknownPaper:
        paper = None
    for paper_id in (paper.id, *paper.aliases) if paper is not None else ():
        if await library.get(user_id, paper_id) is not None:
            return paper_id
    raise Refused(f"{ref!r} is not in your library. `/library show` lists what is.")


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


@dataclass(frozen=True, slots=True)
class Export:
    """A library as files to send together: (name, contents) each, papers exported, and saved
    papers no longer in the corpus (left out)."""

    files: list[tuple[str, bytes]]
    count: int
    missing: int


async def saved_for_export(library: Library, user_id: int, fmt: str) -> list[SavedPaper]:
    """The reader's saved papers, once the format is known and the library is not empty."""
    if fmt not in export.FORMATS:
        raise Refused(f"Unknown format {fmt!r}: use {', '.join(export.FORMATS)}.")
    saved = await library.all(user_id)
    if not saved:
        raise Refused("Your library is empty: nothing to export.")
    return saved


def make_export(
    engine: SearchEngine,
    saved: list[SavedPaper],
    fmt: str,
    max_bytes: int | None = None,
    max_files: int | None = None,
) -> Export:
    """The export as few files as fit: one when it fits in `max_bytes` (EXPORT_MAX_BYTES by
    default), else cut between papers into at most `max_files` (EXPORT_MAX_FILES) files of
    EXPORT_MAX_TOTAL_BYTES in all; Refused, saying how to get a smaller one, past that.
    CPU work (1,000 BibTeX entries take a fraction of a second): the cog runs it off the loop.
    """
    limit = EXPORT_MAX_BYTES if max_bytes is None else max_bytes
    files = EXPORT_MAX_FILES if max_files is None else max_files
    entries = []
    for item in saved:
        paper = find(engine, item.paper_id)
        if paper is not None:
            entries.append(export.Entry(paper, item.saved_at, item.read))
    try:
        parts = export.export_parts(entries, fmt, limit, files)
        size = sum(len(part) for part in parts)
        if size > EXPORT_MAX_TOTAL_BYTES:
            raise export.TooLarge(size, limit, files)
    except export.TooLarge as exc:
        room = min(limit * files, EXPORT_MAX_TOTAL_BYTES)
        holds = f"one file of {_size(limit)}"
        if files > 1:
            holds = f"{files} files of {_size(limit)}, {_size(room)} in all"
        hint = "Try csv, the smallest format, or remove" if fmt != "csv" else "Remove"
        raise Refused(
            f"Your library is too large to send: as {fmt} it takes {_size(exc.size)}, and one "
            f"message holds {holds}. {hint} some papers with /library remove."
        ) from exc
    ext = export.EXTENSIONS[fmt]
    names = (
        [f"library.{ext}"]
        if len(parts) == 1
        else [f"library-{n}-of-{len(parts)}.{ext}" for n in range(1, len(parts) + 1)]
    )
    return Export(list(zip(names, parts, strict=True)), len(entries), len(saved) - len(entries))


def _size(count: int) -> str:
    """Bytes for a reader: `8.0 MiB`, `19.5 KiB`."""
    return f"{count / 2**20:.1f} MiB" if count >= 2**20 else f"{count / 2**10:.1f} KiB"


async def export_file(
    library: Library, engine: SearchEngine, user_id: int, fmt: str
) -> tuple[str, bytes, int, int]:
    """(file name, contents, papers exported, saved papers no longer in the corpus): the
    export as one file, for the console (the cog sends `make_export`'s files)."""
    made = make_export(engine, await saved_for_export(library, user_id, fmt), fmt, max_files=1)
    [(name, data)] = made.files
    return name, data, made.count, made.missing


def since(period: str, at: datetime) -> datetime | None:
    if period not in PERIODS:
        raise Refused("Period must be week, month or all.")
    span = PERIODS[period]
    return None if span is None else at - span


def citation(paper: Paper) -> str:
    """One paper's BibTeX, exactly as `/library export format:bibtex` writes it (the same
    writer: the source's own entry when it has one, else the generated one), for Cite."""
    return export.to_bibtex([export.Entry(paper, now(), False)])

"""A 1,000-paper library through `/library export` on the loopback Discord (issue 26, g).

Discord takes one upload up to the interaction's `attachment_size_limit` (10 MiB unless the
server is boosted), at most 10 attachments per message and 25 MiB per request. An export that
fits is one file; a larger one is several files on one message, each complete in its format;
one too large even for that is a clear refusal. The 1,000 saved papers go in through the store,
not by clicking Save; lowering `EXPORT_MAX_BYTES` stands in for a larger library.
"""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import pytest_asyncio
from pybtex.database import parse_string

from bot.app.client import PaperBot
from bot.config import SearchSettings
from bot.library import actions, export
from bot.library.store import Library
from bot.papers.records import Link, Paper
from bot.search.engine import SearchEngine
from bot.storage.store import Storage
from tests.app.helpers import TOKEN, answered, make_bot, make_settings
from tests.fakediscord import BotConnection, FakeDiscord

PAPERS = 1000
DISCORD_FILES = 10  # attachments on one message
DISCORD_REQUEST = 25 * 1024 * 1024  # one message's request


def _paper(i: int) -> Paper:
    # Every fourth paper carries its source's own BibTeX, as Paper Copilot lists do.
    own = f"@inproceedings{{src{i:04d},\n  title = {{Source title {i}}},\n  year = {{2026}}\n}}"
    return Paper(
        id=f"big/{i:04d}",
        title=f"Sparse attention study number {i}",
        abstract=" ".join(f"word{(i * 7 + j) % 97}" for j in range(150)),
        venue="ICML 2026",
        year=2026,
        authors=tuple(f"Author{j} Surname{i}" for j in range(5)),
        links=(Link("page", f"https://openreview.net/forum?id=p{i}"),),
        bibtex=own if i % 4 == 0 else "",
    )


@pytest.fixture(scope="module")
def engine() -> SearchEngine:
    return SearchEngine([_paper(i) for i in range(PAPERS)], settings=SearchSettings())


@pytest.fixture(scope="module")
def sizes(engine: SearchEngine) -> dict[str, int]:
    """Each format's size for the whole library in one file, measured once."""
    listed = [export.Entry(p, datetime(2026, 1, 1, tzinfo=UTC), False) for p in engine.papers]
    return {fmt: len(export.export(listed, fmt).encode()) for fmt in export.FORMATS}


@pytest_asyncio.fixture
async def env(
    fake_discord: FakeDiscord,
    connect_bot: Callable[..., Awaitable[BotConnection]],
    engine: SearchEngine,
    tmp_path: Any,
) -> AsyncIterator[tuple[FakeDiscord, PaperBot]]:
    storage = await Storage.open(str(tmp_path / "bot.sqlite3"))
    store = Library(storage)
    base = datetime(2026, 1, 1, tzinfo=UTC)
    for i, paper in enumerate(engine.papers):
        await store.save(int(fake_discord.alice.id), paper.id, base + timedelta(minutes=i))
    bot = make_bot(make_settings(fake_discord), engine, storage)
    await connect_bot(bot, TOKEN)
    yield fake_discord, bot
    await storage.close()


async def _export(fake: FakeDiscord, fmt: str) -> Any:
    """The answer with the files: the callback, or the edit after "thinking…" when building
    the export took longer than `defer_after` (a busy test machine)."""
    handle = await fake.slash("library export", {"format": fmt})
    reply = await answered(handle, ephemeral=True)
    return reply if reply.type == 4 else await handle.edit(timeout=30)


def _within_discord(reply: Any, limit: int) -> None:
    assert 1 <= len(reply.uploads) <= DISCORD_FILES
    assert all(len(u.data) <= limit for u in reply.uploads)
    assert sum(len(u.data) for u in reply.uploads) < DISCORD_REQUEST
    names = [a["filename"] for a in reply.message["attachments"]]
    assert names == [u.filename for u in reply.uploads]


async def test_a_thousand_paper_export_is_one_file_within_the_limit(
    env: tuple[FakeDiscord, PaperBot],
) -> None:
    fake, _bot = env
    reply = await _export(fake, "bibtex")
    assert reply.content == f"Your library as bibtex: {PAPERS} papers."
    _within_discord(reply, actions.EXPORT_MAX_BYTES)
    [upload] = reply.uploads
    assert upload.filename == "library.bib"
    db = parse_string(upload.data.decode(), "bibtex")
    assert len(db.entries) == PAPERS
    assert "src0000" in db.entries  # a source's own entry kept its key


@pytest.mark.parametrize("fmt", ["bibtex", "csv", "markdown"])
async def test_a_thousand_paper_export_over_the_limit_comes_as_several_files(
    env: tuple[FakeDiscord, PaperBot],
    monkeypatch: pytest.MonkeyPatch,
    sizes: dict[str, int],
    fmt: str,
) -> None:
    fake, _bot = env
    limit = sizes[fmt] // 4 + 1
    monkeypatch.setattr(actions, "EXPORT_MAX_BYTES", limit)
    reply = await _export(fake, fmt)
    _within_discord(reply, limit)
    count = len(reply.uploads)
    assert 4 <= count <= 6
    assert reply.content.startswith(f"Your library as {fmt}: {PAPERS} papers, in {count} files")
    ext = {"bibtex": "bib", "csv": "csv", "markdown": "md"}[fmt]
    assert [u.filename for u in reply.uploads] == [
        f"library-{n}-of-{count}.{ext}" for n in range(1, count + 1)
    ]
    texts = [u.data.decode() for u in reply.uploads]
    if fmt == "bibtex":
        keys = [k.lower() for text in texts for k in parse_string(text, "bibtex").entries]
        assert len(keys) == len(set(keys)) == PAPERS
    elif fmt == "csv":
        rows = [r for text in texts for r in csv.DictReader(io.StringIO(text, newline=""))]
        assert len({r["id"] for r in rows}) == PAPERS
    else:
        assert all(text.startswith("# Reading list\n") for text in texts)
        assert sum(text.count("\n- [ ] ") for text in texts) == PAPERS


async def test_a_library_too_large_even_in_several_files_is_refused_clearly(
    env: tuple[FakeDiscord, PaperBot], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, _bot = env
    monkeypatch.setattr(actions, "EXPORT_MAX_BYTES", 20_000)  # 10 files of it hold ~100 papers
    reply = await _export(fake, "bibtex")
    assert reply.uploads == []
    text = reply.embed["description"]
    assert "too large" in text
    assert "10 files" in text
    assert "/library remove" in text


async def test_a_slow_export_is_deferred_then_its_files_replace_the_placeholder(
    env: tuple[FakeDiscord, PaperBot], monkeypatch: pytest.MonkeyPatch, sizes: dict[str, int]
) -> None:
    fake, bot = env
    bot.defer_after = 0.0  # every export counts as slow: "thinking…" first
    limit = sizes["csv"] // 2 + 1
    monkeypatch.setattr(actions, "EXPORT_MAX_BYTES", limit)
    handle = await fake.slash("library export", {"format": "csv"})
    await answered(handle, type=5, ephemeral=True)
    edit = await handle.edit(timeout=30)
    count = len(edit.uploads)
    assert count in (2, 3)
    assert edit.content.startswith(f"Your library as csv: {PAPERS} papers, in {count} files")
    _within_discord(edit, limit)
    texts = [u.data.decode() for u in edit.uploads]
    rows = [r for text in texts for r in csv.DictReader(io.StringIO(text, newline=""))]
    assert sorted(r["id"] for r in rows) == sorted(p.id for p in bot.engine.papers)

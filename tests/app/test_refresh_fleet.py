"""The bot's refresh (bot/app/refresh.py) on a fleet: two Refreshers on one PostgreSQL with
corpus files of their own fetch the scheduled slot once, both reload the same papers, and
`/admin status` says who fetched; a third that was down catches up when its loop starts.
On SQLite there is no fleet side: the refresh is as it was.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.app.client import PaperBot
from bot.app.refresh import Refresher
from bot.app.refreshstate import JobProgress
from bot.config import FetchJob, Settings, SourcesSettings, load_settings
from bot.search.engine import SearchEngine
from bot.sources.election import Election, Lease
from bot.sources.shared import SharedSources, shared_sources
from bot.storage.store import Storage
from tests.app.exts.daily.support import SteppedClock, until
from tests.app.helpers import TOKEN, make_bot
from tests.fakediscord import FakeDiscord
from tests.fakesources import FakeOpenReview, note
from tests.pg import PgServer

VENUE = "ICML.cc/2026/Conference"
SLOT = datetime(2026, 12, 2, 6, 0, tzinfo=UTC)


@dataclass
class Outcome:
    source: str


@dataclass
class Reloads:
    """The reloader's part a refresh uses: who asked for a reload, in turn."""

    asked: list[str] = field(default_factory=list)
    current: str | None = None

    async def reload_in_turn(self, source: str) -> Outcome:
        self.asked.append(source)
        return Outcome(source)


@dataclass
class Host:
    settings: Settings
    reloader: Reloads = field(default_factory=Reloads)


@pytest.fixture
async def openreview() -> AsyncIterator[FakeOpenReview]:
    server = FakeOpenReview([note(f"f{i}", title=f"Agents {i}") for i in range(5)])
    await server.start()
    yield server
    await server.stop()


def settings_for(folder: Path, url: str) -> Settings:
    folder.mkdir(exist_ok=True)
    job = FetchJob("openreview", folder / "icml.jsonl", venue=VENUE)
    sources = SourcesSettings(
        openreview_url=url,
        max_retries=1,
        retry_base_seconds=0.01,
        lease_seconds=1,
        refresh_at=("06:00",),
        fetch=(job,),
    )
    return replace(Settings(), sources=sources)


def ids(settings: Settings) -> list[str]:
    out = settings.sources.fetch[0].out
    return sorted(json.loads(line)["id"] for line in out.read_text().splitlines())


async def test_two_refreshers_fetch_the_slot_once_and_both_reload(
    pg_server: PgServer, openreview: FakeOpenReview, tmp_path: Path
) -> None:
    url = pg_server.fresh_database_url()
    stores = [await Storage.open(url) for _ in range(3)]
    try:
        hosts = [Host(settings_for(tmp_path / n, openreview.url)) for n in "abc"]
        refreshers = [Refresher(h) for h in hosts]  # type: ignore[arg-type]
        for refresher, store, name in zip(refreshers, stores, "abc", strict=True):
            refresher.shared = SharedSources(store, refresher.host.settings.sources, holder=name)
            refresher.next_at = SLOT
        a, b, c = refreshers
        await asyncio.gather(a.refresh("schedule"), b.refresh("schedule"))
        assert len(openreview.requests) == 1
        assert (
            ids(a.host.settings) == ids(b.host.settings) == [f"openreview:f{i}" for i in range(5)]
        )
        label = f"openreview {VENUE}"
        texts = sorted(r.sources[label].text for r in (a, b))
        assert texts[0].startswith(f"{label}: 5 of 5 fetched")
        assert texts[1] == f"{label}: fetched by another process"
        assert all(r.host.reloader.asked == ["refresh (schedule)"] for r in (a, b))

        c.start()  # down during the refresh: its loop catches up first
        async with asyncio.timeout(10):
            while not c.host.reloader.asked:
                await asyncio.sleep(0.01)
        await c.stop()
        assert c.host.reloader.asked == ["catch-up"]
        assert ids(c.host.settings) == ids(a.host.settings)
        assert len(openreview.requests) == 1
    finally:
        for store in stores:
            await store.close()


async def test_on_sqlite_there_is_no_fleet_side(tmp_path: Path) -> None:
    store = await Storage.open(str(tmp_path / "bot.sqlite3"))
    try:
        assert shared_sources(store, settings_for(tmp_path, "http://x").sources) is None
    finally:
        await store.close()


async def test_a_bot_on_postgresql_catches_up_at_start_and_serves_the_papers(
    fake_discord: FakeDiscord, connect_bot, pg_server: PgServer, tmp_path: Path
) -> None:
    """The client wires the fleet side in on PostgreSQL: papers another machine fetched while
    this bot was down are pulled into its own corpus file and served after the reload."""
    url = pg_server.fresh_database_url()
    seed = {"id": "seed/1", "title": "Seed paper on kernels", "abstract": "A static paper."}
    (tmp_path / "seed.jsonl").write_text(json.dumps(seed) + "\n", encoding="utf-8")
    (tmp_path / "icml.jsonl").write_text("", encoding="utf-8")  # fetched before, empty then
    config = tmp_path / "config" / "settings.toml"
    config.parent.mkdir()
    config.write_text(
        '[corpus]\nfiles = ["seed.jsonl"]\nindex_dir = "idx"\n'
        '[sources]\nrefresh_at = ["06:00"]\n'
        f'[[sources.fetch]]\nkind = "openreview"\nvenue = "{VENUE}"\nout = "icml.jsonl"\n',
        encoding="utf-8",
    )
    settings = load_settings(config, env={})
    settings = replace(settings, secrets=replace(settings.secrets, discord_token=TOKEN))
    storage = await Storage.open(url)
    elsewhere = Election(storage, "other-machine", 60)
    lease = await elsewhere.claim(f"openreview {VENUE}", "schedule 2026-12-01T06:00")
    assert isinstance(lease, Lease)
    fetched = [
        {"id": f"openreview:f{i}", "title": f"Fetched paper {i} about agents", "abstract": "A."}
        for i in range(2)
    ]
    await elsewhere.publish(lease, fetched)
    bot = make_bot(settings, SearchEngine.load(settings), storage)
    bot.refresher.clock = SteppedClock(datetime(2026, 12, 1, 12, 0, tzinfo=UTC))
    await connect_bot(bot, TOKEN)
    try:
        assert bot.refresher.shared is not None
        await until(lambda: _served(bot, 3), what="the caught-up corpus to be served")
        assert bot.reloader.last is not None
        assert bot.reloader.last.source == "catch-up"
        assert set(bot.reloader.last.added) == {"openreview:f0", "openreview:f1"}
    finally:
        await bot.close()
        await storage.close()


async def _served(bot: PaperBot, count: int) -> bool:
    return len(bot.engine.papers) == count


def test_a_source_fetched_elsewhere_reads_as_such_in_status() -> None:
    progress = JobProgress()
    progress.fetched_by = "host-b:4242:9f3a1c"
    assert progress.text() == "fetched by another process (host-b:4242:9f3a1c); waiting for it"
    progress.fetched_by = None
    assert progress.text() == "fetching page 1"

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

from bot.app.refresh import Refresher
from bot.config import FetchJob, Settings, SourcesSettings
from bot.sources.shared import SharedSources, shared_sources
from bot.storage.store import Storage
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

"""The fetch election and the shared records (bot/sources/election.py, shared.py) on both
backends: one claimant wins a slot, a done slot is only pulled, a lapsed lease is taken over,
a taken-over holder's late publish is refused, and pulls apply records to a local file by id.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.config import FetchJob, SourcesSettings
from bot.sources import shared as shared_module
from bot.sources.election import Done, Election, Fenced, Held, Lease
from bot.sources.shared import Applied, Baseline, SharedSources, apply
from bot.storage.store import Storage

T0 = datetime(2026, 12, 2, 6, 0, tzinfo=UTC)
SOURCE = "openreview ICML.cc/2026/Conference"


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def storage(database_url: str):
    store = await Storage.open(database_url)
    yield store
    await store.close()


def paper(pid: str, title: str = "") -> dict:
    return {"id": pid, "title": title or f"Paper {pid}", "abstract": "x", "added": "t"}


async def test_one_claimant_wins_and_the_slot_is_then_only_pulled(storage: Storage) -> None:
    clock = Clock()
    a, b = Election(storage, "a", 10, clock), Election(storage, "b", 10, clock)
    won = await a.claim(SOURCE, "06:00")
    assert isinstance(won, Lease)
    assert won.generation == 1
    held = await b.claim(SOURCE, "06:00")
    assert isinstance(held, Held)
    assert held.holder == "a"
    assert await a.publish(won, [paper("p1"), paper("p2")]) == 2
    assert isinstance(await b.claim(SOURCE, "06:00"), Done)
    assert isinstance(await a.claim(SOURCE, "06:00"), Done)
    assert [p.seq for p in await b.published(SOURCE, 0, 10)] == [1, 2]
    # The next slot is a new election; a republished paper replaces its older row.
    again = await b.claim(SOURCE, "18:00")
    assert isinstance(again, Lease)
    assert again.generation == 2
    assert await b.publish(again, [paper("p1", "Renamed")]) == 3
    rows = await b.published(SOURCE, 0, 10)
    assert [(p.seq, p.record["title"]) for p in rows] == [(2, "Paper p2"), (3, "Renamed")]
    assert [p.seq for p in await b.published(SOURCE, 2, 10)] == [3]


async def test_a_lapsed_lease_is_taken_over_and_the_old_holder_fenced(storage: Storage) -> None:
    clock = Clock()
    a, b = Election(storage, "a", 10, clock), Election(storage, "b", 10, clock)
    first = await a.claim(SOURCE, "06:00")
    assert isinstance(first, Lease)
    clock.now += timedelta(seconds=5)
    assert await a.renew(first)  # renewed: still held at 11 s
    clock.now += timedelta(seconds=6)
    assert isinstance(await b.claim(SOURCE, "06:00"), Held)
    clock.now += timedelta(seconds=10)  # no renewal: the holder is taken for dead
    second = await b.claim(SOURCE, "06:00")
    assert isinstance(second, Lease)
    assert second.generation == first.generation + 1
    assert not await a.renew(first)
    with pytest.raises(Fenced):
        await a.publish(first, [paper("late")])
    assert await b.publish(second, [paper("p1")]) == 1
    assert [p.record["id"] for p in await a.published(SOURCE, 0, 10)] == ["p1"]


def test_apply_updates_by_id_and_appends_the_new(tmp_path: Path) -> None:
    out = tmp_path / "icml.jsonl"
    out.write_text(json.dumps(paper("p1")) + "\n" + json.dumps(paper("p2")) + "\n")
    got = apply(out, [paper("p2", "Better title"), paper("p3"), paper("p1")])
    assert got.added == ("p3",)
    assert got.updated == 1
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["id"], r["title"]) for r in lines] == [
        ("p1", "Paper p1"),
        ("p2", "Better title"),
        ("p3", "Paper p3"),
    ]
    assert not apply(out, [paper("p3")]).changed


async def test_pull_catches_up_from_the_last_applied_sequence(
    storage: Storage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shared_module, "PULL_PAGE", 1)  # pages of one, files written per two
    monkeypatch.setattr(shared_module, "APPLY_BATCH", 2)
    settings = SourcesSettings(lease_seconds=5)
    fetcher = Election(storage, "fetcher", 5)
    job = FetchJob("openreview", tmp_path / "icml.jsonl", venue="ICML.cc/2026/Conference")
    for slot, ids in (("06:00", ["p1", "p2"]), ("18:00", ["p3"])):
        lease = await fetcher.claim(job.label, slot)
        assert isinstance(lease, Lease)
        await fetcher.publish(lease, [paper(i) for i in ids])
    shared = SharedSources(storage, settings, holder="late")
    assert await shared.catch_up([job])
    assert Applied.load(job.out) == 3
    assert [json.loads(x)["id"] for x in job.out.read_text().splitlines()] == ["p1", "p2", "p3"]
    assert not await shared.catch_up([job])  # nothing new
    Applied.save(job.out, 99)  # a file that followed another database: read everything again
    assert not (await shared.pull(job)).changed
    assert Applied.load(job.out) == 3


async def test_a_fetch_stopped_before_publishing_is_published_by_the_next(
    storage: Storage, tmp_path: Path
) -> None:
    """The first fetch writes its pages, then loses its lease (taken over here by raising the
    generation): it stops unpublished. The retry finds nothing new at the source, yet publishes
    the pages the first one left in the file, which no other process has."""
    job = FetchJob("openreview", tmp_path / "icml.jsonl", venue="ICML.cc/2026/Conference")
    shared = SharedSources(storage, SourcesSettings(lease_seconds=0.2), holder="me")
    calls: list[int] = []

    async def fetch() -> int:
        calls.append(len(calls))
        if len(calls) == 1:
            apply(job.out, [paper("p1"), paper("p2")])
            await storage.run(
                lambda c: c.execute("UPDATE source_leases SET generation = generation + 1")
            )
            await asyncio.sleep(30)  # ended by the lost lease
        return len(calls)

    got = await asyncio.wait_for(shared.fetch(job, "06:00", fetch), 10)
    assert got.result == 2
    assert [p.record["id"] for p in await shared.election.published(job.label, 0, 10)] == [
        "p1",
        "p2",
    ]
    assert Applied.load(job.out) == 2
    assert not Baseline.path_for(job.out).exists()


async def test_a_process_waits_for_the_holder_then_pulls(storage: Storage, tmp_path: Path) -> None:
    """The slot is held elsewhere: this process says whom it waits for (`/admin status`),
    fetches nothing, and pulls what the holder published once it is done."""
    job = FetchJob("openreview", tmp_path / "icml.jsonl", venue="ICML.cc/2026/Conference")
    other = Election(storage, "other", 60)
    lease = await other.claim(job.label, "06:00")
    assert isinstance(lease, Lease)
    shared = SharedSources(storage, SourcesSettings(lease_seconds=0.2), holder="me")
    heard: list[str | None] = []

    async def fetch() -> int:
        raise AssertionError("the holder fetches this slot")

    task = asyncio.ensure_future(shared.fetch(job, "06:00", fetch, heard.append))
    async with asyncio.timeout(10):
        while not heard:
            await asyncio.sleep(0.01)
    assert heard[0] == "other"
    await other.publish(lease, [paper("p1")])
    got = await asyncio.wait_for(task, 10)
    assert got.result is None
    assert got.pulled.added == ("p1",)
    assert got.text.endswith("fetched by another process")
    assert heard[-1] is None

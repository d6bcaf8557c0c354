"""The refresh in the running bot answers at once, shows where it is, ends at its time bound,
and meets a live reload without losing papers (issue 26, item 11 and "not yet tried" e).

- A source answering 429 with Retry-After: 600 ends at `[sources] max_fetch_seconds`, the
  owner's `/admin refresh` is answered at once (never "thinking…" past the 15-minute token),
  and `/admin status` shows each source's state (fetching, waiting until HH:MM:SS UTC, done,
  failed: why). The owner gets a follow-up when it is done, only while the token is valid.
- `/admin refresh` during `/admin reload`, and the scheduled refresh during a reload (SIGHUP):
  one reload runs at a time; the refresh's reload waits its turn, a second `/admin reload` is
  refused with a clear message, a SIGHUP meanwhile is queued (`Reloader._pending`), and the
  refresh's new papers are served once both are done.

Everything crosses the real discord.py client and the loopback Discord, and the real fetch
client and the loopback OpenReview. The fetch's waits are held by `Gate` and cost no time.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.app.client import PaperBot
from bot.app.refresh import Refresher
from bot.app.refreshstate import JobProgress
from bot.app.reload import Reloader
from bot.config import Settings, load_settings
from bot.search.engine import SearchEngine
from bot.storage.store import Storage
from tests.app.exts.daily.support import SteppedClock, until
from tests.app.helpers import TOKEN, answered, make_bot
from tests.fakediscord import FakeDiscord
from tests.fakesources import FakeOpenReview, Fault, note

VENUE = "ICML.cc/2026/Conference"
LABEL = f"openreview {VENUE}"
OTHER = "ICLR.cc/2026/Conference"  # a second source, with nothing at the stand-in
FETCHED = 7


class Gate:
    """The fetch's waits, each held until the test lets it pass; the monotonic clock the
    fetch's time bound reads moves by exactly the waits taken."""

    def __init__(self) -> None:
        self.now = 0.0
        self.asked: list[float] = []
        self.asleep = asyncio.Event()
        self._go = asyncio.Event()

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.asked.append(seconds)
        self.asleep.set()
        await self._go.wait()
        self._go.clear()
        self.asleep.clear()
        self.now += seconds

    def release(self) -> None:
        self._go.set()


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def configure(
    tmp_path: Path, server: FakeOpenReview, sources: str = "", *, venues: tuple[str, ...] = ()
) -> Settings:
    """Three seed papers, and one OpenReview source fetched before (empty then), then one
    for each of `venues` (empty at the stand-in)."""
    write_jsonl(
        tmp_path / "seed.jsonl",
        [{"id": f"seed/{i}", "title": f"Seed paper {i}", "venue": "ICML 2026"} for i in range(3)],
    )
    (tmp_path / "icml.jsonl").write_text("", encoding="utf-8")
    config = tmp_path / "settings.toml"
    config.write_text(
        '[corpus]\nfiles = ["seed.jsonl"]\nindex_dir = "idx"\n'
        '[storage]\ndatabase = ":memory:"\n'
        f"[sources]\nmax_retries = 3\nretry_base_seconds = 0.01\n{sources}\n"
        f'[[sources.fetch]]\nkind = "openreview"\nvenue = "{VENUE}"\nout = "icml.jsonl"\n'
        + "".join(
            f'[[sources.fetch]]\nkind = "openreview"\nvenue = "{v}"\nout = "v{i}.jsonl"\n'
            for i, v in enumerate(venues)
        ),
        encoding="utf-8",
    )
    return load_settings(config, env={"PAPERBOT_OPENREVIEW_URL": server.url})


@pytest.fixture
async def openreview():
    server = FakeOpenReview([note(f"f{i}", title=f"Fetched paper {i}") for i in range(FETCHED)])
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def storage():
    store = await Storage.open(":memory:")
    yield store
    await store.close()


async def start_bot(
    fake: FakeDiscord, connect_bot, settings: Settings, storage: Storage
) -> tuple[PaperBot, Gate]:
    settings = replace(
        settings,
        secrets=replace(settings.secrets, discord_token=TOKEN, owner_ids=(int(fake.owner.id),)),
    )
    bot = make_bot(settings, SearchEngine.load(settings), storage)
    gate = Gate()
    bot.refresher.sleep = gate.sleep
    bot.refresher.monotonic = gate.monotonic
    await connect_bot(bot, TOKEN)
    return bot, gate


async def status_text(fake: FakeDiscord) -> str:
    reply = await answered(await fake.slash("admin status", user=fake.owner), type=4)
    return json.dumps(reply.embed, ensure_ascii=False)


async def followups_done(bot: PaperBot) -> None:
    """The refresh and the cog's follow-up after it have both finished."""
    assert bot.refresher.task is not None
    await asyncio.wait_for(asyncio.shield(bot.refresher.task), 10)
    cog = bot.get_cog("Admin")
    await asyncio.wait_for(asyncio.gather(*cog.followups), 10)  # type: ignore[union-attr]


# -- item 11: a Retry-After of 600 s, answered at once, shown in /admin status -----------------


async def test_a_retry_after_of_600_s_ends_at_the_bound_and_status_shows_the_wait(
    fake_discord: FakeDiscord, storage, connect_bot, openreview: FakeOpenReview, tmp_path
) -> None:
    openreview.fail(Fault(429, {"Retry-After": "30"}), Fault(429, {"Retry-After": "600"}))
    settings = configure(tmp_path, openreview, "max_fetch_seconds = 60", venues=(OTHER,))
    bot, gate = await start_bot(fake_discord, connect_bot, settings, storage)

    handle = await fake_discord.slash("admin refresh", user=fake_discord.owner)
    started = await answered(handle, type=4, ephemeral=True)  # at once: no "thinking…"
    assert "Refresh started: 2 sources; `/admin status` shows progress" in json.dumps(started.embed)
    await asyncio.wait_for(gate.asleep.wait(), 5)
    assert gate.asked == [30.0]  # the first Retry-After fits in the 60 s bound: waited

    waiting = await status_text(fake_discord)
    assert f"**{LABEL}**" in waiting
    assert re.search(r"waiting \(retry or Retry-After\) until \d\d:\d\d:\d\d UTC", waiting)
    assert "Refresh running" in waiting
    assert f"⏳ **openreview {OTHER}**: queued" in waiting

    again = await answered(
        await fake_discord.slash("admin refresh", user=fake_discord.owner), type=4, ephemeral=True
    )
    assert "already running" in json.dumps(again.embed)

    gate.release()  # the retry gets Retry-After: 600, past the bound: the fetch ends
    follow = await handle.followup(timeout=5)
    text = json.dumps(follow.embed, ensure_ascii=False)
    assert follow.ephemeral
    assert "1 source failed" in follow.embed["title"]
    assert "max_fetch_seconds" in text
    assert gate.asked == [30.0]  # the 600 s were never waited
    assert [r.status for r in openreview.requests if VENUE in r.query.values()] == [429, 429]

    failed = await status_text(fake_discord)
    assert f"✅ **openreview {OTHER}**" in failed  # the next source ran all the same
    assert f"❌ **{LABEL}**" in failed
    assert "failed: " in failed
    assert "60 s" in failed
    assert "max_fetch_seconds" in failed
    assert "Refresh running" not in failed
    assert len(bot.engine.papers) == 3  # the old corpus serves on


async def test_the_owner_hears_back_only_while_the_token_is_valid(
    fake_discord: FakeDiscord, storage, connect_bot, openreview: FakeOpenReview, tmp_path
) -> None:
    """Done 16 minutes after the command (a Retry-After of 600 s within the bound, and slow
    answers): no follow-up on the expired token; `/admin status` says it is done and what it
    brought."""
    openreview.fail(Fault(429, {"Retry-After": "600"}))
    settings = configure(tmp_path, openreview)
    bot, gate = await start_bot(fake_discord, connect_bot, settings, storage)
    clock = SteppedClock(datetime(2026, 12, 1, 6, 0, tzinfo=UTC))
    bot.refresher.clock = clock

    handle = await fake_discord.slash("admin refresh", user=fake_discord.owner)
    await answered(handle, type=4, ephemeral=True)
    await asyncio.wait_for(gate.asleep.wait(), 5)
    assert "waiting (retry or Retry-After) until 06:10:00 UTC" in await status_text(fake_discord)
    clock.advance(minutes=16)
    gate.release()
    await followups_done(bot)
    assert [r.kind for r in handle.replies] == ["callback"]  # no follow-up past the token
    assert len(bot.engine.papers) == 3 + FETCHED
    done = await status_text(fake_discord)
    assert f"✅ **{LABEL}**" in done
    assert "done: " in done
    assert f"{FETCHED} new" in done


async def test_the_owner_hears_back_when_done_in_time(
    fake_discord: FakeDiscord, storage, connect_bot, openreview: FakeOpenReview, tmp_path
) -> None:
    settings = configure(tmp_path, openreview)
    bot, _gate = await start_bot(fake_discord, connect_bot, settings, storage)
    handle = await fake_discord.slash("admin refresh", user=fake_discord.owner)
    await answered(handle, type=4, ephemeral=True)
    follow = await handle.followup(timeout=10)
    assert follow.embed["title"] == "Sources refreshed"
    assert f"{FETCHED} new paper(s)" in json.dumps(follow.embed)
    assert len(bot.engine.papers) == 3 + FETCHED


def test_a_fetch_in_progress_reads_as_its_page_and_papers() -> None:
    progress = JobProgress()
    assert progress.text() == "fetching page 1"
    progress.total(2500)
    progress.advance(0)  # where it resumed
    assert progress.text() == "fetching page 1 (0 of 2,500 papers)"
    progress.advance(1000)  # page 1 saved
    assert progress.text() == "fetching page 2 (1,000 of 2,500 papers)"
    progress.waiting_until = datetime(2026, 12, 1, 6, 10, 5, tzinfo=UTC)
    assert progress.text() == "page 2: waiting (retry or Retry-After) until 06:10:05 UTC"


# -- "not yet tried" e: a refresh meets a reload -----------------------------------------------


@dataclass
class SlowLoads:
    """A reload's load that reads the corpus as it is when the reload starts, and holds the
    first one until released; it counts how many loads ran at once."""

    started: threading.Event = field(default_factory=threading.Event)
    go: threading.Event = field(default_factory=threading.Event)
    papers: list[int] = field(default_factory=list)
    running: int = 0
    most: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, settings: Settings) -> SearchEngine:
        engine = SearchEngine.load(settings)
        with self.lock:
            self.papers.append(len(engine.papers))
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            if len(self.papers) == 1:
                self.started.set()
                assert self.go.wait(10)
        finally:
            with self.lock:
                self.running -= 1
        return engine


async def test_admin_refresh_during_admin_reload_serves_the_new_papers_after_both(
    fake_discord: FakeDiscord, storage, connect_bot, openreview: FakeOpenReview, tmp_path
) -> None:
    settings = configure(tmp_path, openreview)
    bot, _gate = await start_bot(fake_discord, connect_bot, settings, storage)
    loads = SlowLoads()
    bot.reloader.load = loads
    added: list[tuple[tuple[str, ...], str]] = []

    async def on_papers_added(paper_ids: tuple[str, ...], source: str) -> None:
        added.append((paper_ids, source))

    bot.add_listener(on_papers_added)

    reload = await fake_discord.slash("admin reload", user=fake_discord.owner)
    await answered(reload, type=5, ephemeral=True)
    assert await asyncio.to_thread(loads.started.wait, 5)

    refresh = await fake_discord.slash("admin refresh", user=fake_discord.owner)
    await answered(refresh, type=4, ephemeral=True)

    async def queued() -> bool:  # fetched; its reload waits for the one running
        return LABEL in bot.refresher.sources

    await until(queued, what="the refresh to fetch")
    text = await status_text(fake_discord)
    assert "waiting for the reload by /admin reload" in text
    assert f"✅ **{LABEL}**" in text

    second = await fake_discord.slash("admin reload", user=fake_discord.owner)
    await answered(second, type=5, ephemeral=True)
    refused = (await second.edit(timeout=5)).body["embeds"][0]["description"]
    assert "already running" in refused
    assert "try again when it has finished" in refused

    loads.go.set()
    first = (await reload.edit(timeout=10)).body["embeds"][0]
    assert first["title"] == "Corpus reloaded"
    follow = await refresh.followup(timeout=10)
    assert follow.embed["title"] == "Sources refreshed"
    assert f"{FETCHED} new paper(s)" in json.dumps(follow.embed)

    assert loads.papers == [3, 3 + FETCHED]  # one reload after the other, nothing lost
    assert loads.most == 1
    assert len(bot.engine.papers) == 3 + FETCHED
    await until(lambda: _true(added), what="on_papers_added")
    assert added == [(tuple(f"openreview:f{i}" for i in range(FETCHED)), added[0][1])]
    assert added[0][1].startswith("refresh (/admin refresh by ")


@pytest.mark.parametrize("signal_meanwhile", [False, True], ids=["alone", "with-a-sighup"])
async def test_the_scheduled_refresh_during_a_reload_waits_its_turn(
    openreview: FakeOpenReview, tmp_path, caplog: pytest.LogCaptureFixture, signal_meanwhile: bool
) -> None:
    settings = configure(tmp_path, openreview, 'refresh_at = ["06:00"]')

    class Host:
        def __init__(self) -> None:
            self.settings = settings
            self.engine = SearchEngine.load(settings)
            self.reloader = Reloader(self, load=loads)

    loads = SlowLoads()
    host = Host()
    clock = SteppedClock(datetime(2026, 12, 1, 5, 0, tzinfo=UTC))
    refresher = Refresher(host, clock=clock)  # type: ignore[arg-type]
    refresher.start()
    caplog.set_level(logging.INFO)
    try:
        await clock.settled()
        sighup = host.reloader.request("SIGHUP")
        assert sighup is not None
        assert await asyncio.to_thread(loads.started.wait, 5)
        clock.advance_to(datetime(2026, 12, 1, 6, 0, tzinfo=UTC))  # the refresh is due

        async def waiting() -> bool:
            return refresher.stage() == "waiting for the reload by SIGHUP to finish"

        await until(waiting, what="the refresh's reload to wait its turn")
        if signal_meanwhile:  # queued, coalesced into one more reload (`_pending`)
            assert host.reloader.request("SIGHUP") is None
            assert host.reloader.request("SIGHUP") is None
            assert host.reloader._pending == ("SIGHUP", None)
        loads.go.set()
        await sighup

        async def settled() -> bool:
            return refresher.last_reload is not None and not refresher.busy

        await until(settled, what="the refresh to end")
        await until(lambda: _idle(host.reloader), what="the queued reloads to end")
        assert refresher.last_reload is not None
        assert refresher.last_reload.ok, refresher.last_reload.reasons
        assert len(refresher.last_reload.added) == FETCHED
        assert len(host.engine.papers) == 3 + FETCHED
        # The SIGHUP's reload, the refresh's, then the one queued meanwhile: one at a time.
        assert loads.papers == [3, 3 + FETCHED] + ([3 + FETCHED] if signal_meanwhile else [])
        assert loads.most == 1
        assert host.reloader._pending is None
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
        await clock.settled()
        assert refresher.next_at == datetime(2026, 12, 2, 6, 0, tzinfo=UTC)
    finally:
        loads.go.set()
        await refresher.stop()


async def _true(items: list) -> bool:
    return bool(items)


async def _idle(reloader: Reloader) -> bool:
    return not reloader.running and not reloader._tasks and reloader._pending is None

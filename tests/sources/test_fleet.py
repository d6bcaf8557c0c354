"""Issue 25, across machines: processes on one PostgreSQL that share no disk fetch each source
once per refresh slot and all end with the same corpus.

A fleet process is `tests/sources/fleetproc.py` (the refresh's fleet side over the real fetch
jobs) with a folder of its own: in a subprocess where it must be a process of its own (two
processes at once, one killed with SIGKILL), else run in this one (a process start costs a
second of CPU). Both sources are loopback stand-ins in this process, whose request logs count
the fetches. Checked: one fetch per source per slot and
identical corpus files; a fetcher killed with SIGKILL mid-fetch is taken over once its lease
runs out, with no duplicate; a process that was down catches up at start without fetching;
PostgreSQL killed and restarted mid-fetch ends in a retry, with warnings and no traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from aiohttp import web

from bot.storage.store import Storage
from tests.app.exts.daily.test_database_restart import KillablePg
from tests.fakesources import FakeArxiv, FakeOpenReview, arxiv_entry, note
from tests.pg import PgServer
from tests.sources import fleetproc

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

ROOT = Path(__file__).resolve().parents[2]
VENUE = "ICML.cc/2026/Conference"
FETCHING = "this process fetches it"


class SlowOpenReview(FakeOpenReview):
    """Answers its first request after `first_delay` s: a fetch with a middle to kill in."""

    first_delay = 0.0
    asked = 0  # requests received (`requests` logs only those answered)

    def __init__(self, notes: list) -> None:
        super().__init__(notes)
        self.released = asyncio.Event()  # set at the end: a killed client's answer is dropped

    async def get_notes(self, request: web.Request) -> web.StreamResponse:
        self.asked += 1
        if self.asked == 1 and self.first_delay:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.released.wait(), self.first_delay)
        return await super().get_notes(request)


class Sources:
    def __init__(self) -> None:
        self.openreview = SlowOpenReview([note(f"f{i}", title=f"Agents {i}") for i in range(7)])
        day = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT10:00:00Z")
        self.arxiv = FakeArxiv([arxiv_entry(f"2612.{i:05d}", published=day) for i in range(5)])

    def fetches(self) -> tuple[int, int]:
        return self.openreview.asked, len(self.arxiv.requests)


@pytest.fixture
async def sources() -> AsyncIterator[Sources]:
    found = Sources()
    await found.openreview.start()
    await found.arxiv.start()
    yield found
    found.openreview.released.set()
    await found.openreview.stop()
    await found.arxiv.stop()


class Proc:
    """One fleet process: its folder, and its stderr read as it comes."""

    def __init__(self, proc: asyncio.subprocess.Process, folder: Path) -> None:
        self.proc, self.folder = proc, folder
        self.log: list[str] = []
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.proc.stderr is not None
        async for line in self.proc.stderr:
            self.log.append(line.decode())

    async def logged(self, text: str, timeout: float = 10) -> None:
        async with asyncio.timeout(timeout):
            while not any(text in line for line in self.log):
                assert self.proc.returncode is None, "".join(self.log)
                await asyncio.sleep(0.01)

    async def result(self, timeout: float = 15) -> dict:
        assert self.proc.stdout is not None
        async with asyncio.timeout(timeout):
            out = await self.proc.stdout.read()
            await self.proc.wait()
            await self.reader
        assert self.proc.returncode == 0, "".join(self.log)
        assert "Traceback" not in "".join(self.log)
        return json.loads(out.decode().strip().splitlines()[-1])

    def corpus(self) -> dict[str, dict]:
        return corpus(self.folder)


def corpus(folder: Path) -> dict[str, dict]:
    """Every record of a process's two corpus files, by id; a duplicate id fails."""
    found: dict[str, dict] = {}
    for name in ("icml.jsonl", "arxiv.jsonl"):
        path = folder / name
        for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
            record = json.loads(line)
            assert record["id"] not in found, f"duplicate {record['id']}"
            found[record["id"]] = record
    return found


async def start(url: str, folder: Path, name: str, slot: str, lease: float, s: Sources, *more):
    folder.mkdir(exist_ok=True)
    args = [url, str(folder), name, slot, str(lease), s.openreview.url, s.arxiv.base_url, *more]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.sources.fleetproc",
        *args,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    return Proc(proc, folder)


async def here(url: str, folder: Path, name: str, slot: str, lease: float, s: Sources, *more):
    """The same as a fleet process, in this one (a process start costs a second of CPU)."""
    folder.mkdir(exist_ok=True)
    args = [url, str(folder), name, slot, str(lease), s.openreview.url, s.arxiv.base_url, *more]
    return await fleetproc.main(args)


async def shared_rows(url: str) -> list[str]:
    storage = await Storage.open(url)
    try:
        return await storage.column("SELECT paper_id FROM source_papers ORDER BY seq", ())
    finally:
        await storage.close()


async def test_two_processes_fetch_each_source_once_per_slot_and_agree(
    pg_server: PgServer, sources: Sources, tmp_path: Path
) -> None:
    """A subprocess and this process (a process start costs a second of CPU), each with a
    folder of its own, refresh the same slots at once."""
    url = pg_server.fresh_database_url()
    sources.openreview.first_delay = 0.3  # the two overlap: one waits for the other
    a = await start(url, tmp_path / "a", "a", "06:00", 2, sources)
    rb, ra = await asyncio.gather(here(url, tmp_path / "b", "b", "06:00", 2, sources), a.result())
    assert sources.fetches() == (1, 1)
    assert sorted(ra["fetched"] + rb["fetched"]) == ["arxiv cs.LG", f"openreview {VENUE}"]
    assert a.corpus() == corpus(tmp_path / "b")
    assert len(a.corpus()) == 12

    sources.openreview.notes.append(note("new", title="A paper of the evening"))
    await asyncio.gather(
        here(url, tmp_path / "a", "a2", "18:00", 2, sources),
        here(url, tmp_path / "b", "b2", "18:00", 2, sources),
    )
    assert sources.fetches() == (2, 2)  # one more fetch of each for the new slot
    assert a.corpus() == corpus(tmp_path / "b")
    assert "openreview:new" in a.corpus()

    assert (await here(url, tmp_path / "c", "c", "-", 1, sources, "catch-up"))["changed"]
    assert corpus(tmp_path / "c") == a.corpus()
    assert sources.fetches() == (2, 2)  # caught up from the database, not the sources


async def logged(caplog: pytest.LogCaptureFixture, text: str) -> None:
    async with asyncio.timeout(10):
        while not any(text in r.getMessage() for r in caplog.records):
            await asyncio.sleep(0.01)


def clean(caplog: pytest.LogCaptureFixture) -> None:
    """No traceback and no error: what went wrong was a warning line."""
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


async def test_a_killed_fetcher_is_taken_over_when_its_lease_runs_out(
    pg_server: PgServer, sources: Sources, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot.sources")
    url = pg_server.fresh_database_url()
    sources.openreview.first_delay = 30  # the first fetcher never gets its answer
    a = await start(url, tmp_path / "a", "a", "06:00", 0.6, sources)
    await a.logged(f"openreview {VENUE}: {FETCHING}")
    b = asyncio.ensure_future(here(url, tmp_path / "b", "b", "06:00", 0.6, sources))
    await logged(caplog, f"openreview {VENUE}: fetched by a")  # waits while the lease lives
    a.proc.send_signal(signal.SIGKILL)
    await a.proc.wait()
    result = await asyncio.wait_for(b, 15)
    assert sorted(result["fetched"]) == ["arxiv cs.LG", f"openreview {VENUE}"]
    assert len(corpus(tmp_path / "b")) == 12
    ids = await shared_rows(url)
    assert len(ids) == len(set(ids)) == 12
    assert sources.fetches() == (2, 1)  # the killed request, then the new holder's
    await here(url, tmp_path / "c", "c", "-", 0.6, sources, "catch-up")
    assert corpus(tmp_path / "c") == corpus(tmp_path / "b")
    clean(caplog)


@pytest.fixture(scope="module")
def killable_pg() -> Iterator[KillablePg]:
    server = KillablePg()
    yield server
    server.stop()


async def test_postgresql_restarted_mid_fetch_ends_in_a_clean_retry(
    killable_pg: KillablePg, sources: Sources, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot.sources")
    url = killable_pg.fresh_database_url()
    sources.openreview.first_delay = 1.0
    a = asyncio.ensure_future(here(url, tmp_path / "a", "a", "06:00", 2, sources))
    try:
        await logged(caplog, FETCHING)
        await asyncio.to_thread(killable_pg.kill)
        await asyncio.sleep(0.6)  # a renewal meets the dead server
    finally:
        await asyncio.to_thread(killable_pg.restart)
    result = await asyncio.wait_for(a, 15)
    assert result["ok"] == [True, True]
    assert sorted(result["fetched"]) == ["arxiv cs.LG", f"openreview {VENUE}"]
    outage = ("cannot renew the fetch lease", "cannot publish yet", "cannot be reached")
    warned = [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and r.name.startswith("bot.")
    ]
    assert any(w in m for m in warned for w in outage), warned
    assert all("\n" not in m for m in warned)  # one line each
    clean(caplog)
    assert len(corpus(tmp_path / "a")) == 12
    assert sorted(await shared_rows(url)) == sorted(corpus(tmp_path / "a"))

"""Issue 26: the paper of the day while PostgreSQL is killed (SIGKILL) and started again.

What should happen: the bot never crashes and never posts twice; the day is not skipped. A
storage call that fails is one clear warning line, never a traceback, and the scheduler tries
again on its own with backoff; once the server is back on the same data folder and socket, the
post goes out (or an earlier attempt's post is found and recorded) exactly once.

The server is a PostgreSQL of this module's own (`tests/pg.py`'s is shared by the whole worker
and must not die), with `synchronous_commit` back on: the shared server turns it off for speed,
and a killed server then forgets commits it had acknowledged, which no real deployment does.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import psutil
import pytest
import pytest_asyncio

from bot.daily.tables import DailyTables
from bot.search.engine import SearchEngine
from bot.storage.store import Storage
from tests.app.exts.daily.support import DUE, START, DailyEnv, SteppedClock, until
from tests.fakediscord import FakeDiscord
from tests.pg import PgServer

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

POSTS = "/channels/{id}/messages"
# How long the bot's connection pool waits for a connection before a call fails: 30 s in
# production; here a call that finds no live connection fails as it would, without the wait.
POOL_WAIT = 1.0


class KillablePg(PgServer):
    """A PostgreSQL this module may kill and start again on the same data folder and socket."""

    def __init__(self) -> None:
        super().__init__()
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET synchronous_commit = on")
            conn.execute("SELECT pg_reload_conf()")

    def kill(self) -> None:
        """SIGKILL the postmaster and every backend, as the OOM killer would."""
        postmaster = psutil.Process(self.server.get_pid())
        processes = [postmaster, *postmaster.children(recursive=True)]
        for process in processes:
            process.kill()
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in processes):
            assert time.monotonic() < deadline, "PostgreSQL outlived SIGKILL"
            time.sleep(0.01)

    def restart(self) -> None:
        """Start it again on the same data folder: crash recovery, then the same socket.

        The killed postmaster may stay a zombie (nobody reaps it here), which pgserver and
        PostgreSQL would both take for a live server: its stale lock files go first."""
        data = self.server.pgdata
        try:
            running = _alive(psutil.Process(self.server.get_pid()))
        except psutil.NoSuchProcess:
            running = False
        if not running:
            for lock in (data / "postmaster.pid", data / ".s.PGSQL.5432.lock"):
                lock.unlink(missing_ok=True)
        with self.server._lock:
            self.server.ensure_postgres_running()
        assert self.server.get_uri() == self.admin_url


def _alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.fixture(scope="module")
def killable_pg() -> Iterator[KillablePg]:
    server = KillablePg()
    yield server
    server.stop()


@pytest_asyncio.fixture
async def pg_env(
    fake_discord: FakeDiscord,
    connect_bot: Callable[..., Any],
    icml_engine: SearchEngine,
    killable_pg: KillablePg,
) -> AsyncIterator[DailyEnv]:
    url = killable_pg.fresh_database_url()
    env = DailyEnv(fake_discord, icml_engine, SteppedClock(START), url, connect_bot)
    try:
        yield env
    finally:
        try:
            killable_pg.restart()  # a failed test may leave it dead: the bot closes cleanly
        finally:
            await env.stop()


async def test_database_killed_during_the_send_posts_once(
    pg_env: DailyEnv, killable_pg: KillablePg, caplog: pytest.LogCaptureFixture
) -> None:
    """Claimed and sent, then the database dies before 'sent' is recorded: once it is back, the
    scheduler finds its own post by the marker and records it; nothing is sent again."""
    env = pg_env
    caplog.set_level(logging.INFO, logger="bot.daily")
    await start(env)
    await env.set_daily(ephemeral=True)
    env.fake.faults.slow("POST", POSTS, delay=0.3)  # the send has a middle to kill in
    env.clock.advance_to(DUE)
    await env.wait_state(env.fake.guild, "sending")
    killable_pg.kill()
    posted = await env.fake.wait_for_message(env.papers)  # Discord got it; the record fails
    await until(lambda: outage_logged(caplog), what="the failed step's warning")
    killable_pg.restart()
    await run_until_sent(env)
    assert [m["id"] for m in env.fake.channel_messages(env.papers)] == [posted["id"]]
    assert len(env.fake.calls("POST", f"/channels/{env.papers.id}/messages")) == 1
    assert any("was already posted" in r.getMessage() for r in caplog.records)
    await check_log(caplog)


async def test_database_down_when_the_post_is_due_posts_once_it_is_back(
    pg_env: DailyEnv, killable_pg: KillablePg, caplog: pytest.LogCaptureFixture
) -> None:
    """The day is not skipped: the post that fell due during the outage follows its end."""
    env = pg_env
    caplog.set_level(logging.INFO, logger="bot.daily")
    await start(env)
    await env.set_daily(ephemeral=True)
    await env.clock.settled()
    killable_pg.kill()
    env.clock.advance_to(DUE)
    await until(lambda: outage_logged(caplog), what="the failed step's warning")
    assert env.fake.channel_messages(env.papers) == []
    killable_pg.restart()
    await run_until_sent(env)
    assert len(env.fake.channel_messages(env.papers)) == 1
    await check_log(caplog)


async def start(env: DailyEnv) -> None:
    await env.start()
    assert env.storage is not None
    env.storage.backend._pool.timeout = POOL_WAIT  # type: ignore[attr-defined]


async def outage_logged(caplog: pytest.LogCaptureFixture) -> bool:
    return any("database cannot be reached" in r.getMessage() for r in caplog.records)


async def run_until_sent(env: DailyEnv, timeout: float = 30.0) -> None:
    """Let fake time run (5 minutes whenever the scheduler sleeps) until today's pick is recorded
    as sent, read through a connection of the test's own. Real time is spent only where the
    database driver reconnects."""
    storage = await Storage.open(env.url)
    try:
        tables = DailyTables(storage)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            pick = await tables.get_pick(int(env.fake.guild.id), "2025-03-01")
            if pick is not None and pick.state == "sent":
                messages = env.fake.channel_messages(env.papers)
                assert pick.message_id == int(messages[-1]["id"])
                return
            assert loop.time() < deadline, f"the post was not recorded as sent: {pick}"
            if env.clock.asleep.is_set():
                env.clock.advance(minutes=5)
            await asyncio.sleep(0.02)
    finally:
        await storage.close()


async def check_log(caplog: pytest.LogCaptureFixture) -> None:
    """The outage was said in one warning line per failed step, never as a traceback, and its
    end in one line too (logged once the step that posted is over: waited for)."""

    async def over() -> bool:
        return any("database answers again" in r.getMessage() for r in caplog.records)

    await until(over, what="the line saying the database answers again")
    daily = [r for r in caplog.records if r.name.startswith("bot.daily")]
    assert [r.getMessage() for r in daily if r.exc_info] == []
    warned = [r.getMessage() for r in daily if "database cannot be reached" in r.getMessage()]
    assert warned
    assert [line for line in warned if "\n" in line] == []

"""Issue 26 item 3 at the storage level: a call of a storage opened with a timeout never waits
for ever, on either backend. A lock held by another session, a statement that never ends, or
Python stuck inside a call all end as `DatabaseBusy` (the user's "try again" message), and the
connection (or SQLite's one worker) is ready for the next call. The loopback-Discord side is
tests/app/test_slow_database.py.

Each wait below (`asyncio.wait_for`) only keeps a broken build from hanging the run; nothing
asserts how long a call took.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from bot.storage.core import BUSY, WHEN_SLOW, DatabaseBusy, WhenSlow
from bot.storage.postgres import POOL_SIZE
from bot.storage.schema import Conn
from bot.storage.store import Storage
from bot.storage.urls import parse_database_url

TIMEOUT = 0.3
HANG = 10.0  # a broken build hangs; the test then fails here instead of never ending


@pytest.fixture
async def storage(database_url: str) -> AsyncIterator[Storage]:
    store = await Storage.open(database_url, timeout=TIMEOUT)
    yield store
    await store.close()


@contextlib.contextmanager
def meta_locked(url: str) -> Iterator[None]:
    """Another session holds the lock a write to `meta` needs until the block ends."""
    parsed = parse_database_url(url)
    if parsed.dialect == "postgresql":
        import psycopg

        with psycopg.connect(parsed.target) as pg:
            pg.execute("LOCK TABLE meta IN ACCESS EXCLUSIVE MODE")
            try:
                yield
            finally:
                pg.rollback()
        return
    raw = sqlite3.connect(parsed.target, isolation_level=None)
    try:
        raw.execute("BEGIN IMMEDIATE")  # SQLite's write lock: readers go on (WAL), writers wait
        yield
        raw.execute("ROLLBACK")
    finally:
        raw.close()


async def test_a_lock_held_elsewhere_is_busy_then_the_write_goes_through(
    storage: Storage, database_url: str
) -> None:
    with meta_locked(database_url):
        with pytest.raises(DatabaseBusy) as caught:
            await asyncio.wait_for(storage.set_meta("k", "v"), HANG)
        assert str(caught.value) == BUSY
    await storage.set_meta("k", "v")
    assert await storage.get_meta("k") == "v"


def endless(c: Conn) -> Any:
    """A statement that never ends by itself (only a timeout or an interrupt ends it)."""
    if c.dialect == "postgresql":
        return c.execute("SELECT pg_sleep(3600)").fetchone()
    return c.execute(
        "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT max(x) FROM n"
    ).fetchone()


@pytest.mark.parametrize("write", [False, True])
async def test_a_statement_that_never_ends_is_busy_and_rolled_back(
    storage: Storage, write: bool
) -> None:
    def tx(c: Conn) -> Any:
        if write:
            c.execute("INSERT INTO meta (key, value) VALUES ('half', 'done')")
        return endless(c)

    with pytest.raises(DatabaseBusy):
        await asyncio.wait_for(storage.run(tx, write=write), HANG)
    assert await storage.get_meta("half") is None  # the write's transaction was rolled back
    await storage.set_meta("after", "ok")
    assert await storage.get_meta("after") == "ok"


async def test_python_stuck_inside_a_call_is_given_up_and_a_queued_call_never_runs(
    storage: Storage,
) -> None:
    """The event loop's own deadline, for what no server limit ends: the stuck call is busy,
    and on SQLite's one worker the call queued behind it is dropped, never run later."""
    release = threading.Event()
    stuck = asyncio.ensure_future(storage.run(lambda c: release.wait(HANG), write=False))
    queued = asyncio.ensure_future(storage.set_meta("queued", "ran"))
    try:
        with pytest.raises(DatabaseBusy):
            await asyncio.wait_for(stuck, HANG)
        if storage.dialect == "sqlite":
            with pytest.raises(DatabaseBusy):
                await asyncio.wait_for(queued, HANG)
    finally:
        release.set()
    await asyncio.wait_for(asyncio.gather(queued, return_exceptions=True), HANG)
    expected = None if storage.dialect == "sqlite" else "ran"
    assert await storage.get_meta("queued") == expected
    await storage.set_meta("after", "ok")


async def test_a_long_transaction_of_quick_statements_is_not_cut(storage: Storage) -> None:
    """The deadline counts from a call's last statement: recording a big corpus, thousands of
    quick inserts in one transaction, must not fail for taking longer than the timeout."""
    steps = 8

    def tx(c: Conn) -> int:
        for i in range(steps):
            c.execute("INSERT INTO meta (key, value) VALUES (?, 'x')", (f"k{i}",))
            time.sleep(TIMEOUT / 3)
        return steps

    assert await asyncio.wait_for(storage.run(tx), HANG) == steps
    assert await storage.get_meta(f"k{steps - 1}") == "x"


async def test_connections_of_busy_calls_go_back_to_the_pool(pg_server: Any) -> None:
    """More calls than the pool has connections, all blocked by a lock: each is busy within
    the timeout, and with the lock still held the pool serves other tables at once after."""
    url = pg_server.fresh_database_url()
    storage = await Storage.open(url, timeout=TIMEOUT)
    try:
        with meta_locked(url):
            blocked = [storage.get_meta("k") for _ in range(POOL_SIZE * 2)]
            outcomes = await asyncio.wait_for(
                asyncio.gather(*blocked, return_exceptions=True), HANG
            )
            assert all(isinstance(o, DatabaseBusy) for o in outcomes), outcomes
            free = [storage.column("SELECT 1", ()) for _ in range(POOL_SIZE * 2)]
            assert await asyncio.wait_for(asyncio.gather(*free), HANG) == [[1]] * POOL_SIZE * 2
    finally:
        await storage.close()


async def test_a_call_still_running_at_the_instant_is_noticed_first(storage: Storage) -> None:
    """`WHEN_SLOW` (set by the app for an interaction's task): a slow call runs `act` before
    its result comes back; a quick one never does."""
    seen: list[str] = []
    release = threading.Event()

    async def act() -> None:
        seen.append("slow")
        release.set()  # the call may finish only once noticed: its result comes after

    loop = asyncio.get_running_loop()
    token = WHEN_SLOW.set(WhenSlow(loop.time() + 0.05, act))
    try:
        assert await storage.run(lambda c: release.wait(HANG), write=False) is True
        assert seen == ["slow"]
        WHEN_SLOW.set(WhenSlow(loop.time() + HANG, act))
        assert await storage.get_meta("nothing") is None
        assert seen == ["slow"]
    finally:
        WHEN_SLOW.reset(token)

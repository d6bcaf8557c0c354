"""The storage facade's core: one backend (a SQLite file or a PostgreSQL pool), the transaction
runner every query goes through, the metadata table, and the bounds on a call's time.

`bot.storage.store.Storage` builds on it; the feature stores (`bot.library.store`,
`bot.follows.store`) and the daily tables (`bot.daily.tables`) run their SQL through it.

Why every call is bounded (issue 26.3): a table locked by another session, or a pool whose
connections all wait on one, used to hold a command until the lock went, 30 s and more, and the
user saw "The application did not respond". Now a call of a storage opened with a `timeout`
(the bot's `[storage] timeout_seconds`) that cannot go on ends as `DatabaseBusy`, whose message
the user reads: the server's own limits end it first (PostgreSQL's statement_timeout and
lock_timeout, the pool's wait for a connection, SQLite's busy timeout), and `watched` is the
event loop's own deadline behind them, for a call nothing else ends (still queued for the
worker thread, or stuck in a statement past the server's limit): it drops a call that never
started, interrupts one that did (on that call's connection only), and gives up on it
`INTERRUPT_GRACE` s later. The deadline counts from the call's last statement, not its start,
so a long transaction of many quick statements (recording a large corpus) is not cut short.

A call made while answering a Discord interaction must not keep it silent past Discord's 3 s
either: the app sets `WHEN_SLOW` for that interaction's task (`bot.app.respond`), and a call
still running at that instant has it acknowledged first. Storage knows nothing of Discord.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Executor, Future
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from bot.storage.schema import Conn, StorageError, current_version

log = logging.getLogger(__name__)
T = TypeVar("T")
BUSY = "The database is busy; try again in a moment."
# Seconds past the timeout before the event loop ends a call itself: the server's own limits,
# at the timeout, come first and say more (a lock, a statement, the pool).
WATCH_MARGIN = 0.5
# Seconds an interrupted call has to give up before its caller is told "busy" without it.
INTERRUPT_GRACE = 1.0


class DatabaseBusy(StorageError):
    """A call gave up at its timeout (a lock held elsewhere, a busy pool, a slow statement);
    its message is what the user reads. Nothing of a write that ends so was committed, unless
    it committed in the instant before the interrupt."""

    def __init__(self) -> None:
        super().__init__(BUSY)


@dataclass(frozen=True, slots=True)
class WhenSlow:
    """What to do (`act`) when a call is still running at `at` (event loop time)."""

    at: float
    act: Callable[[], Awaitable[None]]


# Set by the app for the task answering an interaction (bot.app.respond.watch_database).
WHEN_SLOW: ContextVar[WhenSlow | None] = ContextVar("paperbot_storage_when_slow", default=None)


class Watch:
    """One call on a worker thread as the event loop sees it: when its last statement began
    (`beat`, from the connection wrappers) and how to interrupt it on its connection, and
    on no other: the lock keeps the connection from going to a later call meanwhile."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stop: Callable[[], object] | None = None
        self._interrupted = False
        self.last = time.monotonic()

    def beat(self) -> None:
        """A statement begins: the deadline counts from here."""
        self.last = time.monotonic()

    @contextlib.contextmanager
    def on(self, stop: Callable[[], object]) -> Iterator[None]:
        """The call runs on a connection that `stop` interrupts, until the block ends."""
        with self._lock:
            if self._interrupted:
                raise DatabaseBusy()
            self._stop = stop
        try:
            yield
        finally:
            with self._lock:
                self._stop = None

    def interrupt(self) -> None:
        """Interrupt the call's statement, or the call itself before it gets a connection."""
        with self._lock:
            self._interrupted = True
            if self._stop is not None:
                try:
                    self._stop()
                except Exception as exc:  # noqa: BLE001 - the caller is told "busy" anyway
                    log.warning("could not interrupt a database call: %s", exc)


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Read the outcome of a call nobody waits for any more (no "never retrieved" warning)."""
    if not future.cancelled():
        future.exception()


async def watched(executor: Executor, work: Callable[[Watch], T], timeout: float | None) -> T:
    """`work(watch)` on `executor`; with a `timeout`, `DatabaseBusy` once the call has gone
    `timeout` (+ `WATCH_MARGIN`) s without a statement beginning: never started (the call is
    dropped), or stuck (interrupted, and given up `INTERRUPT_GRACE` s later)."""
    watch = Watch()
    future: Future[T] = executor.submit(work, watch)
    waiter = asyncio.wrap_future(future)
    waiter.add_done_callback(_retrieve)
    if timeout is None:
        return await waiter
    try:
        while (left := watch.last + timeout + WATCH_MARGIN - time.monotonic()) > 0:
            done, _pending = await asyncio.wait({waiter}, timeout=left)
            if done:
                return waiter.result()
        if future.cancel():
            log.warning("a database call waited %.1f s for a worker: given up", timeout)
            raise DatabaseBusy()
        log.warning("a database call ran %.1f s past its timeout: interrupting it", WATCH_MARGIN)
        await asyncio.to_thread(watch.interrupt)
        done, _pending = await asyncio.wait({waiter}, timeout=INTERRUPT_GRACE)
    except asyncio.CancelledError:
        future.cancel()  # not started: never runs; started: runs on, unheard, as before
        raise
    if done:
        return waiter.result()
    log.warning("a database call did not stop when interrupted: given up")
    raise DatabaseBusy()


async def noticed(call: Awaitable[T], slow: WhenSlow) -> T:
    """Await `call`; if it is still running at `slow.at`, await `slow.act()` meanwhile."""
    task = asyncio.ensure_future(call)
    try:
        delay = slow.at - asyncio.get_running_loop().time()
        if delay > 0:
            await asyncio.wait({task}, timeout=delay)
        if not task.done():
            await slow.act()
    except BaseException:  # cancelled, or `act` failed: the call is not awaited any more
        task.cancel()
        raise
    return await task


class Backend(Protocol):
    @property
    def dialect(self) -> str: ...

    @property
    def display(self) -> str: ...

    async def run(self, fn: Callable[[Any], T], write: bool, durable: bool) -> T: ...

    async def close(self) -> None: ...


class StorageCore:
    """Async facade over one backend (a SQLite file or a PostgreSQL pool)."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self._closed = False

    @property
    def dialect(self) -> str:
        return self._backend.dialect

    @property
    def display(self) -> str:
        """Where the data lives, without a password."""
        return self._backend.display

    @property
    def backend(self) -> Backend:
        return self._backend

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._backend.close()

    async def run(self, fn: Callable[[Conn], T], write: bool = True, durable: bool = False) -> T:
        """Run `fn` in one write transaction, or as a plain read; `durable`: fsync on SQLite.
        Every feature's queries (bot/daily/tables.py, bot/library/store.py,
        bot/follows/store.py) go through here, one transaction per call. Raises
        `DatabaseBusy` when the call meets the backend's timeout; answering an interaction,
        a call still running at `WHEN_SLOW`'s instant has it acknowledged first."""
        if self._closed:
            raise StorageError("storage is closed")
        call = self._backend.run(fn, write, durable)
        slow = WHEN_SLOW.get()
        return await (call if slow is None else noticed(call, slow))

    async def column(self, sql: str, args: tuple[Any, ...]) -> list[Any]:
        """The first column of every row a read returns, in order."""
        return await self.run(lambda c: [r[0] for r in c.execute(sql, args)], write=False)

    async def one(
        self,
        sql: str,
        args: tuple[Any, ...],
        make: Callable[[Any], T],
    ) -> T | None:
        def q(c: Conn) -> T | None:
            row = c.execute(sql, args).fetchone()
            return None if row is None else make(row)

        return await self.run(q, write=False)

    async def rows(self, sql: str, args: tuple[Any, ...], make: Callable[[Any], T]) -> list[T]:
        return await self.run(lambda c: [make(r) for r in c.execute(sql, args)], write=False)

    # -- metadata -------------------------------------------------------------------------

    async def schema_version(self) -> int:
        return await self.run(current_version)

    async def journal_mode(self) -> str:
        if self.dialect != "sqlite":
            return "postgresql"
        return str(await self.one("PRAGMA journal_mode", (), lambda r: r[0]))

    async def get_meta(self, key: str) -> str | None:
        return await self.one("SELECT value FROM meta WHERE key = ?", (key,), lambda r: r[0])

    async def set_meta(self, key: str, value: str) -> None:
        await self.run(
            lambda c: c.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )
        )

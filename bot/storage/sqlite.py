"""The SQLite backend: one connection on one worker thread, WAL mode, the embedded default.

Calls never block the event loop, they are serialised without a lock, and each is one
transaction. Durability: WAL with `synchronous=NORMAL`, which never corrupts the file but may
lose the last commits on power loss. That is harmless for every write but one: the claim
written before the HTTP call. Losing it could make the bot post twice after a crash, so that
write alone commits with `synchronous=FULL` (an fsync of the WAL, which also makes every earlier
commit durable): one fsync per server per day instead of one per write.

Bounded calls (issue 26.3): with a `timeout`, a write waits at most that long for another
process's lock (SQLite's busy timeout), and a call that overruns it is interrupted
(`sqlite3.Connection.interrupt`, through `bot.storage.core.watched`); either ends as
`DatabaseBusy`, and the rolled-back transaction leaves the connection ready for the next call.

A damaged file is found at open (`PRAGMA quick_check`, and any read error while migrating) and
reported as `DatabaseDamaged`, with the way out: never a silent start without the database.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from bot.storage.core import DatabaseBusy, Watch, watched
from bot.storage.schema import StorageError, migrate

log = logging.getLogger(__name__)
T = TypeVar("T")
OPEN_BUSY_TIMEOUT = 30.0  # seconds to wait for another process's lock while opening/migrating
# sqlite3 primary result codes that mean "not now" rather than "wrong": another connection's
# lock (BUSY, LOCKED) or our own deadline (INTERRUPT).
BUSY_CODES = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_INTERRUPT}


class DatabaseDamaged(StorageError):
    """The SQLite file is not a usable database (truncated, overwritten, failing checks)."""


def damaged_message(path: str, detail: str) -> str:
    return (
        f"the database {path} is damaged ({detail}). Nothing was changed. Either restore the "
        "newest backup with `python -m bot db restore --latest` (backups are kept in "
        "[storage] backup_dir), or move the file away to start with an empty database."
    )


class SqliteConn:
    """sqlite3's connection under the backend-neutral `Conn` name."""

    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.raw = conn
        self.watch: Watch | None = None  # the call running now, told when a statement begins

    def execute(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> sqlite3.Cursor:
        if self.watch is not None:
            self.watch.beat()
        return self.raw.execute(sql, tuple(args))

    def executemany(self, sql: str, rows: Iterable[tuple[Any, ...]]) -> sqlite3.Cursor:
        if self.watch is not None:
            self.watch.beat()
        return self.raw.executemany(sql, rows)


class SqliteBackend:
    dialect = "sqlite"

    def __init__(
        self,
        conn: sqlite3.Connection,
        executor: ThreadPoolExecutor,
        path: str,
        timeout: float | None = None,
    ) -> None:
        self._conn = SqliteConn(conn)
        self._executor = executor
        self.path = path
        self._timeout = timeout

    @property
    def display(self) -> str:
        return self.path

    @classmethod
    async def open(
        cls, path: str, *, migrate_schema: bool = True, timeout: float | None = None
    ) -> SqliteBackend:
        """Open `path`; `timeout` bounds each later call (None: no bound, for admin tools)."""
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="paperbot-db")
        loop = asyncio.get_running_loop()
        try:
            conn = await loop.run_in_executor(executor, connect, path, migrate_schema, timeout)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(conn, executor, path, timeout)

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._executor, self._conn.raw.close)
        self._executor.shutdown(wait=True)

    async def run(self, fn: Callable[[SqliteConn], T], write: bool, durable: bool) -> T:
        conn = self._conn

        def tx(watch: Watch) -> T:
            with watch.on(conn.raw.interrupt):
                conn.watch = watch
                try:
                    if not write:
                        return fn(conn)
                    return transaction(conn, fn, durable)
                except sqlite3.OperationalError as exc:
                    if exc.sqlite_errorcode & 0xFF in BUSY_CODES:
                        raise DatabaseBusy() from exc
                    raise
                finally:
                    conn.watch = None

        return await watched(self._executor, tx, self._timeout)

    async def backup_to(self, target: Path) -> None:
        """A consistent copy through SQLite's online backup API (the bot keeps running)."""

        def copy() -> None:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(target.name + ".part")
            dest = sqlite3.connect(tmp)
            try:
                self._conn.raw.backup(dest)
            finally:
                dest.close()
            tmp.replace(target)

        await asyncio.get_running_loop().run_in_executor(self._executor, copy)


def transaction(conn: SqliteConn, fn: Callable[[SqliteConn], T], durable: bool = False) -> T:
    """`fn` in one write transaction; `durable` commits with synchronous=FULL."""
    if durable:
        conn.execute("PRAGMA synchronous=FULL")
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = fn(conn)
        except BaseException:
            # An interrupted or busy statement may have rolled the transaction back already.
            if conn.raw.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    finally:
        if durable:
            conn.execute("PRAGMA synchronous=NORMAL")
    return result


def check_file(conn: sqlite3.Connection, path: str) -> None:
    """Raise DatabaseDamaged unless `quick_check` passes (cheap: no index cross-checks)."""
    try:
        rows = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
    except sqlite3.DatabaseError as exc:
        raise DatabaseDamaged(damaged_message(path, str(exc))) from exc
    if rows != ["ok"]:
        raise DatabaseDamaged(damaged_message(path, "; ".join(map(str, rows[:3]))))


def connect(
    path: str, migrate_schema: bool = True, timeout: float | None = None
) -> sqlite3.Connection:
    """Open (creating if needed), check and migrate the file; the connection is ours to close.
    Opening waits up to `OPEN_BUSY_TIMEOUT` s for another process's lock; later calls wait
    `timeout` s (SQLite's busy timeout) when one is given."""
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        path, isolation_level=None, timeout=OPEN_BUSY_TIMEOUT, check_same_thread=False
    )
    try:
        conn.row_factory = sqlite3.Row
        try:
            conn.execute("PRAGMA foreign_keys=ON")
            if path != ":memory:":
                check_file(conn, path)
                mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    log.warning("SQLite refused WAL mode for %s (got %s)", path, mode)
            conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise
            raise DatabaseDamaged(damaged_message(path, str(exc))) from exc
        if migrate_schema:
            try:
                transaction(SqliteConn(conn), migrate)
            except sqlite3.DatabaseError as exc:
                if "malformed" in str(exc) or "not a database" in str(exc):
                    raise DatabaseDamaged(damaged_message(path, str(exc))) from exc
                raise StorageError(f"cannot migrate the database {path}: {exc}") from exc
        if timeout is not None:
            conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
    except BaseException:
        conn.close()
        raise
    return conn

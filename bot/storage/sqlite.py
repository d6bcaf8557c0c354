"""The SQLite backend: one connection on one worker thread, WAL mode, the embedded default.

Calls never block the event loop, they are serialised without a lock, and each is one
transaction. Durability: WAL with `synchronous=NORMAL`, which never corrupts the file but may
lose the last commits on power loss. That is harmless for every write but one: the claim
written before the HTTP call. Losing it could make the bot post twice after a crash, so that
write alone commits with `synchronous=FULL` (an fsync of the WAL, which also makes every earlier
commit durable): one fsync per server per day instead of one per write.

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

from bot.storage.schema import StorageError, migrate

log = logging.getLogger(__name__)
T = TypeVar("T")


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

    def execute(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> sqlite3.Cursor:
        return self.raw.execute(sql, tuple(args))

    def executemany(self, sql: str, rows: Iterable[tuple[Any, ...]]) -> sqlite3.Cursor:
        return self.raw.executemany(sql, rows)


class SqliteBackend:
    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection, executor: ThreadPoolExecutor, path: str) -> None:
        self._conn = SqliteConn(conn)
        self._executor = executor
        self.path = path

    @property
    def display(self) -> str:
        return self.path

    @classmethod
    async def open(cls, path: str, *, migrate_schema: bool = True) -> SqliteBackend:
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="paperbot-db")
        loop = asyncio.get_running_loop()
        try:
            conn = await loop.run_in_executor(executor, connect, path, migrate_schema)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(conn, executor, path)

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._executor, self._conn.raw.close)
        self._executor.shutdown(wait=True)

    async def run(self, fn: Callable[[SqliteConn], T], write: bool, durable: bool) -> T:
        def tx() -> T:
            if not write:
                return fn(self._conn)
            return transaction(self._conn, fn, durable)

        return await asyncio.get_running_loop().run_in_executor(self._executor, tx)

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


def connect(path: str, migrate_schema: bool = True) -> sqlite3.Connection:
    """Open (creating if needed), check and migrate the file; the connection is ours to close."""
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None, timeout=30.0, check_same_thread=False)
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
    except BaseException:
        conn.close()
        raise
    return conn

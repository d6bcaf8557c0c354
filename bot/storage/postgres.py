"""The PostgreSQL backend: psycopg 3 with a small connection pool, shared by many processes.

Why the synchronous driver on worker threads rather than psycopg's async API: the same
transaction functions then serve both backends unchanged (`Conn.execute` with `?`
placeholders, translated here to psycopg's `%s`), and a handful of threads is plenty for a bot
that writes a few rows per server per day. Every write is one transaction and commits durably
(PostgreSQL's default `synchronous_commit=on`), so the claim written before a post survives a
crash of the process or of the machine.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any, TypeVar

from bot.storage.schema import StorageError, migrate

log = logging.getLogger(__name__)
T = TypeVar("T")

POOL_SIZE = 4  # connections per process: the scheduler, commands, a backup; more would idle
CONNECT_TIMEOUT = 10  # seconds to reach the server at start
MIGRATION_LOCK = 0x70617065  # advisory lock id held while migrating ("pape")


@lru_cache(maxsize=512)
def to_pyformat(sql: str) -> str:
    """`?` placeholders as psycopg's `%s` (the bot's SQL has no `?` or `%` in literals)."""
    return sql.replace("%", "%%").replace("?", "%s")


class PgConn:
    """A psycopg connection under the backend-neutral `Conn` name."""

    dialect = "postgresql"

    def __init__(self, conn: Any) -> None:
        self.raw = conn

    def execute(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> Any:
        return self.raw.execute(to_pyformat(sql), tuple(args))

    def executemany(self, sql: str, rows: Iterable[tuple[Any, ...]]) -> Any:
        with self.raw.cursor() as cur:
            cur.executemany(to_pyformat(sql), list(rows))
            return cur


def _modules() -> tuple[Any, Any, Any]:
    try:
        import psycopg
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool
    except ImportError as exc:  # pragma: no cover - an install without the driver
        raise StorageError(
            "DATABASE_URL names PostgreSQL but psycopg is not installed: "
            "pip install 'psycopg[binary]' psycopg-pool"
        ) from exc
    return psycopg, dict_row, ConnectionPool


class _Row(dict[str, Any]):
    """A row readable by name (like sqlite3.Row) and by position (`row[0]`)."""

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, int):
            return list(self.values())[key]
        return super().__getitem__(key)


def _row_factory(cursor: Any) -> Callable[[Any], _Row]:
    names = [c.name for c in cursor.description or ()]
    return lambda values: _Row(zip(names, values, strict=True))


class PostgresBackend:
    dialect = "postgresql"

    def __init__(self, pool: Any, executor: ThreadPoolExecutor, display: str) -> None:
        self._pool = pool
        self._executor = executor
        self.display = display

    @classmethod
    async def open(
        cls, url: str, display: str, *, migrate_schema: bool = True, size: int = POOL_SIZE
    ) -> PostgresBackend:
        psycopg, _dict_row, pool_class = _modules()
        executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="paperbot-pg")

        def start() -> Any:
            # One plain connection first: an unreachable server or a bad password is one clear
            # error at once, instead of the pool retrying quietly until its timeout.
            psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT).close()
            pool = pool_class(
                url,
                min_size=1,
                max_size=size,
                kwargs={"autocommit": True, "row_factory": _row_factory},
                open=False,
                name="paperbot",
            )
            try:
                pool.open(wait=True, timeout=30.0)
                if migrate_schema:
                    with pool.connection() as conn, conn.transaction():
                        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                        migrate(PgConn(conn))
            except BaseException:
                pool.close()
                raise
            return pool

        try:
            pool = await asyncio.get_running_loop().run_in_executor(executor, start)
        except psycopg.Error as exc:
            executor.shutdown(wait=False)
            raise StorageError(f"cannot use PostgreSQL at {display}: {exc}") from exc
        except Exception:
            executor.shutdown(wait=False)
            raise
        return cls(pool, executor, display)

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._executor, self._pool.close)
        self._executor.shutdown(wait=True)

    async def run(self, fn: Callable[[PgConn], T], write: bool, durable: bool) -> T:
        def tx() -> T:
            with self._pool.connection() as conn:
                if not write:
                    return fn(PgConn(conn))
                with conn.transaction():
                    return fn(PgConn(conn))

        return await asyncio.get_running_loop().run_in_executor(self._executor, tx)

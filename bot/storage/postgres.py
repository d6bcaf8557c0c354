"""The PostgreSQL backend: psycopg 3 with a small connection pool, shared by many processes.

Why the synchronous driver on worker threads rather than psycopg's async API: the same
transaction functions then serve both backends unchanged (`Conn.execute` with `?`
placeholders, translated here to psycopg's `%s`), and a handful of threads is plenty for a bot
that writes a few rows per server per day. Every write is one transaction and commits durably
(PostgreSQL's default `synchronous_commit=on`), so the claim written before a post survives a
crash of the process or of the machine.

Bounded calls (issue 26.3): with a `timeout`, every session has statement_timeout and
lock_timeout set to it (a table another session holds in ACCESS EXCLUSIVE mode no longer holds
a command for as long as it likes), a call waits at most that long for a pool connection, and a
call that overruns it anyway is cancelled on its own connection (`bot.storage.core.watched`).
Each ends as `DatabaseBusy`; the pool takes the connection back rolled back, so one slow query
holds one connection for at most the timeout and never starves the others.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any, TypeVar

from bot.storage.core import INTERRUPT_GRACE, DatabaseBusy, Watch, watched
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

    def __init__(self, conn: Any, watch: Watch | None = None) -> None:
        self.raw = conn
        self.watch = watch  # the call running on it, told when a statement begins

    def execute(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> Any:
        if self.watch is not None:
            self.watch.beat()
        return self.raw.execute(to_pyformat(sql), tuple(args))

    def executemany(self, sql: str, rows: Iterable[tuple[Any, ...]]) -> Any:
        if self.watch is not None:
            self.watch.beat()
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


def _session_limits(timeout: float) -> Callable[[Any], None]:
    """The pool's `configure`: each new session gives up a statement or a lock wait at
    `timeout` s (QueryCanceled, LockNotAvailable)."""
    ms = str(max(1, int(timeout * 1000)))

    def configure(conn: Any) -> None:
        conn.execute(
            "SELECT set_config('statement_timeout', %s, false), "
            "set_config('lock_timeout', %s, false)",
            (ms, ms),
        )

    return configure


def _busy_errors() -> tuple[type[BaseException], ...]:
    """What psycopg raises when a call meets one of its limits."""
    import psycopg
    from psycopg_pool import PoolTimeout

    return (psycopg.errors.QueryCanceled, psycopg.errors.LockNotAvailable, PoolTimeout)


class PostgresBackend:
    dialect = "postgresql"

    def __init__(
        self,
        pool: Any,
        executor: ThreadPoolExecutor,
        display: str,
        timeout: float | None = None,
    ) -> None:
        self._pool = pool
        self._executor = executor
        self.display = display
        self._timeout = timeout
        self._busy = _busy_errors()

    @classmethod
    async def open(
        cls,
        url: str,
        display: str,
        *,
        migrate_schema: bool = True,
        size: int = POOL_SIZE,
        timeout: float | None = None,
    ) -> PostgresBackend:
        """Connect and migrate; `timeout` bounds each later call (None: no bound, for admin
        tools moving whole databases)."""
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
                configure=None if timeout is None else _session_limits(timeout),
                open=False,
                name="paperbot",
            )
            try:
                pool.open(wait=True, timeout=30.0)
                if migrate_schema:
                    with pool.connection() as conn, conn.transaction():
                        # Migrating waits for another process's migration, however long.
                        conn.execute("SET LOCAL statement_timeout = 0")
                        conn.execute("SET LOCAL lock_timeout = 0")
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
        return cls(pool, executor, display, timeout)

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._executor, self._pool.close)
        self._executor.shutdown(wait=True)

    async def run(self, fn: Callable[[PgConn], T], write: bool, durable: bool) -> T:
        def tx(watch: Watch) -> T:
            try:
                with (
                    self._pool.connection(timeout=self._timeout) as conn,
                    watch.on(lambda: conn.cancel_safe(timeout=INTERRUPT_GRACE)),
                ):
                    if not write:
                        return fn(PgConn(conn, watch))
                    with conn.transaction():
                        return fn(PgConn(conn, watch))
            except self._busy as exc:
                raise DatabaseBusy() from exc

        return await watched(self._executor, tx, self._timeout)

"""The only module that touches the database: schedules, pick history, pool state and metadata.

Every call is a small async method, so a later move to PostgreSQL swaps this module's insides
and nothing else. SQLite runs on one dedicated worker thread holding one connection: calls never
block the event loop, they are serialised without a lock, and each method is one transaction.

Durability: WAL mode with `synchronous=NORMAL`, which never corrupts the file but may lose the
last commits on power loss. That is harmless for every write but one: the 'sending' row written
before the HTTP call. Losing it could make the bot post twice after a crash, so that write alone
commits with `synchronous=FULL` (an fsync of the WAL, which also makes every earlier commit
durable). That costs one fsync per server per day instead of one per write.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from bot.config import ConfigError
from bot.storage import follows, library
from bot.storage.records import Pick, PoolState, Schedule

log = logging.getLogger(__name__)
T = TypeVar("T")
__all__ = ["Pick", "PoolState", "Schedule", "Storage", "StorageError", "UnsupportedDatabase"]

# Ordered migrations: version N's statements turn schema N-1 into N. Never edit a released one;
# append a new version instead.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
        """CREATE TABLE schedules (
            guild_id INTEGER PRIMARY KEY,
            channel_id INTEGER NOT NULL,
            post_time TEXT NOT NULL,
            timezone TEXT NOT NULL,
            topic TEXT,
            enabled INTEGER NOT NULL DEFAULT 1,
            stopped_reason TEXT,
            start_date TEXT NOT NULL,
            updated_at TEXT NOT NULL)""",
        """CREATE TABLE pools (
            guild_id INTEGER PRIMARY KEY,
            seed INTEGER NOT NULL,
            epoch INTEGER NOT NULL DEFAULT 0)""",
        """CREATE TABLE picks (
            guild_id INTEGER NOT NULL,
            local_date TEXT NOT NULL,
            paper_id TEXT NOT NULL,
            epoch INTEGER NOT NULL,
            marker TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'sending', 'sent', 'failed')),
            channel_id INTEGER,
            message_id INTEGER,
            attempts INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            next_attempt_at TEXT,
            first_attempt_at TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            sent_at TEXT,
            PRIMARY KEY (guild_id, local_date))""",
        """CREATE INDEX picks_by_epoch ON picks (guild_id, epoch)""",
        """CREATE INDEX picks_by_state ON picks (guild_id, state)""",
    ),
    # 2: readers' libraries, server preferences, reactions; topic follows (issue 16).
    library.MIGRATION + follows.MIGRATION,
)
SCHEMA_VERSION = len(MIGRATIONS)


class StorageError(RuntimeError):
    """The database cannot be used as it is (e.g. written by a newer version of the bot)."""


class UnsupportedDatabase(ConfigError, NotImplementedError):
    """A database URL this build cannot serve yet (PostgreSQL is planned, not written)."""


def _ts(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    return value.astimezone(UTC).isoformat()


def _dt(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _schedule(row: sqlite3.Row) -> Schedule:
    return Schedule(
        guild_id=row["guild_id"],
        channel_id=row["channel_id"],
        time=row["post_time"],
        timezone=row["timezone"],
        topic=row["topic"],
        enabled=bool(row["enabled"]),
        stopped_reason=row["stopped_reason"],
        start_date=row["start_date"],
        updated_at=datetime.fromisoformat(row["updated_at"]),
    )


def _pick(row: sqlite3.Row) -> Pick:
    return Pick(
        guild_id=row["guild_id"],
        local_date=row["local_date"],
        paper_id=row["paper_id"],
        epoch=row["epoch"],
        marker=row["marker"],
        state=row["state"],
        channel_id=row["channel_id"],
        message_id=row["message_id"],
        attempts=row["attempts"],
        error=row["error"],
        next_attempt_at=_dt(row["next_attempt_at"]),
        first_attempt_at=_dt(row["first_attempt_at"]),
        created_at=datetime.fromisoformat(row["created_at"]),
        updated_at=datetime.fromisoformat(row["updated_at"]),
        sent_at=_dt(row["sent_at"]),
    )


def sqlite_path(url: str) -> str:
    """The SQLite file named by `url`: a plain path, `sqlite:///path`, or `:memory:`."""
    url = url.strip()
    if url in (":memory:", "sqlite://", "sqlite:///:memory:"):
        return ":memory:"
    scheme, sep, rest = url.partition("://")
    if not sep:
        return str(Path(url).expanduser())
    if scheme.lower() in ("postgres", "postgresql", "postgresql+asyncpg"):
        raise UnsupportedDatabase(
            "[storage] database: PostgreSQL is not supported yet; use a SQLite file path "
            "(e.g. state/paperbot.sqlite3). The async Storage API is the seam for adding it."
        )
    if scheme.lower() != "sqlite" or not rest.startswith("/"):
        raise ConfigError(
            f"[storage] database: cannot use {url!r}; give a file path or "
            "sqlite:///relative/path or sqlite:////absolute/path"
        )
    return str(Path(rest[1:]).expanduser())


class Storage:
    """Async facade over one SQLite connection living on one worker thread."""

    def __init__(self, conn: sqlite3.Connection, executor: ThreadPoolExecutor, path: str) -> None:
        self._conn = conn
        self._executor = executor
        self.path = path
        self._closed = False

    @classmethod
    async def open(cls, url: str) -> Storage:
        """Open (creating if needed) and migrate the database named by `url`."""
        path = sqlite_path(url)
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="paperbot-db")
        loop = asyncio.get_running_loop()
        try:
            conn = await loop.run_in_executor(executor, cls._connect, path)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(conn, executor, path)

    @staticmethod
    def _connect(path: str) -> sqlite3.Connection:
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, isolation_level=None, timeout=30.0)
        try:
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA foreign_keys=ON")
            if path != ":memory:":
                mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    log.warning("SQLite refused WAL mode for %s (got %s)", path, mode)
            conn.execute("PRAGMA synchronous=NORMAL")
            Storage._migrate(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    @staticmethod
    def _migrate(conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
            current = row[0] or 0
            if current > SCHEMA_VERSION:
                raise StorageError(
                    f"database schema version {current} is newer than this bot "
                    f"understands ({SCHEMA_VERSION}); upgrade the bot"
                )
            for version in range(current + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[version - 1]:
                    conn.execute(statement)
                conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
                log.info("database migrated to schema version %d", version)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._conn.close)
        self._executor.shutdown(wait=True)

    async def _run(
        self, fn: Callable[[sqlite3.Connection], T], write: bool = True, durable: bool = False
    ) -> T:
        """Run `fn` on the database thread: in one write transaction, or as a plain read.

        `durable` commits with synchronous=FULL: the transaction survives power loss, not only
        a crash of the process.
        """
        if self._closed:
            raise StorageError("storage is closed")

        def tx() -> T:
            if not write:
                return fn(self._conn)
            if durable:
                self._conn.execute("PRAGMA synchronous=FULL")
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    result = fn(self._conn)
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
            finally:
                if durable:
                    self._conn.execute("PRAGMA synchronous=NORMAL")
            return result

        return await asyncio.get_running_loop().run_in_executor(self._executor, tx)

    async def run(self, fn: Callable[[sqlite3.Connection], T], write: bool = True) -> T:
        """One transaction (or plain read) for the feature stores in this package
        (`bot.storage.library`, `bot.storage.follows`), which keep their SQL beside their
        records."""
        return await self._run(fn, write=write)

    async def _one(
        self,
        sql: str,
        args: tuple[Any, ...],
        make: Callable[[sqlite3.Row], T],
    ) -> T | None:
        def q(c: sqlite3.Connection) -> T | None:
            row = c.execute(sql, args).fetchone()
            return None if row is None else make(row)

        return await self._run(q, write=False)

    async def _all(
        self, sql: str, args: tuple[Any, ...], make: Callable[[sqlite3.Row], T]
    ) -> list[T]:
        return await self._run(lambda c: [make(r) for r in c.execute(sql, args)], write=False)

    # -- metadata -------------------------------------------------------------------------

    async def schema_version(self) -> int:
        version = await self._one("SELECT MAX(version) FROM schema_version", (), lambda r: r[0])
        return int(version or 0)  # MAX over no rows is NULL

    async def journal_mode(self) -> str:
        return str(await self._one("PRAGMA journal_mode", (), lambda r: r[0]))

    async def get_meta(self, key: str) -> str | None:
        return await self._one("SELECT value FROM meta WHERE key = ?", (key,), lambda r: r[0])

    async def set_meta(self, key: str, value: str) -> None:
        await self._run(
            lambda c: c.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )
        )

    # -- schedules ------------------------------------------------------------------------

    async def get_schedule(self, guild_id: int) -> Schedule | None:
        return await self._one("SELECT * FROM schedules WHERE guild_id = ?", (guild_id,), _schedule)

    async def active_schedules(self) -> list[Schedule]:
        """Schedules that should post: enabled and not stopped by a permanent error."""
        return await self._all(
            "SELECT * FROM schedules WHERE enabled = 1 AND stopped_reason "
            "IS NULL ORDER BY guild_id",
            (),
            _schedule,
        )

    async def save_schedule(
        self,
        guild_id: int,
        channel_id: int,
        time: str,
        timezone: str,
        topic: str | None,
        start_date: str,
        now: datetime,
        drop_pending_from: str | None = None,
    ) -> Schedule:
        """Enable (or replace) a schedule, clearing any stop reason.

        `drop_pending_from`: forget picks from that local date on that were never attempted,
        so a new topic applies to today's not-yet-posted pick.
        """

        def q(c: sqlite3.Connection) -> Schedule:
            c.execute(
                "INSERT INTO schedules (guild_id, channel_id, post_time, timezone, topic, enabled,"
                " stopped_reason, start_date, updated_at) VALUES (?, ?, ?, ?, ?, 1, NULL, ?, ?) "
                "ON CONFLICT (guild_id) DO UPDATE SET channel_id = excluded.channel_id, "
                "post_time = excluded.post_time, timezone = excluded.timezone, "
                "topic = excluded.topic, enabled = 1, stopped_reason = NULL, "
                "start_date = excluded.start_date, updated_at = excluded.updated_at",
                (guild_id, channel_id, time, timezone, topic, start_date, _ts(now)),
            )
            if drop_pending_from is not None:
                c.execute(
                    "DELETE FROM picks WHERE guild_id = ? AND local_date >= ? "
                    "AND state = 'pending' AND attempts = 0",
                    (guild_id, drop_pending_from),
                )
            return _schedule(
                c.execute("SELECT * FROM schedules WHERE guild_id = ?", (guild_id,)).fetchone()
            )

        return await self._run(q)

    async def disable_schedule(self, guild_id: int, now: datetime) -> bool:
        """Turn a schedule off; history and pool state are kept. False if there was none."""
        return await self._run(
            lambda c: (
                c.execute(
                    "UPDATE schedules SET enabled = 0, updated_at = ? "
                    "WHERE guild_id = ? AND enabled = 1",
                    (_ts(now), guild_id),
                ).rowcount
                > 0
            )
        )

    async def stop_schedule(self, guild_id: int, reason: str, now: datetime) -> None:
        """Stop a server's schedule for a reason shown in /daily status (cleared by /daily set)."""
        await self._run(lambda c: _stop(c, guild_id, reason, now))

    # -- pool state -----------------------------------------------------------------------

    async def pool(self, guild_id: int, new_seed: int) -> PoolState:
        """The server's pool state, created with `new_seed` the first time it is asked for."""

        def q(c: sqlite3.Connection) -> PoolState:
            c.execute(
                "INSERT OR IGNORE INTO pools (guild_id, seed, epoch) VALUES (?, ?, 0)",
                (guild_id, new_seed),
            )
            row = c.execute("SELECT * FROM pools WHERE guild_id = ?", (guild_id,)).fetchone()
            drawn = frozenset(
                r[0]
                for r in c.execute(
                    "SELECT paper_id FROM picks WHERE guild_id = ? AND epoch = ?",
                    (guild_id, row["epoch"]),
                )
            )
            last = c.execute(
                "SELECT paper_id FROM picks WHERE guild_id = ? ORDER BY local_date DESC LIMIT 1",
                (guild_id,),
            ).fetchone()
            return PoolState(
                row["guild_id"], row["seed"], row["epoch"], drawn, None if last is None else last[0]
            )

        return await self._run(q)

    # -- picks ----------------------------------------------------------------------------

    async def get_pick(self, guild_id: int, local_date: str) -> Pick | None:
        return await self._one(_PICK, (guild_id, local_date), _pick)

    async def create_pick(
        self, guild_id: int, local_date: str, paper_id: str, epoch: int, marker: str, now: datetime
    ) -> Pick:
        """Record the pick for (guild, date) unless one exists; either way return the stored one.

        Advancing the pool's epoch happens in the same transaction, so a reshuffle is never
        half-recorded.
        """

        def q(c: sqlite3.Connection) -> Pick:
            cur = c.execute(
                "INSERT OR IGNORE INTO picks (guild_id, local_date, paper_id, epoch, marker, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (guild_id, local_date, paper_id, epoch, marker, _ts(now), _ts(now)),
            )
            if cur.rowcount:
                c.execute(
                    "UPDATE pools SET epoch = MAX(epoch, ?) WHERE guild_id = ?", (epoch, guild_id)
                )
            return _pick(c.execute(_PICK, (guild_id, local_date)).fetchone())

        return await self._run(q)

    async def _update_pick(
        self,
        guild_id: int,
        local_date: str,
        sql: str,
        args: tuple[Any, ...],
        durable: bool = False,
        stop_reason: str | None = None,
        now: datetime | None = None,
    ) -> Pick:
        def q(c: sqlite3.Connection) -> Pick:
            c.execute(
                f"UPDATE picks SET {sql} WHERE guild_id = ? AND local_date = ?",
                (*args, guild_id, local_date),
            )
            row = c.execute(_PICK, (guild_id, local_date)).fetchone()
            if row is None:
                raise StorageError(f"no pick for guild {guild_id} on {local_date}")
            if stop_reason is not None and now is not None:
                _stop(c, guild_id, stop_reason, now)
            return _pick(row)

        return await self._run(q, durable=durable)

    async def mark_sending(
        self, guild_id: int, local_date: str, channel_id: int, now: datetime
    ) -> Pick:
        """Written (and fsynced) before the HTTP call: a crash after this is checked on restart."""
        return await self._update_pick(
            guild_id,
            local_date,
            "state = 'sending', channel_id = ?, attempts = attempts + 1, next_attempt_at = NULL, "
            "first_attempt_at = COALESCE(first_attempt_at, ?), updated_at = ?",
            (channel_id, _ts(now), _ts(now)),
            durable=True,
        )

    async def mark_sent(
        self,
        guild_id: int,
        local_date: str,
        message_id: int,
        now: datetime,
        channel_id: int | None = None,
    ) -> Pick:
        return await self._update_pick(
            guild_id,
            local_date,
            "state = 'sent', message_id = ?, channel_id = COALESCE(?, channel_id), error = NULL, "
            "next_attempt_at = NULL, sent_at = ?, updated_at = ?",
            (message_id, channel_id, _ts(now), _ts(now)),
        )

    async def mark_retry(
        self, guild_id: int, local_date: str, error: str, next_attempt_at: datetime, now: datetime
    ) -> Pick:
        """A transient failure: back to pending, not before `next_attempt_at`."""
        return await self._update_pick(
            guild_id,
            local_date,
            "state = 'pending', error = ?, next_attempt_at = ?, updated_at = ?",
            (error, _ts(next_attempt_at), _ts(now)),
        )

    async def mark_failed(
        self, guild_id: int, local_date: str, error: str, now: datetime, stop_schedule: bool = False
    ) -> Pick:
        """Give up on this date; with `stop_schedule`, also stop the server (reason = error)."""
        return await self._update_pick(
            guild_id,
            local_date,
            "state = 'failed', error = ?, next_attempt_at = NULL, updated_at = ?",
            (error, _ts(now)),
            stop_reason=error if stop_schedule else None,
            now=now,
        )

    async def attempted_unfinished(self) -> list[Pick]:
        """Attempted picks not yet confirmed (in flight, retrying, or cut short by a crash)."""
        return await self._all(
            "SELECT * FROM picks WHERE state = 'sending' OR (state = "
            "'pending' AND attempts > 0) ORDER BY guild_id, local_date",
            (),
            _pick,
        )

    async def recent_picks(self, since: str) -> list[Pick]:
        """Every server's picks from local date `since` on: one query plans all servers."""
        return await self._all(
            "SELECT * FROM picks WHERE local_date >= ? ORDER BY guild_id, local_date",
            (since,),
            _pick,
        )

    async def last_sent(self, guild_id: int) -> Pick | None:
        return await self._one(
            "SELECT * FROM picks WHERE guild_id = ? AND state = 'sent' "
            "ORDER BY local_date DESC LIMIT 1",
            (guild_id,),
            _pick,
        )

    async def picks(self, guild_id: int) -> list[Pick]:
        """The whole history of one server, oldest first (tests, diagnostics)."""
        return await self._all(
            "SELECT * FROM picks WHERE guild_id = ? ORDER BY local_date", (guild_id,), _pick
        )


_PICK = "SELECT * FROM picks WHERE guild_id = ? AND local_date = ?"


def _stop(c: sqlite3.Connection, guild_id: int, reason: str, now: datetime) -> None:
    c.execute(
        "UPDATE schedules SET stopped_reason = ?, updated_at = ? WHERE guild_id = ?",
        (reason, _ts(now), guild_id),
    )

"""The database schema, versioned, one source of truth for SQLite and PostgreSQL.

Migrations are written once, in the SQL both engines accept, with one difference translated
here: a Discord id needs 64 bits, which SQLite's INTEGER always has and PostgreSQL calls BIGINT.
Timestamps are ISO-8601 UTC text in both, so ordering and comparisons behave identically.

Version N's statements turn schema N-1 into N. Never edit a released version; append one.
`migrate` runs inside the caller's transaction, which each backend makes exclusive (SQLite:
BEGIN IMMEDIATE; PostgreSQL: an advisory lock), so two processes starting at once migrate once.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any, Protocol

from bot.storage import follows, library

log = logging.getLogger(__name__)


class StorageError(RuntimeError):
    """The database cannot be used as it is (damaged, or written by a newer bot)."""


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    @property
    def description(self) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Any: ...


class Conn(Protocol):
    """What a transaction function gets: `execute` with `?` placeholders, on either engine."""

    dialect: str

    def execute(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> Cursor: ...

    def executemany(self, sql: str, rows: Iterable[tuple[Any, ...]]) -> Any: ...


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
    # 3: a claim on a pick (who is sending it, until when), so two processes on one database
    # never both send the same server's post.
    (
        """ALTER TABLE picks ADD COLUMN claim_owner TEXT""",
        """ALTER TABLE picks ADD COLUMN claim_until TEXT""",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)

# Every table the bot owns, parents before children: what `db copy` and exports move.
TABLES: tuple[str, ...] = (
    "meta",
    "schedules",
    "pools",
    "picks",
    "saved",
    "guild_prefs",
    "reactions",
    "follows",
    "deliveries",
    "corpus_papers",
)

_INTEGER = re.compile(r"\bINTEGER\b")


def statement_for(sql: str, dialect: str) -> str:
    """A migration statement as `dialect` needs it (64-bit ids on PostgreSQL)."""
    return _INTEGER.sub("BIGINT", sql) if dialect == "postgresql" else sql


def current_version(conn: Conn) -> int:
    conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def migrate(conn: Conn, target: int = SCHEMA_VERSION) -> list[int]:
    """Bring the schema up to `target` inside the caller's transaction; the versions applied."""
    current = current_version(conn)
    if current > SCHEMA_VERSION:
        raise StorageError(
            f"database schema version {current} is newer than this bot understands "
            f"({SCHEMA_VERSION}); upgrade the bot"
        )
    applied = []
    for version in range(current + 1, target + 1):
        for sql in MIGRATIONS[version - 1]:
            conn.execute(statement_for(sql, conn.dialect))
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
        log.info("database migrated to schema version %d", version)
        applied.append(version)
    return applied

"""The database schema, versioned, one source of truth for SQLite and PostgreSQL.

Migrations are written once, in the SQL both engines accept, with one difference translated
here: a Discord id needs 64 bits, which SQLite's INTEGER always has and PostgreSQL calls BIGINT.
Timestamps are ISO-8601 UTC text in both, so ordering and comparisons behave identically.

Version N is `migrations/NNNN_<what>.sql` (RoboDanny's ordered files): its statements turn
schema N-1 into N. Never edit a released file; add the next one. The files are read when a
database is migrated, never at import, and this module knows no feature: a feature's tables
are created by its file, and its queries live with the feature (bot/daily/tables.py,
bot/library/store.py, bot/follows/store.py).
`migrate` runs inside the caller's transaction, which each backend makes exclusive (SQLite:
BEGIN IMMEDIATE; PostgreSQL: an advisory lock), so two processes starting at once migrate once.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import Any, Protocol

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


_FILE = re.compile(r"^(\d{4})_\w+\.sql$")
_COMMENT = re.compile(r"^\s*--.*$", re.M)


@cache
def migrations() -> tuple[tuple[str, ...], ...]:
    """Every migration's statements, version 1 first, read once from `migrations/`."""
    folder = resources.files(__package__).joinpath("migrations")
    named = sorted(
        (int(found[1]), entry)
        for entry in folder.iterdir()
        if (found := _FILE.match(entry.name)) is not None
    )
    if [number for number, _ in named] != list(range(1, len(named) + 1)):
        raise StorageError(f"migrations are not numbered 1..N: {[e.name for _, e in named]}")
    return tuple(_statements(entry.read_text(encoding="utf-8")) for _, entry in named)


def _statements(text: str) -> tuple[str, ...]:
    """A migration file's statements: `;` ends one at the end of a line; `--` lines are notes."""
    body = _COMMENT.sub("", text)
    return tuple(s.strip() for s in re.split(r";\s*$", body, flags=re.M) if s.strip())


def schema_version() -> int:
    """The version this bot migrates to: the number of migration files."""
    return len(migrations())


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
    "follow_notices",
    "ratings",
    "feed_settings",
    "shown",
    "link_replies",
    "source_leases",
    "source_papers",
)

_INTEGER = re.compile(r"\bINTEGER\b")


def statement_for(sql: str, dialect: str) -> str:
    """A migration statement as `dialect` needs it (64-bit ids on PostgreSQL)."""
    return _INTEGER.sub("BIGINT", sql) if dialect == "postgresql" else sql


def current_version(conn: Conn) -> int:
    conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def migrate(conn: Conn, target: int | None = None) -> list[int]:
    """Bring the schema up to `target` inside the caller's transaction; the versions applied."""
    steps = migrations()
    target = len(steps) if target is None else target
    current = current_version(conn)
    if current > len(steps):
        raise StorageError(
            f"database schema version {current} is newer than this bot understands "
            f"({len(steps)}); upgrade the bot"
        )
    applied = []
    for version in range(current + 1, target + 1):
        for sql in steps[version - 1]:
            conn.execute(statement_for(sql, conn.dialect))
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
        log.info("database migrated to schema version %d", version)
        applied.append(version)
    return applied

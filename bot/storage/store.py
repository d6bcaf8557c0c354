"""The bot's database, opened from a URL: schedules, pick history, pool state and metadata
(bot/storage/daily.py, bot/storage/core.py) and the feature stores built over it.

`Storage` is backend-neutral: every method is a small async call running one transaction
function on the backend chosen by the URL (`bot.storage.sqlite` embedded by default,
`bot.storage.postgres` when DATABASE_URL names a server). The SQL is written once, in the
dialect both engines share, so switching is configuration.

Exactly once across processes: before a post is sent its pick is *claimed* (`claim_pick`): a
conditional update that only one transaction can win, recording the claimant and a lease. A
second process (misconfigured shards, an overlapping deploy, a restart while the first still
runs) sees the claim and waits for the lease instead of sending again.
"""

from __future__ import annotations

from bot.storage.core import Backend
from bot.storage.daily import DailyTables
from bot.storage.records import Pick, PoolState, Schedule
from bot.storage.schema import StorageError
from bot.storage.urls import parse_database_url

__all__ = ["Backend", "Pick", "PoolState", "Schedule", "Storage", "StorageError"]


class Storage(DailyTables):
    """The database of the bot: the core (bot/storage/core.py), the daily tables
    (bot/storage/daily.py), and the feature stores built over it."""

    @classmethod
    async def open(cls, url: str, *, migrate: bool = True) -> Storage:
        """Open (creating and migrating unless `migrate` is false) the database at `url`."""
        parsed = parse_database_url(url)
        backend: Backend
        if parsed.dialect == "postgresql":
            from bot.storage.postgres import PostgresBackend

            backend = await PostgresBackend.open(
                parsed.target, parsed.display, migrate_schema=migrate
            )
        else:
            from bot.storage.sqlite import SqliteBackend

            backend = await SqliteBackend.open(parsed.target, migrate_schema=migrate)
        return cls(backend)

"""The bot's database, opened from a URL: the storage core (bot/storage/core.py) every feature's
tables are built over (bot/daily/tables.py, bot/library/store.py, bot/follows/store.py).

`Storage` is backend-neutral: every method is a small async call running one transaction
function on the backend chosen by the URL (`bot.storage.sqlite` embedded by default,
`bot.storage.postgres` when DATABASE_URL names a server). The SQL is written once, in the
dialect both engines share, so switching is configuration.

Exactly once across processes: before a post is sent its pick is *claimed*
(`DailyTables.mark_sending`): a conditional update that only one transaction can win,
recording the claimant and a lease. A second process (misconfigured shards, an overlapping
deploy, a restart while the first still runs) sees the claim and waits for the lease instead
of sending again.
"""

from __future__ import annotations

from bot.storage.core import Backend, DatabaseBusy, StorageCore
from bot.storage.schema import StorageError
from bot.storage.urls import parse_database_url

__all__ = ["Backend", "DatabaseBusy", "Storage", "StorageError"]


class Storage(StorageCore):
    """The database of the bot, opened from a URL; the features' tables are built over it."""

    @classmethod
    async def open(cls, url: str, *, migrate: bool = True, timeout: float | None = None) -> Storage:
        """Open (creating and migrating unless `migrate` is false) the database at `url`.

        `timeout`: seconds a call may wait or run before it ends as `DatabaseBusy` (the bot
        passes `[storage] timeout_seconds`); None bounds nothing, for the admin tools that
        move whole databases in one transaction."""
        parsed = parse_database_url(url)
        backend: Backend
        if parsed.dialect == "postgresql":
            from bot.storage.postgres import PostgresBackend

            backend = await PostgresBackend.open(
                parsed.target, parsed.display, migrate_schema=migrate, timeout=timeout
            )
        else:
            from bot.storage.sqlite import SqliteBackend

            backend = await SqliteBackend.open(
                parsed.target, migrate_schema=migrate, timeout=timeout
            )
        return cls(backend)

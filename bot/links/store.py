"""Which servers asked for link replies (`/server links on`): the `link_replies` table
(`bot/storage/migrations/0005_links.sql`), SQL both SQLite and PostgreSQL accept.

A server without a row has replies off, so the default costs no row. `enabled_guilds` is read
once at start and kept in memory by the Discord side (every message in every server would
otherwise be a database read); `set` updates both.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot.storage.rows import ts
from bot.storage.store import Storage


class LinkReplies:
    """The per-server switch of link replies."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    async def enabled(self, guild_id: int) -> bool:
        def q(c: Any) -> bool:
            row = c.execute(
                "SELECT enabled FROM link_replies WHERE guild_id = ?", (guild_id,)
            ).fetchone()
            return bool(row and row[0])

        return await self.storage.run(q, write=False)

    async def enabled_guilds(self) -> set[int]:
        def q(c: Any) -> set[int]:
            rows = c.execute("SELECT guild_id FROM link_replies WHERE enabled = 1").fetchall()
            return {int(r[0]) for r in rows}

        return await self.storage.run(q, write=False)

    async def set(self, guild_id: int, enabled: bool, now: datetime) -> None:
        await self.storage.run(
            lambda c: c.execute(
                "INSERT INTO link_replies (guild_id, enabled, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT (guild_id) DO UPDATE SET enabled = excluded.enabled, "
                "updated_at = excluded.updated_at",
                (guild_id, 1 if enabled else 0, ts(now)),
            )
        )

"""What the bot keeps about readers: saved papers, server preferences and daily-post reactions.

Everything here goes through `Storage.run`, one transaction per call, with SQL that SQLite and
PostgreSQL both accept (`ON CONFLICT ... DO`, no AUTOINCREMENT, ISO-8601 UTC text timestamps),
so the move to PostgreSQL changes the connection, not these queries. The tables are created by
`bot/storage/migrations/0002_library_follows.sql`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.storage.rows import from_row, ts
from bot.storage.store import Storage


def _emoji_match(emoji: str) -> tuple[str, tuple[str, ...]]:
    """SQL matching a stored reaction's emoji. A custom emoji is keyed by its id (its name can
    change and "animated" is not in every event); rows stored before that hold `<:name:id>` or
    `<a:name:id>`, which the id matches too (ids are digits, so the LIKE pattern is literal)."""
    if emoji.isdigit():
        return "(emoji = ? OR emoji LIKE ?)", (emoji, f"<%:{emoji}>")
    return "emoji = ?", (emoji,)


@dataclass(frozen=True, slots=True)
class SavedPaper:
    """One paper in a reader's library."""

    user_id: int
    paper_id: str
    guild_id: int | None
    saved_at: datetime
    read_at: datetime | None

    @property
    def read(self) -> bool:
        return self.read_at is not None


@dataclass(frozen=True, slots=True)
class TopEntry:
    """A paper and how many readers of a server saved it or reacted to it."""

    paper_id: str
    count: int


class Library:
    """Saved papers, server preferences and reactions over one `Storage`."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    # -- saved papers ---------------------------------------------------------------------------

    async def save(
        self, user_id: int, paper_id: str, now: datetime, guild_id: int | None = None
    ) -> bool:
        """Add a paper; False when it was already saved (saving twice changes nothing)."""
        return await self.storage.run(
            lambda c: (
                c.execute(
                    "INSERT INTO saved (user_id, paper_id, guild_id, saved_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (user_id, paper_id) DO NOTHING",
                    (user_id, paper_id, guild_id, ts(now)),
                ).rowcount
                > 0
            )
        )

    async def save_many(
        self,
        user_id: int,
        paper_ids: Sequence[str],
        now: datetime,
        guild_id: int | None = None,
        *,
        max_saved: int,
    ) -> tuple[int, int]:
        """Add papers in one transaction (an import): (added, in the library before). Nothing
        is written when the library would then hold more than `max_saved` papers: added is
        -1, so a file is saved whole or not at all."""

        def q(c: Any) -> tuple[int, int]:
            have = {
                r[0] for r in c.execute("SELECT paper_id FROM saved WHERE user_id = ?", (user_id,))
            }
            new = [pid for pid in dict.fromkeys(paper_ids) if pid not in have]
            if new and len(have) + len(new) > max_saved:
                return -1, len(have)
            for pid in new:
                c.execute(
                    "INSERT INTO saved (user_id, paper_id, guild_id, saved_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (user_id, paper_id) DO NOTHING",
                    (user_id, pid, guild_id, ts(now)),
                )
            return len(new), len(have)

        return await self.storage.run(q)

    async def count(self, user_id: int) -> int:
        return await self.storage.run(
            lambda c: c.execute(
                "SELECT COUNT(*) FROM saved WHERE user_id = ?", (user_id,)
            ).fetchone()[0],
            write=False,
        )

    async def all(self, user_id: int) -> list[SavedPaper]:
        """Newest first; ties (same instant) by paper id so the order is stable."""
        return await self.storage.run(
            lambda c: [
                from_row(SavedPaper, r)
                for r in c.execute(
                    "SELECT * FROM saved WHERE user_id = ? ORDER BY saved_at DESC, paper_id",
                    (user_id,),
                )
            ],
            write=False,
        )

    async def get(self, user_id: int, paper_id: str) -> SavedPaper | None:
        def q(c: Any) -> SavedPaper | None:
            row = c.execute(
                "SELECT * FROM saved WHERE user_id = ? AND paper_id = ?", (user_id, paper_id)
            ).fetchone()
            return None if row is None else from_row(SavedPaper, row)

        return await self.storage.run(q, write=False)

    async def remove(self, user_id: int, paper_id: str) -> bool:
        return await self.storage.run(
            lambda c: (
                c.execute(
                    "DELETE FROM saved WHERE user_id = ? AND paper_id = ?", (user_id, paper_id)
                ).rowcount
                > 0
            )
        )

    async def mark_read(
        self, user_id: int, paper_id: str, now: datetime, read: bool = True
    ) -> bool:
        """Mark read (or unread again); False when the paper is not in the library."""
        return await self.storage.run(
            lambda c: (
                c.execute(
                    "UPDATE saved SET read_at = ? WHERE user_id = ? AND paper_id = ?",
                    (ts(now) if read else None, user_id, paper_id),
                ).rowcount
                > 0
            )
        )

    # -- server preferences ---------------------------------------------------------------------

    async def default_venue(self, guild_id: int) -> str | None:
        def q(c: Any) -> str | None:
            row = c.execute(
                "SELECT default_venue FROM guild_prefs WHERE guild_id = ?", (guild_id,)
            ).fetchone()
            return None if row is None else row[0]

        return await self.storage.run(q, write=False)

    async def set_default_venue(self, guild_id: int, venue: str | None, now: datetime) -> None:
        """Set (or with None clear) the venue /search, /random and /new use when given none."""
        await self.storage.run(
            lambda c: c.execute(
                "INSERT INTO guild_prefs (guild_id, default_venue, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT (guild_id) DO UPDATE SET default_venue = excluded.default_venue, "
                "updated_at = excluded.updated_at",
                (guild_id, venue, ts(now)),
            )
        )

    # -- reactions on daily posts ---------------------------------------------------------------

    async def daily_post_paper(self, guild_id: int, message_id: int) -> str | None:
        """The paper a server's daily post showed, or None when the message is not one."""

        def q(c: Any) -> str | None:
            row = c.execute(
                "SELECT paper_id FROM picks WHERE guild_id = ? AND message_id = ?",
                (guild_id, message_id),
            ).fetchone()
            return None if row is None else row[0]

        return await self.storage.run(q, write=False)

    async def add_reaction(
        self, guild_id: int, message_id: int, paper_id: str, user_id: int, emoji: str, now: datetime
    ) -> None:
        """Count a reaction; the same one again (a replayed or duplicated gateway event, even many
        at once) changes nothing: the primary key (message, member, emoji) keeps one row."""
        await self.storage.run(
            lambda c: c.execute(
                "INSERT INTO reactions (guild_id, message_id, paper_id, user_id, emoji, "
                "reacted_at) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (message_id, user_id, emoji) DO NOTHING",
                (guild_id, message_id, paper_id, user_id, emoji, ts(now)),
            )
        )

    async def remove_reaction(self, message_id: int, user_id: int, emoji: str) -> None:
        """A member took one reaction back (`emoji`: the key `add_reaction` was given)."""
        match, args = _emoji_match(emoji)
        await self.storage.run(
            lambda c: c.execute(
                f"DELETE FROM reactions WHERE message_id = ? AND user_id = ? AND {match}",
                (message_id, user_id, *args),
            )
        )

    async def clear_reactions(
        self, guild_id: int, message_ids: Sequence[int], emoji: str | None = None
    ) -> None:
        """Forget the reactions of these messages of a server, or only those with `emoji`: the
        post was cleared (all reactions, or one emoji's) or deleted (alone or in bulk)."""
        match, extra = _emoji_match(emoji) if emoji is not None else ("1 = 1", ())
        sql = f"DELETE FROM reactions WHERE guild_id = ? AND message_id = ? AND {match}"
        rows = [(guild_id, message_id, *extra) for message_id in message_ids]
        if rows:
            await self.storage.run(lambda c: c.executemany(sql, rows))

    async def top_saved(self, guild_id: int, since: datetime | None, limit: int) -> list[TopEntry]:
        """Papers saved by the most readers from this server (saves made in it) since `since`."""
        return await self._top(
            "SELECT paper_id, COUNT(*) AS n FROM saved WHERE guild_id = ? AND saved_at >= ? "
            "GROUP BY paper_id ORDER BY n DESC, paper_id LIMIT ?",
            guild_id,
            since,
            limit,
        )

    async def top_reacted(
        self, guild_id: int, since: datetime | None, limit: int
    ) -> list[TopEntry]:
        """Daily posts by the number of readers who reacted (any emoji counts a reader once)."""
        return await self._top(
            "SELECT paper_id, COUNT(DISTINCT user_id) AS n FROM reactions WHERE guild_id = ? "
            "AND reacted_at >= ? GROUP BY paper_id ORDER BY n DESC, paper_id LIMIT ?",
            guild_id,
            since,
            limit,
        )

    async def _top(
        self, sql: str, guild_id: int, since: datetime | None, limit: int
    ) -> list[TopEntry]:
        start = ts(since) if since is not None else ""
        return await self.storage.run(
            lambda c: [TopEntry(r[0], r[1]) for r in c.execute(sql, (guild_id, start, limit))],
            write=False,
        )

    # -- forgetting a reader --------------------------------------------------------------------

    async def forget_user(self, user_id: int) -> dict[str, int]:
        """Delete every row about `user_id` (library, reactions, 👍 / 👎, personal follows, their
        feed settings and what they were sent or shown), in one transaction; returns rows
        deleted per kind."""

        def q(c: Any) -> dict[str, int]:
            counts = {
                "saved papers": c.execute(
                    "DELETE FROM saved WHERE user_id = ?", (user_id,)
                ).rowcount,
                "reactions": c.execute(
                    "DELETE FROM reactions WHERE user_id = ?", (user_id,)
                ).rowcount,
            }
            follows = [
                r[0]
                for r in c.execute(
                    "SELECT follow_id FROM follows WHERE user_id = ? AND channel_id IS NULL",
                    (user_id,),
                )
            ]
            for follow_id in follows:
                c.execute("DELETE FROM deliveries WHERE follow_id = ?", (follow_id,))
            c.execute("DELETE FROM deliveries WHERE target = ?", (f"dm:{user_id}",))
            c.execute("DELETE FROM follow_notices WHERE target = ?", (f"dm:{user_id}",))
            counts["follows"] = c.execute(
                "DELETE FROM follows WHERE user_id = ? AND channel_id IS NULL", (user_id,)
            ).rowcount
            # Channel follows belong to the server; only who created them is forgotten.
            c.execute("UPDATE follows SET user_id = 0 WHERE user_id = ?", (user_id,))
            # For you (bot/foryou): ratings, feed settings (personal follows' and those the
            # member made for a channel follow stay the server's), the shown memory.
            counts["ratings"] = c.execute(
                "DELETE FROM ratings WHERE user_id = ?", (user_id,)
            ).rowcount
            for follow_id in follows:
                c.execute("DELETE FROM feed_settings WHERE feed_id = ?", (follow_id,))
            c.execute("UPDATE feed_settings SET user_id = 0 WHERE user_id = ?", (user_id,))
            c.execute("DELETE FROM shown WHERE user_id = ?", (user_id,))
            return counts

        return await self.storage.run(q)

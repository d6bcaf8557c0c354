"""Topic follows: who follows which query, which papers the corpus already had, what was sent.

Why "seen" papers are stored: a follow is told about papers that are *new to the corpus*, and
"new" must survive restarts. `corpus_papers` holds every paper id the bot has served; the first
time (an empty table) the whole corpus is recorded without notifying anyone.

Why deliveries are keyed by target, not by follow: "never the same paper twice to the same
follower" holds even when one reader has two follows that both match a paper. A target is
`dm:{user id}` or `ch:{channel id}`. Deliveries are recorded *before* the message is sent
(at most once: a crash mid-send loses a notice rather than repeating it).

Same SQL dialect rules as `bot.library.store` (portable to PostgreSQL).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from bot.storage.rows import from_row, ts

if TYPE_CHECKING:
    from bot.storage.store import Storage


@dataclass(frozen=True, slots=True)
class Follow:
    """A saved query whose new matches go to a user's DMs (channel_id None) or to a channel."""

    follow_id: str
    user_id: int
    guild_id: int | None
    channel_id: int | None
    query: str
    created_at: datetime
    disabled_reason: str | None

    @property
    def target(self) -> str:
        return f"ch:{self.channel_id}" if self.channel_id is not None else f"dm:{self.user_id}"

    @property
    def active(self) -> bool:
        return self.disabled_reason is None


class Follows:
    """Follows, deliveries and the set of papers already in the corpus, over one `Storage`."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    async def add(
        self,
        user_id: int,
        query: str,
        now: datetime,
        *,
        guild_id: int | None = None,
        channel_id: int | None = None,
    ) -> Follow:
        follow = Follow(secrets.token_hex(4), user_id, guild_id, channel_id, query, now, None)
        await self.storage.run(
            lambda c: c.execute(
                "INSERT INTO follows (follow_id, user_id, guild_id, channel_id, query, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (follow.follow_id, user_id, guild_id, channel_id, query, ts(now)),
            )
        )
        return follow

    async def get(self, follow_id: str) -> Follow | None:
        def q(c: Any) -> Follow | None:
            row = c.execute("SELECT * FROM follows WHERE follow_id = ?", (follow_id,)).fetchone()
            return None if row is None else from_row(Follow, row)

        return await self.storage.run(q, write=False)

    async def _list(self, where: str, args: tuple[Any, ...]) -> list[Follow]:
        return await self.storage.run(
            lambda c: [
                from_row(Follow, r)
                for r in c.execute(
                    f"SELECT * FROM follows WHERE {where} ORDER BY created_at, follow_id", args
                )
            ],
            write=False,
        )

    async def personal(self, user_id: int) -> list[Follow]:
        """A user's DM follows."""
        return await self._list("user_id = ? AND channel_id IS NULL", (user_id,))

    async def of_guild(self, guild_id: int) -> list[Follow]:
        """A server's channel follows."""
        return await self._list("guild_id = ? AND channel_id IS NOT NULL", (guild_id,))

    async def active(self) -> list[Follow]:
        return await self._list("disabled_reason IS NULL", ())

    async def remove(self, follow_id: str) -> bool:
        """Delete a follow; what it delivered stays recorded so a re-follow does not repeat."""
        return await self.storage.run(
            lambda c: (
                c.execute("DELETE FROM follows WHERE follow_id = ?", (follow_id,)).rowcount > 0
            )
        )

    async def disable(self, follow_id: str, reason: str) -> None:
        await self.storage.run(
            lambda c: c.execute(
                "UPDATE follows SET disabled_reason = ? WHERE follow_id = ?", (reason, follow_id)
            )
        )

    # -- the corpus as the bot has seen it ------------------------------------------------------

    async def record_corpus(self, paper_ids: Iterable[str], now: datetime) -> list[str]:
        """Record the corpus now served; return the ids it had never served before.

        The very first call (nothing recorded yet) returns nothing: a fresh install has no
        "new" papers, only a corpus.
        """
        ids = list(dict.fromkeys(paper_ids))

        def q(c: Any) -> list[str]:
            first = c.execute("SELECT COUNT(*) FROM corpus_papers").fetchone()[0] == 0
            known = {r[0] for r in c.execute("SELECT paper_id FROM corpus_papers")}
            new = [pid for pid in ids if pid not in known]
            for pid in new:  # plain execute: the one call both backends' connections share
                c.execute(
                    "INSERT INTO corpus_papers (paper_id, added_at) VALUES (?, ?) "
                    "ON CONFLICT (paper_id) DO NOTHING",
                    (pid, ts(now)),
                )
            return [] if first else new

        return await self.storage.run(q)

    # -- deliveries -----------------------------------------------------------------------------

    async def claim(
        self, follow: Follow, paper_ids: Sequence[str], now: datetime
    ) -> tuple[str, list[str]]:
        """Record `paper_ids` as delivered to the follow's target, skipping ones it already got.

        Returns (batch id, the ids claimed, in order). Done before sending: at most once.
        """
        batch = secrets.token_hex(6)

        def q(c: Any) -> list[str]:
            claimed: list[str] = []
            for pid in paper_ids:
                cur = c.execute(
                    "INSERT INTO deliveries (target, paper_id, follow_id, batch_id, position, "
                    "sent_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (target, paper_id) DO NOTHING",
                    (follow.target, pid, follow.follow_id, batch, len(claimed), ts(now)),
                )
                if cur.rowcount:
                    claimed.append(pid)
            return claimed

        return batch, await self.storage.run(q)

    async def batch(self, batch_id: str) -> list[str]:
        """The papers of one notification, in the order they were listed (for its ▶ button)."""
        return await self.storage.column(
            "SELECT paper_id FROM deliveries WHERE batch_id = ? ORDER BY position", (batch_id,)
        )

    async def delivered(self, target: str) -> list[str]:
        return await self.storage.column(
            "SELECT paper_id FROM deliveries WHERE target = ? ORDER BY sent_at, position", (target,)
        )

"""Topic follows: who follows which query, which papers the corpus already had, what was sent.

Why "seen" papers are stored: a follow is told about papers that are *new to the corpus*, and
"new" must survive restarts. `corpus_papers` holds every paper id the bot has served; the first
time (an empty table) the whole corpus is recorded without notifying anyone.

Why deliveries are keyed by target, not by follow: "never the same paper twice to the same
follower" holds even when one reader has two follows that both match a paper. A target is
`dm:{user id}` or `ch:{channel id}`. Claiming papers for a target also queues one notice
(`follow_notices`, one row per batch), whose way out is claim, send, confirm, as the daily post's
(`bot.follows.notices.deliver`): a failed send stays queued and is retried, and a send that
reached Discord is confirmed once, so a notice is neither lost nor repeated.

Why the limits are checked in the inserting transaction: checked beforehand, 15 `/follow add`
at once all saw room and all stored. SQLite's `BEGIN IMMEDIATE` already serialises writers;
PostgreSQL takes a transaction-scoped advisory lock on the member (or server) first.

Same SQL dialect rules as `bot.library.store` (portable to PostgreSQL).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from bot.follows.outbox import UNCLAIM, Outbox
from bot.foryou import claim_shown
from bot.storage.rows import from_row, ts

if TYPE_CHECKING:
    from bot.storage.schema import Conn
    from bot.storage.store import Storage


# The query of a member's For you feed: their new papers ranked by `bot.foryou`, delivered
# as a follow's notices are. No search runs it (`for:you` alone is an empty query), so
# `/follow add` cannot make one by accident.
FOR_YOU = "for:you"


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


class FollowRefused(Exception):
    """A follow not added, for a reason the member is told."""


class TooManyFollows(FollowRefused):
    def __init__(self, limit: int) -> None:
        super().__init__(f"at most {limit} follows")
        self.limit = limit


class AlreadyFollowed(FollowRefused):
    def __init__(self, follow: Follow) -> None:
        super().__init__(f"already followed: {follow.follow_id}")
        self.follow = follow


def _serialise(c: Conn, scope: str, owner: int | None) -> None:
    """Make this transaction the only one adding to `owner`'s follows until it ends (SQLite's
    BEGIN IMMEDIATE already is; on PostgreSQL, READ COMMITTED lets two counts run side by side:
    a transaction-scoped advisory lock on a 64-bit key of the owner)."""
    if c.dialect == "postgresql":
        digest = hashlib.blake2b(f"follows:{scope}:{owner}".encode(), digest_size=8).digest()
        c.execute("SELECT pg_advisory_xact_lock(?)", (int.from_bytes(digest, signed=True),))


class Follows:
    """Follows, deliveries and the set of papers already in the corpus, over one `Storage`."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self.outbox = Outbox(storage)

    async def add(
        self,
        user_id: int,
        query: str,
        *,
        now: datetime,
        channel: tuple[int, int] | None = None,
        limit: int | None = None,
    ) -> Follow:
        """Store a follow unless its owner (the member for DM follows, the server for channel
        follows) already has `limit`, or the same one: `TooManyFollows`, `AlreadyFollowed`.
        `channel` is (server id, channel id) for a channel follow, None for one by DM.
        Counted and inserted in one serialised transaction, so concurrent adds keep the limit."""
        guild_id, channel_id = channel if channel is not None else (None, None)
        follow = Follow(secrets.token_hex(4), user_id, guild_id, channel_id, query, now, None)
        owner: int | None = user_id if channel_id is None else guild_id
        scope, where = (
            ("user", "user_id = ? AND channel_id IS NULL")
            if channel_id is None
            else ("guild", "guild_id = ? AND channel_id IS NOT NULL")
        )

        def q(c: Conn) -> None:
            _serialise(c, scope, owner)
            existing = [
                from_row(Follow, r)
                for r in c.execute(
                    f"SELECT * FROM follows WHERE {where} ORDER BY created_at, follow_id", (owner,)
                )
            ]
            if limit is not None and len(existing) >= limit:
                raise TooManyFollows(limit)
            for f in existing:
                if f.query == query and f.channel_id == channel_id:
                    raise AlreadyFollowed(f)
            c.execute(
                "INSERT INTO follows (follow_id, user_id, guild_id, channel_id, query, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (follow.follow_id, user_id, guild_id, channel_id, query, ts(now)),
            )

        await self.storage.run(q)
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
        """Delete a follow and drop its unsent notices; what it delivered stays recorded so a
        re-follow does not repeat."""

        def q(c: Conn) -> bool:
            c.execute(
                "UPDATE follow_notices SET state = 'dropped', " + UNCLAIM + " WHERE follow_id = ? "
                "AND state IN ('pending', 'sending')",
                (follow_id,),
            )
            c.execute("DELETE FROM feed_settings WHERE feed_id = ?", (follow_id,))
            return bool(
                c.execute("DELETE FROM follows WHERE follow_id = ?", (follow_id,)).rowcount > 0
            )

        return await self.storage.run(q)

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
        self,
        follow: Follow,
        paper_ids: Sequence[str],
        now: datetime,
        *,
        not_before: datetime | None = None,
    ) -> tuple[str, list[str]]:
        """Reserve `paper_ids` for the follow's target, skipping ones it already got, and
        queue their notice (state `pending`) in the same transaction.

        A DM follow also skips what its member was already shown by any feed, or said 👎 to,
        and remembers the rest as shown (`bot.foryou.claim_shown`, the one memory per member).
        `not_before` (a daily or weekly feed) queues the notice for that time; matches found
        while it waits, untouched by any sender, join it rather than make a second message.

        Returns (batch id, the ids claimed, in order). Sending is `mark_sending`, `mark_sent`.
        """

        def q(c: Conn) -> tuple[str, list[str]]:
            batch, position = secrets.token_hex(6), 0
            if not_before is not None:
                waiting = c.execute(
                    "SELECT batch_id, papers FROM follow_notices WHERE follow_id = ? "
                    "AND state = 'pending' AND attempts = 0 AND next_attempt_at = ? "
                    "ORDER BY created_at LIMIT 1",
                    (follow.follow_id, ts(not_before)),
                ).fetchone()
                # Taken first (the row locked until this transaction ends, state and attempts
                # checked as a sender's claim checks them): a sender that claims it after this
                # sees the papers added here; one that claimed it before leaves it untouched.
                if (
                    waiting is not None
                    and c.execute(
                        "UPDATE follow_notices SET updated_at = ? WHERE batch_id = ? "
                        "AND state = 'pending' AND attempts = 0",
                        (ts(now), waiting[0]),
                    ).rowcount
                ):
                    batch, position = waiting[0], int(waiting[1])
            ids = list(paper_ids)
            if follow.channel_id is None:
                ids = claim_shown(c, follow.user_id, ids, "follow", now)
            claimed: list[str] = []
            for pid in ids:
                cur = c.execute(
                    "INSERT INTO deliveries (target, paper_id, follow_id, batch_id, position, "
                    "sent_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (target, paper_id) DO NOTHING",
                    (follow.target, pid, follow.follow_id, batch, position + len(claimed), ts(now)),
                )
                if cur.rowcount:
                    claimed.append(pid)
            if claimed and position:
                c.execute(
                    "UPDATE follow_notices SET papers = papers + ? WHERE batch_id = ?",
                    (len(claimed), batch),
                )
            elif claimed:
                c.execute(
                    "INSERT INTO follow_notices (batch_id, follow_id, target, papers, "
                    "next_attempt_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        batch,
                        follow.follow_id,
                        follow.target,
                        len(claimed),
                        ts(not_before),
                        ts(now),
                        ts(now),
                    ),
                )
            return batch, claimed

        return await self.storage.run(q)

    async def batch(self, batch_id: str) -> list[str]:
        """The papers of one notification, in the order they were listed."""
        return await self.storage.column(
            "SELECT paper_id FROM deliveries WHERE batch_id = ? ORDER BY position", (batch_id,)
        )

    async def batch_page(self, batch_id: str, offset: int, limit: int) -> list[str]:
        """One page of a notification's papers (a batch can hold the whole corpus: the ◀ ▶
        of a notice read only the page they show)."""
        return await self.storage.column(
            "SELECT paper_id FROM deliveries WHERE batch_id = ? AND position >= ? "
            "ORDER BY position LIMIT ?",
            (batch_id, offset, limit),
        )

    async def batch_size(self, batch_id: str) -> int:
        [count] = await self.storage.column(
            "SELECT COUNT(*) FROM deliveries WHERE batch_id = ?", (batch_id,)
        )
        return int(count)

    async def delivered(self, target: str) -> list[str]:
        return await self.storage.column(
            "SELECT paper_id FROM deliveries WHERE target = ? ORDER BY sent_at, position", (target,)
        )

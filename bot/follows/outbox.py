"""A follow's notices on their way out: claim, send, confirm, as the daily post's
(`bot.follows.notices.deliver`). A failed send stays queued and is retried; a send that reached
Discord is confirmed once, so a notice is neither lost nor repeated. One row per batch in
`follow_notices` (bot/storage/migrations/0004_follow_deliveries.sql), queued by
`Follows.claim` in the transaction that reserves its papers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.storage.rows import from_row, ts
from bot.storage.schema import Conn
from bot.storage.store import Storage


@dataclass(frozen=True, slots=True)
class NoticeRecord:
    """One notice (a batch of papers for one follow) on its way out: `pending` (queued, or
    waiting for `next_attempt_at` after a failure), `sending` (claimed by `claim_owner` until
    `claim_until`), `sent`, or `dropped` (its follow stopped)."""

    batch_id: str
    follow_id: str
    target: str
    papers: int
    state: str
    attempts: int
    error: str | None
    next_attempt_at: datetime | None
    first_attempt_at: datetime | None
    claim_owner: str | None
    claim_until: datetime | None
    message_id: int | None
    created_at: datetime
    updated_at: datetime
    sent_at: datetime | None


CONSOLE_TARGET = "dm:0"  # the console's one reader (bot.console.library.LOCAL_USER)
UNCLAIM = "claim_owner = NULL, claim_until = NULL"
_NOTICE = "SELECT * FROM follow_notices WHERE batch_id = ?"


def _notice(row: Any) -> NoticeRecord:
    return from_row(NoticeRecord, row)


class Outbox:
    """The notice queue of the follows, over one `Storage` (`Follows(storage).outbox`)."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    async def notice(self, batch_id: str) -> NoticeRecord | None:
        return await self.storage.one(_NOTICE, (batch_id,), _notice)

    async def due(self, now: datetime, *, console: bool = False) -> list[NoticeRecord]:
        """Notices to send now, oldest first: queued ones, retries whose time has come, and
        sends whose claim ran out unconfirmed (their sender died: look before resending).
        The console's reader's notices are the console's; every other is the bot's."""
        return await self.storage.rows(
            "SELECT * FROM follow_notices WHERE target "
            + ("= ?" if console else "<> ?")
            + " AND ((state = 'pending' AND (next_attempt_at IS NULL OR next_attempt_at <= ?)) "
            "OR (state = 'sending' AND (claim_until IS NULL OR claim_until <= ?))) "
            "ORDER BY created_at, batch_id",
            (CONSOLE_TARGET, ts(now), ts(now)),
            _notice,
        )

    async def next_due(self, *, console: bool = False) -> datetime | None:
        """When the earliest unsent notice may be tried (None: nothing waits)."""
        [when] = await self.storage.column(
            "SELECT MIN(CASE WHEN state = 'pending' THEN COALESCE(next_attempt_at, created_at) "
            "ELSE COALESCE(claim_until, updated_at) END) FROM follow_notices "
            "WHERE state IN ('pending', 'sending') AND target " + ("= ?" if console else "<> ?"),
            (CONSOLE_TARGET,),
        )
        return None if when is None else datetime.fromisoformat(when)

    async def waiting(self, follow_ids: Sequence[str]) -> dict[str, tuple[int, str]]:
        """Per follow, its notices that failed at least once and are still unsent, with the
        latest failure: what `/follow list` warns about."""
        marks = ", ".join("?" for _ in follow_ids) or "NULL"  # IN (NULL): none, valid SQL
        rows = await self.storage.rows(
            "SELECT follow_id, error FROM follow_notices WHERE state IN ('pending', 'sending') "
            f"AND attempts > 0 AND error IS NOT NULL AND follow_id IN ({marks}) "
            "ORDER BY updated_at, batch_id",
            tuple(follow_ids),
            lambda r: (str(r[0]), str(r[1])),
        )
        found: dict[str, tuple[int, str]] = {}
        for follow_id, error in rows:
            found[follow_id] = (found.get(follow_id, (0, ""))[0] + 1, error)
        return found

    async def mark_sending(
        self, batch_id: str, owner: str, now: datetime, lease_until: datetime, *, attempts: int
    ) -> NoticeRecord | None:
        """Claim a notice for sending; durable, written before the HTTP call.

        Only one transaction wins: the update applies while the notice is unsent, its attempt
        count is still `attempts` (what the caller read), and no other owner holds an unexpired
        lease. None: someone else has it, do not send.
        """

        def q(c: Conn) -> NoticeRecord | None:
            cur = c.execute(
                "UPDATE follow_notices SET state = 'sending', attempts = attempts + 1, "
                "next_attempt_at = NULL, first_attempt_at = COALESCE(first_attempt_at, ?), "
                "claim_owner = ?, claim_until = ?, updated_at = ? WHERE batch_id = ? "
                "AND attempts = ? AND state IN ('pending', 'sending') "
                "AND (claim_until IS NULL OR claim_until <= ? OR claim_owner = ?)",
                (ts(now), owner, ts(lease_until), ts(now), batch_id, attempts, ts(now), owner),
            )
            if cur.rowcount != 1:
                return None
            return _notice(c.execute(_NOTICE, (batch_id,)).fetchone())

        return await self.storage.run(q, durable=True)

    async def mark_sent(self, batch_id: str, message_id: int, now: datetime) -> None:
        await self._set(
            batch_id,
            "state = 'sent', message_id = ?, error = NULL, next_attempt_at = NULL, sent_at = ?, "
            "updated_at = ?",
            (message_id, ts(now), ts(now)),
        )

    async def mark_retry(
        self, batch_id: str, error: str, next_attempt_at: datetime, now: datetime
    ) -> None:
        """A transient failure: back to pending, not before `next_attempt_at`."""
        await self._set(
            batch_id,
            "state = 'pending', error = ?, next_attempt_at = ?, updated_at = ?",
            (error, ts(next_attempt_at), ts(now)),
        )

    async def mark_dropped(self, batch_id: str, reason: str, now: datetime) -> None:
        """Never to be sent (its follow stopped or was removed); its papers stay claimed."""
        await self._set(
            batch_id,
            "state = 'dropped', error = ?, next_attempt_at = NULL, updated_at = ?",
            (reason, ts(now)),
        )

    async def _set(self, batch_id: str, sql: str, args: tuple[Any, ...]) -> None:
        await self.storage.run(
            lambda c: c.execute(
                f"UPDATE follow_notices SET {sql}, {UNCLAIM} WHERE batch_id = ?",
                (*args, batch_id),
            )
        )

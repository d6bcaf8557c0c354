"""The paper-of-the-day tables: schedules, each server's pool state and its pick history.

The exactly-once claim (`mark_sending`) is described in `bot.daily.delivery`; the tables are
created by `bot/storage/migrations/0001_daily.sql` and `0003_pick_claims.sql`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot.daily.records import Pick, PoolState, Schedule
from bot.daily.rules import pick_marker
from bot.storage.core import StorageCore
from bot.storage.rows import from_row, ts
from bot.storage.schema import Conn, StorageError


def _schedule(row: Any) -> Schedule:
    return from_row(Schedule, row, time="post_time")


def _pick(row: Any) -> Pick:
    return from_row(Pick, row)


class DailyTables:
    """Schedules, pool state and picks over one `Storage` (composed, not inherited: the storage
    package knows no feature)."""

    def __init__(self, storage: StorageCore) -> None:
        self.storage = storage

    # -- schedules ------------------------------------------------------------------------

    async def get_schedule(self, guild_id: int) -> Schedule | None:
        return await self.storage.one(
            "SELECT * FROM schedules WHERE guild_id = ?", (guild_id,), _schedule
        )

    async def active_schedules(self) -> list[Schedule]:
        """Schedules that should post: enabled and not stopped by a permanent error."""
        return await self.storage.rows(
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
        carry: tuple[str, str] | None = None,
    ) -> Schedule:
        """Enable (or replace) a schedule, clearing any stop reason.

        `drop_pending_from`: forget picks from that local date on that were never attempted,
        so a new topic applies to the next day nobody has seen yet. `carry` (from, to): the
        pick /today showed for the date `from` (the old zone's today) becomes the pick of
        `to` (the new zone's today) when it was never attempted, so a change of zone does not
        change the paper of the day a member already saw.
        """

        def q(c: Conn) -> Schedule:
            c.execute(
                "INSERT INTO schedules (guild_id, channel_id, post_time, timezone, topic, enabled,"
                " stopped_reason, start_date, updated_at) VALUES (?, ?, ?, ?, ?, 1, NULL, ?, ?) "
                "ON CONFLICT (guild_id) DO UPDATE SET channel_id = excluded.channel_id, "
                "post_time = excluded.post_time, timezone = excluded.timezone, "
                "topic = excluded.topic, enabled = 1, stopped_reason = NULL, "
                "start_date = excluded.start_date, updated_at = excluded.updated_at",
                (guild_id, channel_id, time, timezone, topic, start_date, ts(now)),
            )
            if carry is not None:  # first: the carried pick may be dated after today
                _carry_pick(c, guild_id, *carry)
            if drop_pending_from is not None:
                c.execute(
                    "DELETE FROM picks WHERE guild_id = ? AND local_date >= ? "
                    "AND state = 'pending' AND attempts = 0",
                    (guild_id, drop_pending_from),
                )
            return _schedule(
                c.execute("SELECT * FROM schedules WHERE guild_id = ?", (guild_id,)).fetchone()
            )

        return await self.storage.run(q)

    async def disable_schedule(self, guild_id: int, now: datetime) -> bool:
        """Turn a schedule off; history and pool state are kept. False if there was none."""
        return await self.storage.run(
            lambda c: (
                c.execute(
                    "UPDATE schedules SET enabled = 0, updated_at = ? "
                    "WHERE guild_id = ? AND enabled = 1",
                    (ts(now), guild_id),
                ).rowcount
                > 0
            )
        )

    async def stop_schedule(self, guild_id: int, reason: str, now: datetime) -> None:
        """Stop a server's schedule for a reason shown in /daily status (cleared by /daily set)."""
        await self.storage.run(lambda c: _stop(c, guild_id, reason, now))

    # -- pool state -----------------------------------------------------------------------

    async def pool(self, guild_id: int, new_seed: int) -> PoolState:
        """The server's pool state, created with `new_seed` the first time it is asked for."""

        def q(c: Conn) -> PoolState:
            c.execute(
                "INSERT INTO pools (guild_id, seed, epoch) VALUES (?, ?, 0) "
                "ON CONFLICT (guild_id) DO NOTHING",
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

        return await self.storage.run(q)

    # -- picks ----------------------------------------------------------------------------

    async def get_pick(self, guild_id: int, local_date: str) -> Pick | None:
        return await self.storage.one(_PICK, (guild_id, local_date), _pick)

    async def create_pick(
        self, guild_id: int, local_date: str, paper_id: str, epoch: int, marker: str, now: datetime
    ) -> Pick:
        """Record the pick for (guild, date) unless one exists; either way return the stored one.

        Advancing the pool's epoch happens in the same transaction, so a reshuffle is never
        half-recorded.
        """

        def q(c: Conn) -> Pick:
            cur = c.execute(
                "INSERT INTO picks (guild_id, local_date, paper_id, epoch, marker, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (guild_id, local_date) DO NOTHING",
                (guild_id, local_date, paper_id, epoch, marker, ts(now), ts(now)),
            )
            if cur.rowcount:
                c.execute(
                    "UPDATE pools SET epoch = ? WHERE guild_id = ? AND epoch < ?",
                    (epoch, guild_id, epoch),
                )
            return _pick(c.execute(_PICK, (guild_id, local_date)).fetchone())

        return await self.storage.run(q)

    async def replace_pick(
        self, guild_id: int, local_date: str, paper_id: str, epoch: int, marker: str, now: datetime
    ) -> Pick:
        """Put another paper in a pick not yet sent (its paper left the corpus before it was
        posted), in one transaction with the pool's epoch, as `create_pick` does."""

        def q(c: Conn) -> Pick:
            c.execute(
                "UPDATE picks SET paper_id = ?, epoch = ?, marker = ?, updated_at = ? "
                "WHERE guild_id = ? AND local_date = ? AND state != 'sent'",
                (paper_id, epoch, marker, ts(now), guild_id, local_date),
            )
            c.execute(
                "UPDATE pools SET epoch = ? WHERE guild_id = ? AND epoch < ?",
                (epoch, guild_id, epoch),
            )
            row = c.execute(_PICK, (guild_id, local_date)).fetchone()
            if row is None:
                raise StorageError(f"no pick for guild {guild_id} on {local_date}")
            return _pick(row)

        return await self.storage.run(q)

    async def _update_pick(
        self,
        guild_id: int,
        local_date: str,
        sql: str,
        args: tuple[Any, ...],
        stop_reason: str | None = None,
        now: datetime | None = None,
        owner: str | None = None,
    ) -> tuple[Pick, bool]:
        """The pick after the update, and whether the update applied.

        With `owner`, it applies only while the pick is unsent and no other process holds a
        live claim on it: a process whose send outlived its lease (a long rate-limit wait, a
        pause) then writes nothing over the post another process made or is making meanwhile.
        """
        where, fence = "guild_id = ? AND local_date = ?", [guild_id, local_date]
        if owner is not None:
            where += (
                " AND state != 'sent' AND (claim_owner IS NULL OR claim_owner = ?"
                " OR claim_until <= ?)"
            )
            fence += [owner, ts(now)]

        def q(c: Conn) -> tuple[Pick, bool]:
            applied = c.execute(f"UPDATE picks SET {sql} WHERE {where}", (*args, *fence)).rowcount
            row = c.execute(_PICK, (guild_id, local_date)).fetchone()
            if row is None:
                raise StorageError(f"no pick for guild {guild_id} on {local_date}")
            if applied and stop_reason is not None and now is not None:
                _stop(c, guild_id, stop_reason, now)
            return _pick(row), applied == 1

        return await self.storage.run(q)

    async def mark_sending(
        self,
        guild_id: int,
        local_date: str,
        channel_id: int,
        now: datetime,
        *,
        owner: str | None = None,
        lease_until: datetime | None = None,
        attempts: int | None = None,
    ) -> Pick | None:
        """Claim the pick for sending; durable, written before the HTTP call.

        Only one transaction can win: the update applies only while the pick is unsent, its
        attempt count is still `attempts` (what the caller read), and no other `owner` holds an
        unexpired lease. None means someone else claimed it: do not send. A crash after this
        is checked on restart (once the lease has run out).
        """
        where = "state IN ('pending', 'sending') AND (claim_until IS NULL OR claim_until <= ?" + (
            " OR claim_owner = ?)" if owner is not None else ")"
        )
        args: list[Any] = [ts(now)] + ([owner] if owner is not None else [])
        if attempts is not None:
            where += " AND attempts = ?"
            args.append(attempts)

        def q(c: Conn) -> Pick | None:
            cur = c.execute(
                "UPDATE picks SET state = 'sending', channel_id = ?, attempts = attempts + 1, "
                "next_attempt_at = NULL, first_attempt_at = COALESCE(first_attempt_at, ?), "
                "updated_at = ?, claim_owner = ?, claim_until = ? "
                f"WHERE guild_id = ? AND local_date = ? AND {where}",
                (
                    channel_id,
                    ts(now),
                    ts(now),
                    owner,
                    ts(lease_until),
                    guild_id,
                    local_date,
                    *args,
                ),
            )
            if cur.rowcount != 1:
                return None
            return _pick(c.execute(_PICK, (guild_id, local_date)).fetchone())

        return await self.storage.run(q, durable=True)

    async def mark_sent(
        self,
        guild_id: int,
        local_date: str,
        message_id: int,
        now: datetime,
        channel_id: int | None = None,
    ) -> Pick:
        """Record the post as made: always applies, whoever claimed it (the post exists)."""
        pick, _applied = await self._update_pick(
            guild_id,
            local_date,
            "state = 'sent', message_id = ?, channel_id = COALESCE(?, channel_id), error = NULL, "
            "next_attempt_at = NULL, sent_at = ?, updated_at = ?, " + _UNCLAIM,
            (message_id, channel_id, ts(now), ts(now)),
        )
        return pick

    async def mark_retry(
        self,
        guild_id: int,
        local_date: str,
        error: str,
        next_attempt_at: datetime,
        now: datetime,
        *,
        owner: str | None = None,
    ) -> Pick | None:
        """A transient failure: back to pending, not before `next_attempt_at`. With `owner`,
        None when the pick was no longer this process's to record (see `_update_pick`)."""
        pick, applied = await self._update_pick(
            guild_id,
            local_date,
            "state = 'pending', error = ?, next_attempt_at = ?, updated_at = ?, " + _UNCLAIM,
            (error, ts(next_attempt_at), ts(now)),
            now=now,
            owner=owner,
        )
        return pick if applied else None

    async def mark_failed(
        self,
        guild_id: int,
        local_date: str,
        error: str,
        now: datetime,
        stop_schedule: bool = False,
        *,
        owner: str | None = None,
    ) -> Pick | None:
        """Give up on this date; with `stop_schedule`, also stop the server (reason = error).
        With `owner`, None when the pick was no longer this process's to record: nothing is
        written, the schedule included."""
        pick, applied = await self._update_pick(
            guild_id,
            local_date,
            "state = 'failed', error = ?, next_attempt_at = NULL, updated_at = ?, " + _UNCLAIM,
            (error, ts(now)),
            stop_reason=error if stop_schedule else None,
            now=now,
            owner=owner,
        )
        return pick if applied else None

    async def attempted_unfinished(self) -> list[Pick]:
        """Attempted picks not yet confirmed (in flight, retrying, or cut short by a crash)."""
        return await self.storage.rows(
            "SELECT * FROM picks WHERE state = 'sending' OR (state = "
            "'pending' AND attempts > 0) ORDER BY guild_id, local_date",
            (),
            _pick,
        )

    async def recent_picks(self, since: str) -> list[Pick]:
        """Every server's picks from local date `since` on: one query plans all servers."""
        return await self.storage.rows(
            "SELECT * FROM picks WHERE local_date >= ? ORDER BY guild_id, local_date",
            (since,),
            _pick,
        )

    async def last_sent(self, guild_id: int) -> Pick | None:
        return await self.storage.one(
            "SELECT * FROM picks WHERE guild_id = ? AND state = 'sent' "
            "ORDER BY local_date DESC LIMIT 1",
            (guild_id,),
            _pick,
        )


_UNCLAIM = "claim_owner = NULL, claim_until = NULL"
_PICK = "SELECT * FROM picks WHERE guild_id = ? AND local_date = ?"


def _unseen(pick: Pick) -> bool:
    return pick.state == "pending" and pick.attempts == 0


def _carry_pick(c: Conn, guild_id: int, old_day: str, new_day: str) -> None:
    """Move the never-attempted pick of `old_day` to `new_day`, unless `new_day` already has
    an attempted one (then that post is the day's)."""
    row = c.execute(_PICK, (guild_id, old_day)).fetchone()
    there = c.execute(_PICK, (guild_id, new_day)).fetchone()
    if row is None or not _unseen(_pick(row)) or (there is not None and not _unseen(_pick(there))):
        return
    moved = _pick(row)
    c.execute("DELETE FROM picks WHERE guild_id = ? AND local_date = ?", (guild_id, new_day))
    c.execute(
        "UPDATE picks SET local_date = ?, marker = ? WHERE guild_id = ? AND local_date = ?",
        (new_day, pick_marker(guild_id, new_day, moved.paper_id), guild_id, old_day),
    )


def _stop(c: Conn, guild_id: int, reason: str, now: datetime) -> None:
    c.execute(
        "UPDATE schedules SET stopped_reason = ?, updated_at = ? WHERE guild_id = ?",
        (reason, ts(now), guild_id),
    )

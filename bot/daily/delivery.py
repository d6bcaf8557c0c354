"""Getting one day's pick onto Discord exactly once: claim it, look for an earlier attempt's
message before resending, retry with backoff until the day or the retry window ends, and
settle attempts of earlier days without re-sending them.

Split from the scheduler, which decides *when* a server's post is due; every step here is
recorded before and after the HTTP call, so a crash at any moment is recovered by the next run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from bot.config import DailySettings
from bot.daily.picking import Picker
from bot.daily.records import Pick, PostOutcome, Schedule
from bot.daily.rules import (
    PermanentPostError,
    Poster,
    TransientPostError,
    next_local_midnight,
    posted,
)
from bot.daily.tables import DailyTables
from bot.storage.store import Storage
from bot.timing import Clock, backoff

log = logging.getLogger(__name__)

CLOCK_SKEW = timedelta(minutes=10)  # see `Delivery.since`


@dataclass(slots=True)
class Delivery:
    """Posts picks through a `Poster` and records each outcome; one instance per scheduler.
    `owner` is this process's name on the claims it writes (see DailyScheduler.owner)."""

    storage: Storage
    poster: Poster
    picker: Picker
    settings: DailySettings
    clock: Clock
    owner: str
    tables: DailyTables = field(init=False)

    def __post_init__(self) -> None:
        self.tables = DailyTables(self.storage)

    async def settle_stale(
        self, schedule: Schedule, stale: list[Pick], now: datetime
    ) -> list[PostOutcome]:
        """Resolve attempts of earlier days; never re-send them (no post per missed day)."""
        outcomes = []
        for pick in stale:
            if pick.claimed_by_other(self.owner, now):
                continue  # another process is sending it right now: its outcome will be recorded
            day = date.fromisoformat(pick.local_date)
            try:
                found = await self.poster.find_existing(
                    pick.channel_id or schedule.channel_id, pick.marker, self.since(pick)
                )
            except TransientPostError:
                continue
            except PermanentPostError as exc:
                found, error = None, exc.reason
            else:
                error = "the day ended before the post was confirmed"
            if found is not None:
                where = posted(found)
                await self.tables.mark_sent(
                    pick.guild_id, pick.local_date, where.message_id, now, where.channel_id
                )
            elif not await self.tables.mark_failed(
                pick.guild_id, pick.local_date, error, now, owner=self.owner
            ):
                continue  # taken over meanwhile: the other process's record stands
            outcomes.append(
                PostOutcome(
                    pick.guild_id,
                    day,
                    "resolved",
                    pick.paper_id,
                    "found" if found is not None else error,
                )
            )
        return outcomes

    async def deliver(
        self, schedule: Schedule, pick: Pick, day: date, tz: ZoneInfo, now: datetime
    ) -> PostOutcome:
        """Post today's pick unless it is claimed elsewhere or already on Discord."""
        guild_id = schedule.guild_id
        if pick.claimed_by_other(self.owner, now):
            log.info("guild %d: %s is being posted by %s", guild_id, day, pick.claim_owner)
            return PostOutcome(guild_id, day, "claimed", pick.paper_id, pick.claim_owner)
        if pick.attempts > 0:
            # An earlier attempt may have reached Discord (crash, timeout): look before resending.
            channel = pick.channel_id or schedule.channel_id
            try:
                found = await self.poster.find_existing(channel, pick.marker, self.since(pick))
            except TransientPostError as exc:
                return await self._retry(pick, day, tz, now, exc, exc.retry_after)
            except PermanentPostError as exc:
                return await self._stop(pick, day, now, exc.reason)
            if found is not None:
                where = posted(found)
                await self.tables.mark_sent(
                    guild_id, pick.local_date, where.message_id, now, where.channel_id or channel
                )
                log.info(
                    "guild %d: %s was already posted (message %d)", guild_id, day, where.message_id
                )
                return PostOutcome(guild_id, day, "found", pick.paper_id)
        # Not on Discord: if its paper left the corpus meanwhile, post another one.
        async with self.picker.lock:
            pick = await self.picker.still_there(pick, schedule.topic, now)
        deadline = self.deadline(pick, day, tz, now)
        if now >= deadline:
            return await self._give_up(pick, day, now)
        # The lease runs from the claim, not from the start of this run: a run over many
        # servers takes long, and a lease already expired when written lets a second process
        # send the same post.
        claimed_at = self.clock.now()
        claimed = await self.tables.mark_sending(
            guild_id,
            pick.local_date,
            schedule.channel_id,
            claimed_at,
            owner=self.owner,
            lease_until=claimed_at + timedelta(seconds=self.settings.claim_seconds),
            attempts=pick.attempts,
        )
        if claimed is None:
            log.info("guild %d: another process claimed the post for %s first", guild_id, day)
            return PostOutcome(guild_id, day, "claimed", pick.paper_id)
        pick = claimed
        try:
            sent = posted(
                await self.poster.post(
                    guild_id, schedule.channel_id, pick.paper_id, day, pick.marker
                )
            )
        except TransientPostError as exc:
            return await self._retry(pick, day, tz, now, exc, exc.retry_after)
        except PermanentPostError as exc:
            return await self._stop(pick, day, now, exc.reason)
        except Exception as exc:
            log.exception("guild %d: unexpected error posting; will retry", guild_id)
            return await self._retry(pick, day, tz, now, exc, None)
        # Said before it is recorded: a process killed between the two has still said it
        # (recorded or not, the next attempt finds the message and says so), so the logs
        # account for every post Discord accepted.
        log.info(
            "guild %d: posted %s for %s (message %d)", guild_id, pick.paper_id, day, sent.message_id
        )
        await self.tables.mark_sent(
            guild_id, pick.local_date, sent.message_id, self.clock.now(), sent.channel_id
        )
        return PostOutcome(guild_id, day, "sent", pick.paper_id)

    @staticmethod
    def since(pick: Pick) -> datetime | None:
        """From when to read a channel for an earlier attempt's post: its first attempt, less
        a margin for the clocks of this host and Discord's disagreeing."""
        return pick.first_attempt_at - CLOCK_SKEW if pick.first_attempt_at else None

    def deadline(self, pick: Pick, day: date, tz: ZoneInfo, now: datetime) -> datetime:
        """Retries stop after the retry window or when the local day ends, whichever first."""
        window = timedelta(hours=self.settings.retry_window_hours)
        return min((pick.first_attempt_at or now) + window, next_local_midnight(day, tz))

    async def _retry(
        self,
        pick: Pick,
        day: date,
        tz: ZoneInfo,
        now: datetime,
        exc: Exception,
        retry_after: float | None,
    ) -> PostOutcome:
        error = str(exc) or type(exc).__name__
        delay = backoff(
            max(1, pick.attempts),
            self.settings.retry_base_seconds,
            self.settings.retry_max_seconds,
            retry_after,
        )
        when = now + timedelta(seconds=delay)
        if when >= self.deadline(pick, day, tz, now):
            return await self._give_up(pick, day, now, error)
        if not await self.tables.mark_retry(
            pick.guild_id, pick.local_date, error, when, now, owner=self.owner
        ):
            return self._taken_over(pick, day, error)
        log.warning(
            "guild %d: post for %s failed (%s); retrying at %s",
            pick.guild_id,
            day,
            error,
            when.isoformat(),
        )
        return PostOutcome(pick.guild_id, day, "retry", pick.paper_id, error)

    async def _give_up(
        self, pick: Pick, day: date, now: datetime, error: str | None = None
    ) -> PostOutcome:
        reason = f"gave up for {day} after {pick.attempts} attempt(s): {error or pick.error}"
        if not await self.tables.mark_failed(
            pick.guild_id, pick.local_date, reason, now, owner=self.owner
        ):
            return self._taken_over(pick, day, reason)
        log.warning("guild %d: %s", pick.guild_id, reason)
        return PostOutcome(pick.guild_id, day, "failed", pick.paper_id, reason)

    async def _stop(self, pick: Pick, day: date, now: datetime, reason: str) -> PostOutcome:
        if not await self.tables.mark_failed(
            pick.guild_id, pick.local_date, reason, now, stop_schedule=True, owner=self.owner
        ):
            return self._taken_over(pick, day, reason)
        log.warning("guild %d: daily schedule stopped: %s", pick.guild_id, reason)
        return PostOutcome(pick.guild_id, day, "stopped", pick.paper_id, reason)

    def _taken_over(self, pick: Pick, day: date, error: str) -> PostOutcome:
        """This attempt failed, but its claim had run out and another process posted (or is
        posting) the pick meanwhile: its record stands, and this one writes nothing."""
        log.info(
            "guild %d: attempt for %s failed (%s) after another process took the post over; "
            "its record stands",
            pick.guild_id,
            day,
            error,
        )
        return PostOutcome(pick.guild_id, day, "claimed", pick.paper_id, error)

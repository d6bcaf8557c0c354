"""The one task that posts each server's paper of the day, once per local date.

Why persisted state instead of `discord.ext.tasks(time=...)`: a timer alone forgets what it
did across restarts. Here every step is recorded first ('sending' before the HTTP call, 'sent'
with the message id after), so after a crash at any moment the next run either finds the
message by its marker or sends it, and posts at most one catch-up for *today*.

One task sleeps until the earliest due post across all servers (no polling, no task per server)
and `wake()` cuts the sleep short when a schedule changes. This module decides *when*;
bot/daily/picking.py decides *what* and bot/daily/delivery.py posts it. Nothing here imports
discord: the cog supplies a `Poster`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import socket
import uuid
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from bot.background import Background
from bot.config import DailySettings
from bot.daily.delivery import Delivery
from bot.daily.picking import POOLS, Picker
from bot.daily.ranked import FORYOU
from bot.daily.records import DailyStatus, Pick, PostOutcome, Schedule
from bot.daily.rules import (
    DailyError,
    PermanentPostError,
    Poster,
    TransientPostError,
    due_instant,
    local_date,
    one_line,
    parse_time,
    parse_timezone,
)
from bot.daily.servers import is_console
from bot.daily.tables import DailyTables
from bot.search import SearchEngine
from bot.storage.outages import database_unreachable
from bot.storage.store import Storage
from bot.timing import Clock, SystemClock, backoff

__all__ = [
    "Clock",
    "DailyRequest",
    "DailyScheduler",
    "DailyStatus",
    "PermanentPostError",
    "PostOutcome",
    "Poster",
    "SystemClock",
    "TransientPostError",
]
log = logging.getLogger(__name__)

HOLD_AFTER_BUG = timedelta(seconds=60)  # pause for a server whose step raised unexpectedly
# While the database cannot be reached the loop waits 10 s, then twice as long each time, up to
# 5 minutes: a long outage is not a log line a minute, and the post follows the database's return
# within minutes (the driver's own reconnects run beside this).
OUTAGE_RETRY_BASE = 10.0
OUTAGE_RETRY_MAX = 300.0


@dataclass(frozen=True, slots=True)
class DailyRequest:
    """What `/daily set` (or the console's `/daily set`) asked for, as typed; `set_schedule`
    checks all of it before saving anything. One record from the command to the scheduler, so
    two ids and two strings in a row cannot be passed in the wrong order on the way."""

    guild_id: int
    channel_id: int
    time: str
    timezone: str
    topic: str | None = None
    pool: str | None = None


class DailyScheduler:
    """Owns the paper-of-the-day rules over a Storage; the cog only translates commands."""

    def __init__(
        self,
        storage: Storage,
        poster: Poster,
        corpus_ids: Callable[[], Collection[str]],
        topic_ids: Callable[[str], Collection[str]] | None = None,
        *,
        added_after: Callable[[datetime | None], Collection[str]] | None = None,
        settings: DailySettings | None = None,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        owns: Callable[[int], bool] | None = None,
        has_paper: Callable[[str], bool] | None = None,
        offload: Callable[..., Awaitable[Any]] | None = None,
        console: bool = False,
        engine: Callable[[], SearchEngine] | None = None,
    ) -> None:
        self.storage = storage
        self.tables = DailyTables(storage)
        self.settings = settings or DailySettings()
        self.clock: Clock = clock or SystemClock()
        self.picker = Picker(
            storage,
            corpus_ids,
            topic_ids,
            added_after=added_after,
            rng=rng,
            has_paper=has_paper,
            offload=offload,
            engine=engine,
        )
        self._wake = asyncio.Event()
        self.loop = Background("daily-scheduler", self._loop)
        self._run_lock = asyncio.Lock()
        self._hold: dict[int, datetime] = {}
        # Which servers this process posts for (its shards); the rest belong to other processes.
        # The console's server (bot.daily.servers) is only the console's, and it has no other.
        shards = owns or (lambda _guild_id: True)
        self.owns: Callable[[int], bool] = lambda g: is_console(g) == console and shards(g)
        # This process's name on the claims it writes: unique per run, so a restarted process
        # waits for its predecessor's lease like any other (it may still be alive).
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.delivery = Delivery(
            storage, poster, self.picker, self.settings, self.clock, self.owner
        )

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        """Start the loop (idempotent). Its first step catches up on today's missed posts."""
        self.loop.start()

    async def stop(self) -> None:
        await self.loop.stop()

    def wake(self) -> None:
        """Re-plan now: a schedule changed, so the earliest due post may have moved."""
        self._wake.set()

    async def _loop(self) -> None:
        outages = 0  # steps failed in a row because the database could not be reached
        while True:
            self._wake.clear()
            try:
                await self.run_due()
                target = await self.next_wakeup()
            except Exception as exc:
                if not database_unreachable(exc):
                    log.exception("daily scheduler step failed; trying again in %s", HOLD_AFTER_BUG)
                    target = self.clock.now() + HOLD_AFTER_BUG
                else:
                    outages += 1
                    delay = backoff(outages, OUTAGE_RETRY_BASE, OUTAGE_RETRY_MAX)
                    log.warning(
                        "daily scheduler: the database cannot be reached (%s); trying again in "
                        "%.0f s",
                        one_line(exc),
                        delay,
                    )
                    target = self.clock.now() + timedelta(seconds=delay)
            else:
                if outages:
                    log.info(
                        "daily scheduler: the database answers again after %d failed step(s)",
                        outages,
                    )
                    outages = 0
            log.debug("daily scheduler sleeping until %s", target)
            await self._sleep(target)

    async def _sleep(self, target: datetime | None) -> None:
        waiters: set[asyncio.Future[object]] = {asyncio.ensure_future(self._wake.wait())}
        if target is not None:
            waiters.add(asyncio.ensure_future(self.clock.sleep_until(target)))
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()

    # -- commands -------------------------------------------------------------------------

    async def pool_mode(self, guild_id: int) -> str:
        """'new' (papers added since the last post first), 'foryou' or 'all'."""
        return await self.picker.pool_mode(guild_id)

    async def set_schedule(self, request: DailyRequest) -> Schedule:
        """/daily set. Validates everything first: on a DailyError nothing is saved.

        If today's time has already passed, the first post is tomorrow (setting a schedule
        is not a request to post now).
        """
        guild_id = request.guild_id
        at = parse_time(request.time)
        zone_name = parse_timezone(request.timezone)
        topic = (request.topic or "").strip() or None
        mode = (request.pool or "all").strip().lower()
        if mode not in POOLS:
            raise DailyError(f"Unknown pool {request.pool!r}: use `all`, `new` or `foryou`.")
        if mode == FORYOU and self.picker.engine is None:
            raise DailyError("The For you pool is not available on this bot.")
        await self.picker.off(self.picker.candidates, topic)
        tz = ZoneInfo(zone_name)
        now = self.clock.now()
        today = local_date(now, tz)
        start = today if due_instant(today, at, tz) > now else today + timedelta(days=1)
        old = await self.tables.get_schedule(guild_id)
        topic_changed = (old.topic if old else None) != topic
        if mode != await self.pool_mode(guild_id):
            topic_changed = True  # the unposted picks were drawn from the other pool
            await self.picker.set_pool_mode(guild_id, mode)
        # /today is one paper all day: the pick it showed under the old zone (UTC without a
        # schedule) stays today's, even when the new zone's date differs or the topic or pool
        # changed; those apply from the next day nobody has seen.
        seen = local_date(now, ZoneInfo(old.timezone) if old else ZoneInfo("UTC"))
        schedule = await self.tables.save_schedule(
            guild_id,
            request.channel_id,
            f"{at.hour:02d}:{at.minute:02d}",
            zone_name,
            topic,
            start.isoformat(),
            now,
            drop_pending_from=(today + timedelta(days=1)).isoformat() if topic_changed else None,
            carry=(seen.isoformat(), today.isoformat()) if seen != today else None,
        )
        self._hold.pop(guild_id, None)
        log.info(
            "daily schedule set for guild %d: %s %s topic=%r pool=%s",
            guild_id,
            schedule.time,
            zone_name,
            topic,
            mode,
        )
        self.wake()
        return schedule

    async def disable(self, guild_id: int) -> bool:
        """/daily off. History and the pool are kept for a later /daily set."""
        changed = await self.tables.disable_schedule(guild_id, self.clock.now())
        self.wake()
        return changed

    async def today_pick(self, guild_id: int) -> Pick:
        """Today's pick (recorded on first request), the one the scheduled post uses.

        Without a schedule the date is taken in UTC and the pool is the whole corpus.
        """
        schedule = await self.tables.get_schedule(guild_id)
        tz = ZoneInfo(schedule.timezone) if schedule else ZoneInfo("UTC")
        now = self.clock.now()
        return await self.picker.ensure(
            guild_id, local_date(now, tz), schedule.topic if schedule else None, now
        )

    async def today(self, guild_id: int) -> str:
        """/today: the paper id of today's pick."""
        return (await self.today_pick(guild_id)).paper_id

    async def status(self, guild_id: int) -> DailyStatus:
        schedule = await self.tables.get_schedule(guild_id)
        now = self.clock.now()
        tz = ZoneInfo(schedule.timezone) if schedule else ZoneInfo("UTC")
        today = await self.tables.get_pick(guild_id, local_date(now, tz).isoformat())
        next_utc = None
        if schedule is not None and schedule.active:
            recent = await self._recent(now)
            next_utc = max(self._plan(schedule, now, recent.get(guild_id, {}))[1], now)
        pool_size = remaining = pool_error = for_you = None
        try:
            pool_size, remaining, for_you = await self.picker.pool_counts(
                guild_id, schedule.topic if schedule else None, now
            )
        except DailyError as exc:
            pool_error = str(exc)
        return DailyStatus(
            guild_id,
            schedule,
            next_utc,
            next_utc.astimezone(tz) if next_utc else None,
            await self.tables.last_sent(guild_id),
            today,
            pool_size,
            remaining,
            pool_error,
            for_you,
        )

    # -- planning -------------------------------------------------------------------------

    async def _recent(self, now: datetime) -> dict[int, dict[str, Pick]]:
        """Picks of every server from two UTC days back on (covers every zone's today)."""
        since = (now - timedelta(days=2)).date().isoformat()
        recent: dict[int, dict[str, Pick]] = {}
        for pick in await self.tables.recent_picks(since):
            recent.setdefault(pick.guild_id, {})[pick.local_date] = pick
        return recent

    def _plan(
        self, schedule: Schedule, now: datetime, picks: dict[str, Pick]
    ) -> tuple[date, datetime]:
        """The next local date needing work and the instant that work is due (maybe past)."""
        tz = ZoneInfo(schedule.timezone)
        day = max(local_date(now, tz), date.fromisoformat(schedule.start_date))
        while (pick := picks.get(day.isoformat())) is not None and pick.state in ("sent", "failed"):
            day += timedelta(days=1)
        due = due_instant(day, parse_time(schedule.time), tz)
        if pick is not None and pick.state == "pending" and pick.next_attempt_at is not None:
            due = max(due, pick.next_attempt_at)
        if pick is not None and pick.claim_until and pick.claimed_by_other(self.owner, now):
            due = max(due, pick.claim_until)
        hold = self._hold.get(schedule.guild_id)
        return day, max(due, hold) if hold else due

    async def next_wakeup(self, now: datetime | None = None) -> datetime | None:
        """The earliest instant any active schedule needs a step (None: nothing scheduled)."""
        now = now or self.clock.now()
        recent = await self._recent(now)
        times = [
            self._plan(s, now, recent.get(s.guild_id, {}))[1]
            for s in await self.tables.active_schedules()
            if self.owns(s.guild_id)
        ]
        return min(times, default=None)

    async def run_due(self, now: datetime | None = None) -> list[PostOutcome]:
        """Do every post that is due at `now`; one server's trouble never blocks another."""
        async with self._run_lock:
            now = now or self.clock.now()
            outcomes: list[PostOutcome] = []
            recent = await self._recent(now)
            unfinished: dict[int, list[Pick]] = {}
            for pick in await self.tables.attempted_unfinished():
                unfinished.setdefault(pick.guild_id, []).append(pick)
            for schedule in await self.tables.active_schedules():
                if not self.owns(schedule.guild_id):
                    continue
                hold = self._hold.get(schedule.guild_id)
                if hold is not None and now < hold:
                    continue
                try:
                    outcomes.extend(
                        await self._run_one(
                            schedule,
                            now,
                            recent.get(schedule.guild_id, {}),
                            unfinished.get(schedule.guild_id, []),
                        )
                    )
                except Exception as exc:
                    if database_unreachable(exc):
                        raise  # every other server would fail alike: the loop waits it out
                    log.exception("daily post step failed for guild %d", schedule.guild_id)
                    self._hold[schedule.guild_id] = now + HOLD_AFTER_BUG
                else:
                    self._hold.pop(schedule.guild_id, None)
            return outcomes

    async def _run_one(
        self, schedule: Schedule, now: datetime, picks: dict[str, Pick], unfinished: list[Pick]
    ) -> list[PostOutcome]:
        try:
            tz = ZoneInfo(parse_timezone(schedule.timezone))
        except DailyError as exc:
            await self.tables.stop_schedule(schedule.guild_id, str(exc), now)
            return [PostOutcome(schedule.guild_id, now.date(), "stopped", detail=str(exc))]
        today = local_date(now, tz)
        stale = [p for p in unfinished if p.local_date < today.isoformat()]
        outcomes = await self.delivery.settle_stale(schedule, stale, now) if stale else []
        day, due = self._plan(schedule, now, picks)
        if day != today or now < due:
            return outcomes
        try:
            pick = await self.picker.ensure(schedule.guild_id, day, schedule.topic, now)
        except DailyError as exc:
            await self.tables.stop_schedule(schedule.guild_id, str(exc), now)
            log.warning("guild %d: daily schedule stopped: %s", schedule.guild_id, exc)
            return [*outcomes, PostOutcome(schedule.guild_id, day, "stopped", detail=str(exc))]
        outcomes.append(await self.delivery.deliver(schedule, pick, day, tz, now))
        return outcomes

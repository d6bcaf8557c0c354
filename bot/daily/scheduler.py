"""The one task that posts each server's paper of the day, once per local date.

Why persisted state instead of `discord.ext.tasks(time=...)`: a timer alone forgets what it
did across restarts. Here every step is recorded first ('sending' before the HTTP call, 'sent'
with the message id after), so after a crash at any moment the next run either finds the
message by its marker or sends it, and posts at most one catch-up for *today*.

One task sleeps until the earliest due post across all servers (no polling, no task per server)
and `wake()` cuts the sleep short when a schedule changes. Nothing here imports discord: the cog
supplies a `Poster`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import socket
import uuid
from collections.abc import Awaitable, Callable, Collection
from datetime import UTC, date, datetime, timedelta
from typing import Any, Protocol, TypeVar
from zoneinfo import ZoneInfo

from bot.background import Background
from bot.config import DailySettings
from bot.daily.rules import (
    DailyError,
    Draw,
    PermanentPostError,
    Poster,
    TransientPostError,
    backoff,
    draw,
    due_instant,
    local_date,
    next_local_midnight,
    parse_time,
    parse_timezone,
    pick_marker,
)
from bot.storage.records import DailyStatus, Pick, PostOutcome, Schedule
from bot.storage.store import Storage

__all__ = [
    "Clock",
    "DailyScheduler",
    "DailyStatus",
    "PermanentPostError",
    "PostOutcome",
    "Poster",
    "SystemClock",
    "TransientPostError",
]
log = logging.getLogger(__name__)
R = TypeVar("R")

# Where a server's draw comes from: every paper (of its topic), or papers added since its last
# post first. Kept under this meta key, not in the schedules table, while the storage package
# moves to PostgreSQL (one key per server; absent means "all").
POOLS = ("all", "new")
POOL_KEY = "daily_pool:{guild_id}"
HOLD_AFTER_BUG = timedelta(seconds=60)  # pause for a server whose step raised unexpectedly
CLOCK_SKEW = timedelta(minutes=10)  # see `_since`
MAX_SLEEP_CHUNK = 900.0  # re-read the wall clock at least this often (suspend, clock changes)


class Clock(Protocol):
    def now(self) -> datetime: ...

    async def sleep_until(self, when: datetime) -> None: ...


class SystemClock:
    """Real time. Sleeps in chunks so a suspended machine or a clock change is noticed."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep_until(self, when: datetime) -> None:
        while (left := (when - self.now()).total_seconds()) > 0:  # noqa: ASYNC110 - see above
            await asyncio.sleep(min(left, MAX_SLEEP_CHUNK))


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
    ) -> None:
        self.storage = storage
        self.poster = poster
        self.corpus_ids = corpus_ids
        self.topic_ids = topic_ids
        # Ids of papers the corpus first saw after an instant (None: any with a first-seen
        # time), for the `new` pool; see bot/search/recent.py.
        self.added_after = added_after
        # Whether a paper is still in the corpus (a pick's paper may leave it on a reload).
        self.has_paper = has_paper or (lambda paper_id: paper_id in set(self.corpus_ids()))
        # Where corpus-sized work runs (pools, draws: ~1 s at 100k papers): never on the loop.
        self._offload = offload or asyncio.to_thread
        self.settings = settings or DailySettings()
        self.clock: Clock = clock or SystemClock()
        self._rng = rng or random.SystemRandom()
        self._wake = asyncio.Event()
        self.loop = Background("daily-scheduler", self._loop)
        self._run_lock = asyncio.Lock()
        self._pick_lock = asyncio.Lock()
        self._hold: dict[int, datetime] = {}
        # Which servers this process posts for (its shards); the rest belong to other processes.
        self.owns: Callable[[int], bool] = owns or (lambda _guild_id: True)
        # This process's name on the claims it writes: unique per run, so a restarted process
        # waits for its predecessor's lease like any other (it may still be alive).
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

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
        while True:
            self._wake.clear()
            try:
                await self.run_due()
                target = await self.next_wakeup()
            except Exception:
                log.exception("daily scheduler step failed; trying again in %s", HOLD_AFTER_BUG)
                target = self.clock.now() + HOLD_AFTER_BUG
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

    async def _off(self, fn: Callable[..., R], *args: Any) -> R:
        """`fn(*args)` off the event loop: it walks the corpus."""
        result: R = await self._offload(fn, *args)
        return result

    def _candidates(self, topic: str | None) -> Collection[str]:
        """The pool for a topic (or the whole corpus); empty is a DailyError."""
        if topic:
            if self.topic_ids is None:
                raise DailyError("Topics are not available on this bot.")
            try:
                ids = self.topic_ids(topic)
            except ValueError as exc:  # the search core's SearchError is a ValueError
                raise DailyError(f"Topic {topic!r} cannot be used: {exc}") from exc
            if not ids:
                raise DailyError(
                    f"No paper matches the topic {topic!r}: try broader words, "
                    "or leave the topic empty to draw from every paper."
                )
            return ids
        ids = self.corpus_ids()
        if not ids:
            raise DailyError("The corpus is empty: there is no paper to post.")
        return ids

    async def pool_mode(self, guild_id: int) -> str:
        """'new' (papers added since the last post first) or 'all'."""
        mode = await self.storage.get_meta(POOL_KEY.format(guild_id=guild_id))
        return mode if mode in POOLS else "all"

    async def set_schedule(
        self,
        guild_id: int,
        channel_id: int,
        time: str,
        timezone: str,
        topic: str | None = None,
        pool: str | None = None,
    ) -> Schedule:
        """/daily set. Validates everything first: on a DailyError nothing is saved.

        If today's time has already passed, the first post is tomorrow (setting a schedule
        is not a request to post now).
        """
        at = parse_time(time)
        zone_name = parse_timezone(timezone)
        topic = (topic or "").strip() or None
        mode = (pool or "all").strip().lower()
        if mode not in POOLS:
            raise DailyError(f"Unknown pool {pool!r}: use `all` or `new`.")
        await self._off(self._candidates, topic)
        tz = ZoneInfo(zone_name)
        now = self.clock.now()
        today = local_date(now, tz)
        start = today if due_instant(today, at, tz) > now else today + timedelta(days=1)
        old = await self.storage.get_schedule(guild_id)
        topic_changed = (old.topic if old else None) != topic
        if mode != await self.pool_mode(guild_id):
            topic_changed = True  # today's unposted pick was drawn from the other pool
            await self.storage.set_meta(POOL_KEY.format(guild_id=guild_id), mode)
        schedule = await self.storage.save_schedule(
            guild_id,
            channel_id,
            f"{at.hour:02d}:{at.minute:02d}",
            zone_name,
            topic,
            start.isoformat(),
            now,
            drop_pending_from=today.isoformat() if topic_changed else None,
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
        changed = await self.storage.disable_schedule(guild_id, self.clock.now())
        self.wake()
        return changed

    async def today_pick(self, guild_id: int) -> Pick:
        """Today's pick (recorded on first request), the one the scheduled post uses.

        Without a schedule the date is taken in UTC and the pool is the whole corpus.
        """
        schedule = await self.storage.get_schedule(guild_id)
        tz = ZoneInfo(schedule.timezone) if schedule else ZoneInfo("UTC")
        now = self.clock.now()
        return await self._ensure_pick(
            guild_id, local_date(now, tz), schedule.topic if schedule else None, now
        )

    async def today(self, guild_id: int) -> str:
        """/today: the paper id of today's pick."""
        return (await self.today_pick(guild_id)).paper_id

    async def status(self, guild_id: int) -> DailyStatus:
        schedule = await self.storage.get_schedule(guild_id)
        now = self.clock.now()
        tz = ZoneInfo(schedule.timezone) if schedule else ZoneInfo("UTC")
        today = await self.storage.get_pick(guild_id, local_date(now, tz).isoformat())
        next_utc = None
        if schedule is not None and schedule.active:
            recent = await self._recent(now)
            next_utc = max(self._plan(schedule, now, recent.get(guild_id, {}))[1], now)
        pool_size = remaining = pool_error = None
        try:
            candidates = await self._off(
                lambda: set(self._candidates(schedule.topic if schedule else None))
            )
            pool = await self.storage.pool(guild_id, self._rng.getrandbits(63))
            pool_size, remaining = await self._off(
                lambda: (len(candidates), len(candidates - pool.drawn))
            )
        except DailyError as exc:
            pool_error = str(exc)
        return DailyStatus(
            guild_id,
            schedule,
            next_utc,
            next_utc.astimezone(tz) if next_utc else None,
            await self.storage.last_sent(guild_id),
            today,
            pool_size,
            remaining,
            pool_error,
        )

    # -- choosing -------------------------------------------------------------------------

    async def _ensure_pick(
        self, guild_id: int, day: date, topic: str | None, now: datetime
    ) -> Pick:
        async with self._pick_lock:
            existing = await self.storage.get_pick(guild_id, day.isoformat())
            if existing is not None:
                if existing.attempts == 0 and existing.state == "pending":
                    return await self._still_there(existing, topic, now)
                return existing
            chosen = await self._draw(guild_id, topic)
            return await self.storage.create_pick(
                guild_id,
                day.isoformat(),
                chosen.paper_id,
                chosen.epoch,
                pick_marker(guild_id, day, chosen.paper_id),
                now,
            )

    async def _fresh(
        self, guild_id: int, candidates: Collection[str], drawn: Collection[str]
    ) -> list[str]:
        """For a `new` pool: candidates added since the server's last post (or since its
        schedule was set) and not drawn yet. Empty means "draw from the whole pool"."""
        if self.added_after is None or await self.pool_mode(guild_id) != "new":
            return []
        last = await self.storage.last_sent(guild_id)
        if last is not None:
            since: datetime | None = last.sent_at or last.created_at
        else:
            schedule = await self.storage.get_schedule(guild_id)
            since = schedule.updated_at if schedule else None
        allowed = await self._off(lambda: set(candidates) - set(drawn))
        return [pid for pid in self.added_after(since) if pid in allowed]

    async def _draw(self, guild_id: int, topic: str | None) -> Draw:
        candidates = await self._off(self._candidates, topic)
        pool = await self.storage.pool(guild_id, self._rng.getrandbits(63))
        fresh = await self._fresh(guild_id, candidates, pool.drawn)
        chosen = await self._off(
            draw, fresh or candidates, pool.drawn, pool.seed, pool.epoch, pool.last_paper
        )
        if chosen.epoch != pool.epoch:
            log.info("guild %d: pool exhausted, reshuffling (pass %d)", guild_id, chosen.epoch)
        return chosen

    async def _still_there(self, pick: Pick, topic: str | None, now: datetime) -> Pick:
        """`pick`, or a fresh draw for its day when its paper left the corpus (a reload)
        before it was posted: a day is never lost to a paper that is gone. Call only for a
        pick not yet sent and known not to be on Discord."""
        if await self._off(self.has_paper, pick.paper_id):
            return pick
        chosen = await self._draw(pick.guild_id, topic)
        day = date.fromisoformat(pick.local_date)
        log.warning(
            "guild %d: paper %s of %s left the corpus before it was posted; drew %s instead",
            pick.guild_id,
            pick.paper_id,
            pick.local_date,
            chosen.paper_id,
        )
        return await self.storage.replace_pick(
            pick.guild_id,
            pick.local_date,
            chosen.paper_id,
            chosen.epoch,
            pick_marker(pick.guild_id, day, chosen.paper_id),
            now,
        )

    # -- posting --------------------------------------------------------------------------

    async def _recent(self, now: datetime) -> dict[int, dict[str, Pick]]:
        """Picks of every server from two UTC days back on (covers every zone's today)."""
        since = (now - timedelta(days=2)).date().isoformat()
        recent: dict[int, dict[str, Pick]] = {}
        for pick in await self.storage.recent_picks(since):
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
            for s in await self.storage.active_schedules()
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
            for pick in await self.storage.attempted_unfinished():
                unfinished.setdefault(pick.guild_id, []).append(pick)
            for schedule in await self.storage.active_schedules():
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
                except Exception:
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
            await self.storage.stop_schedule(schedule.guild_id, str(exc), now)
            return [PostOutcome(schedule.guild_id, now.date(), "stopped", detail=str(exc))]
        today = local_date(now, tz)
        stale = [p for p in unfinished if p.local_date < today.isoformat()]
        outcomes = await self._settle_stale(schedule, stale, now) if stale else []
        day, due = self._plan(schedule, now, picks)
        if day != today or now < due:
            return outcomes
        try:
            pick = await self._ensure_pick(schedule.guild_id, day, schedule.topic, now)
        except DailyError as exc:
            await self.storage.stop_schedule(schedule.guild_id, str(exc), now)
            log.warning("guild %d: daily schedule stopped: %s", schedule.guild_id, exc)
            return [*outcomes, PostOutcome(schedule.guild_id, day, "stopped", detail=str(exc))]
        outcomes.append(await self._deliver(schedule, pick, day, tz, now))
        return outcomes

    async def _settle_stale(
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
                    pick.channel_id or schedule.channel_id, pick.marker, self._since(pick)
                )
            except TransientPostError:
                continue
            except PermanentPostError as exc:
                found, error = None, exc.reason
            else:
                error = "the day ended before the post was confirmed"
            if found is not None:
                await self.storage.mark_sent(pick.guild_id, pick.local_date, found, now)
            else:
                await self.storage.mark_failed(pick.guild_id, pick.local_date, error, now)
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

    async def _deliver(
        self, schedule: Schedule, pick: Pick, day: date, tz: ZoneInfo, now: datetime
    ) -> PostOutcome:
        guild_id = schedule.guild_id
        if pick.claimed_by_other(self.owner, now):
            log.info("guild %d: %s is being posted by %s", guild_id, day, pick.claim_owner)
            return PostOutcome(guild_id, day, "claimed", pick.paper_id, pick.claim_owner)
        if pick.attempts > 0:
            # An earlier attempt may have reached Discord (crash, timeout): look before resending.
            channel = pick.channel_id or schedule.channel_id
            try:
                found = await self.poster.find_existing(channel, pick.marker, self._since(pick))
            except TransientPostError as exc:
                return await self._retry(pick, day, tz, now, exc, exc.retry_after)
            except PermanentPostError as exc:
                return await self._stop(pick, day, now, exc.reason)
            if found is not None:
                await self.storage.mark_sent(guild_id, pick.local_date, found, now, channel)
                log.info("guild %d: %s was already posted (message %d)", guild_id, day, found)
                return PostOutcome(guild_id, day, "found", pick.paper_id)
        # Not on Discord: if its paper left the corpus meanwhile, post another one.
        async with self._pick_lock:
            pick = await self._still_there(pick, schedule.topic, now)
        deadline = self._deadline(pick, day, tz, now)
        if now >= deadline:
            return await self._give_up(pick, day, now)
        claimed = await self.storage.mark_sending(
            guild_id,
            pick.local_date,
            schedule.channel_id,
            now,
            owner=self.owner,
            lease_until=now + timedelta(seconds=self.settings.claim_seconds),
            attempts=pick.attempts,
        )
        if claimed is None:
            log.info("guild %d: another process claimed the post for %s first", guild_id, day)
            return PostOutcome(guild_id, day, "claimed", pick.paper_id)
        pick = claimed
        try:
            message_id = await self.poster.post(
                guild_id, schedule.channel_id, pick.paper_id, day, pick.marker
            )
        except TransientPostError as exc:
            return await self._retry(pick, day, tz, now, exc, exc.retry_after)
        except PermanentPostError as exc:
            return await self._stop(pick, day, now, exc.reason)
        except Exception as exc:
            log.exception("guild %d: unexpected error posting; will retry", guild_id)
            return await self._retry(pick, day, tz, now, exc, None)
        await self.storage.mark_sent(guild_id, pick.local_date, message_id, self.clock.now())
        log.info(
            "guild %d: posted %s for %s (message %d)", guild_id, pick.paper_id, day, message_id
        )
        return PostOutcome(guild_id, day, "sent", pick.paper_id)

    @staticmethod
    def _since(pick: Pick) -> datetime | None:
        """From when to read a channel for an earlier attempt's post: its first attempt, less
        a margin for the clocks of this host and Discord's disagreeing."""
        return pick.first_attempt_at - CLOCK_SKEW if pick.first_attempt_at else None

    def _deadline(self, pick: Pick, day: date, tz: ZoneInfo, now: datetime) -> datetime:
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
        if when >= self._deadline(pick, day, tz, now):
            return await self._give_up(pick, day, now, error)
        await self.storage.mark_retry(pick.guild_id, pick.local_date, error, when, now)
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
        await self.storage.mark_failed(pick.guild_id, pick.local_date, reason, now)
        log.warning("guild %d: %s", pick.guild_id, reason)
        return PostOutcome(pick.guild_id, day, "failed", pick.paper_id, reason)

    async def _stop(self, pick: Pick, day: date, now: datetime, reason: str) -> PostOutcome:
        await self.storage.mark_failed(
            pick.guild_id, pick.local_date, reason, now, stop_schedule=True
        )
        log.warning("guild %d: daily schedule stopped: %s", pick.guild_id, reason)
        return PostOutcome(pick.guild_id, day, "stopped", pick.paper_id, reason)

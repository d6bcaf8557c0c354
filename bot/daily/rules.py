"""Paper-of-the-day rules as pure functions (input checks, due instants, the pool draw) and the
contract a Discord poster implements.

Nothing here does I/O, so the rules (DST, reshuffles, corpus changes) are tested without a
database or a clock; `bot/daily/scheduler.py` applies them to stored state.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from typing import Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones


class DailyError(ValueError):
    """A problem with a daily-post request; the message is meant to be shown to the user."""


_TIME = re.compile(r"^\s*(\d{1,2})\s*[:h.]\s*(\d{2})\s*$")


def parse_time(text: str) -> time:
    """`HH:MM` (24-hour) to a time; anything else is a DailyError saying what would work."""
    match = _TIME.match(text or "")
    if not match:
        raise DailyError(f"{text!r} is not a time: use 24-hour HH:MM, for example 09:30 or 18:00.")
    hour, minute = int(match.group(1)), int(match.group(2))
    if hour > 23:
        raise DailyError(
            f"{text!r} is not a time of day: hours go from 00 to 23 "
            f"(use 00:{minute:02d} for midnight)."
        )
    if minute > 59:
        raise DailyError(f"{text!r} is not a time of day: minutes go from 00 to 59.")
    return time(hour, minute)


@cache
def zone_names() -> dict[str, str]:
    """Lower-cased IANA names (and UTC) to their canonical spelling, in canonical order.

    Read once per process: `available_timezones()` walks the zone database on disk, so the
    daily cog warms this at load and neither a keystroke nor `/daily set` pays for it.
    """
    names = set(available_timezones()) | {"UTC"}
    return {name.lower(): name for name in sorted(names)}


def suggest_timezones(name: str, limit: int = 3) -> list[str]:
    """Close IANA names for a misspelt zone, matching whole names and their city part."""
    names = zone_names()
    wanted = name.strip().lower().replace(" ", "_")
    found = difflib.get_close_matches(wanted, list(names), n=limit, cutoff=0.6)
    if len(found) < limit:
        cities: dict[str, list[str]] = {}
        for lower in names:
            cities.setdefault(lower.rsplit("/", 1)[-1], []).append(lower)
        last = wanted.rsplit("/", 1)[-1]
        for city in difflib.get_close_matches(last, list(cities), n=limit, cutoff=0.75):
            found.extend(n for n in sorted(cities[city]) if n not in found)
    return [names[n] for n in found[:limit]]


def parse_timezone(name: str) -> str:
    """Check an IANA zone name with zoneinfo; returns its canonical spelling.

    Case is forgiven ("europe/paris"), anything unknown ("Mars/Olympus") is a DailyError that
    lists close names when there are some.
    """
    cleaned = (name or "").strip().replace(" ", "_")
    canonical = zone_names().get(cleaned.lower())
    if canonical is not None:
        try:
            ZoneInfo(canonical)
        except (ZoneInfoNotFoundError, ValueError):
            canonical = None
    if canonical is None:
        hints = suggest_timezones(cleaned) if cleaned else []
        hint = (
            f" Did you mean {', '.join(hints)}?"
            if hints
            else " Use an IANA name such as Europe/Paris, America/New_York or UTC."
        )
        raise DailyError(f"Unknown time zone {name!r}.{hint}")
    return canonical


# -- when to post -------------------------------------------------------------------------


def local_date(now: datetime, tz: ZoneInfo) -> date:
    """The server's calendar date at `now` (an aware instant)."""
    return now.astimezone(tz).date()


def _wall(instant: datetime, tz: ZoneInfo) -> datetime:
    return instant.astimezone(tz).replace(tzinfo=None)


def due_instant(day: date, at: time, tz: ZoneInfo) -> datetime:
    """The UTC instant to post for local `day` at wall time `at`.

    Ambiguous times (clocks going back) use the first occurrence (fold=0), so there is one
    instant per day. Nonexistent times (clocks going forward over `at`) post at the transition,
    the first real instant whose wall time is not before `at`.
    """
    naive = datetime.combine(day, at)
    first = naive.replace(tzinfo=tz, fold=0).astimezone(UTC)
    if _wall(first, tz) == naive:
        return first
    # In a gap zoneinfo maps fold=1 to the later offset, which lands before the transition;
    # search the whole seconds between the two readings for the transition itself.
    low = int(naive.replace(tzinfo=tz, fold=1).astimezone(UTC).timestamp())
    high = int(first.timestamp()) + 1
    if low > high:
        low, high = high, low
    while high - low > 1:
        mid = (low + high) // 2
        if _wall(datetime.fromtimestamp(mid, UTC), tz) >= naive:
            high = mid
        else:
            low = mid
    return datetime.fromtimestamp(high, UTC)


def next_local_midnight(day: date, tz: ZoneInfo) -> datetime:
    """The UTC instant local `day` ends (start of the next day, DST-aware)."""
    return due_instant(day + timedelta(days=1), time(0, 0), tz)


# -- the pool -----------------------------------------------------------------------------


def _rank(seed: int, epoch: int, paper_id: str) -> bytes:
    return hashlib.sha256(f"{seed}:{epoch}:{paper_id}".encode()).digest()


def pool_order(paper_ids: Iterable[str], seed: int, epoch: int) -> list[str]:
    """A deterministic shuffle of the ids for one pass (epoch) through a server's pool.

    Each id's place is a hash of (seed, epoch, id), so new corpus papers slot in without
    reordering the rest, and a restart reproduces the same order.
    """
    return sorted(set(paper_ids), key=lambda pid: _rank(seed, epoch, pid))


@dataclass(frozen=True, slots=True)
class Draw:
    paper_id: str
    epoch: int


def draw(
    candidates: Collection[str],
    drawn: Collection[str],
    seed: int,
    epoch: int,
    avoid: str | None = None,
) -> Draw:
    """The next paper of this pass, or the first of a fresh pass when all have been shown.

    `drawn` holds the ids drawn in `epoch`; ids no longer in `candidates` (removed from the
    corpus or outside the topic) are simply ignored. `avoid` (the last paper shown) is not
    repeated first thing after a reshuffle when another paper exists.
    """
    if not candidates:
        raise DailyError("No papers to choose from: the pool is empty.")
    taken = set(drawn)
    for pid in pool_order(candidates, seed, epoch):
        if pid not in taken:
            return Draw(pid, epoch)
    order = pool_order(candidates, seed, epoch + 1)
    if avoid is not None and len(order) > 1 and order[0] == avoid:
        return Draw(order[1], epoch + 1)
    return Draw(order[0], epoch + 1)


def remaining(candidates: Collection[str], drawn: Collection[str]) -> int:
    """Papers of the pool not yet shown in this pass."""
    return len(set(candidates) - set(drawn))


def pick_marker(guild_id: int, day: date | str, paper_id: str) -> str:
    """A short, stable tag the poster puts in the message (e.g. the embed footer).

    After a crash between sending and recording, the poster finds the message by this tag
    instead of sending it again.
    """
    digest = hashlib.sha256(f"{guild_id}:{day}:{paper_id}".encode()).hexdigest()[:10]
    return f"potd-{day}-{digest}"


# -- the posting contract ------------------------------------------------------------


class TransientPostError(Exception):
    """Worth retrying later: rate limited (429), Discord 5xx, network trouble."""

    def __init__(self, message: str = "temporary failure", retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class PermanentPostError(Exception):
    """Retrying cannot help (channel deleted, missing permissions): the schedule stops."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def one_line(exc: BaseException) -> str:
    """The error's type and first line (a driver's message goes on over several)."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


@dataclass(frozen=True, slots=True)
class Posted:
    """Where a post went when that is not simply a message in the schedule's channel: a forum
    post is a thread of its own (`channel_id`), whose starter message is the post."""

    message_id: int
    channel_id: int | None = None


def posted(result: int | Posted) -> Posted:
    """A poster's answer (a message id, or a `Posted`) as a `Posted`."""
    return result if isinstance(result, Posted) else Posted(result)


class Poster(Protocol):
    """What the Discord side implements. `marker` must be findable in the sent message."""

    async def post(
        self, guild_id: int, channel_id: int, paper_id: str, local_date: date, marker: str
    ) -> int | Posted:
        """Send the paper; return the message id (or a `Posted`). Raise
        Transient/PermanentPostError."""
        ...

    async def find_existing(
        self, channel_id: int, marker: str, since: datetime | None = None
    ) -> int | Posted | None:
        """The id of a message in the channel carrying `marker`, if any: every message
        created after `since` is looked at (else only recent ones)."""
        ...

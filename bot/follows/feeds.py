"""How a member's feed is delivered: per follow (and the For you feed, a follow of its own),
a frequency, a cap per message, negative terms and a minimum score.

    refresh   a notice after each corpus refresh that brought matches (the default)
    daily     one notice a day at `at_time` in `timezone`, gathering the refreshes since
    weekly    one notice a week, on `weekday` (0 Monday) at `at_time`

Matches found before a notice is due are claimed at once (so the shared "already shown"
memory and the exactly-once guarantee hold from the start) into one notice that waits for its
time (`Follows.claim(..., not_before=...)` appends to it). The time rule is the daily post's
(`bot.daily.due_instant`: IANA zones, DST gaps and folds). Stored in `feed_settings`
(bot/storage/migrations/0006_foryou.sql), keyed by the follow's id; a follow without a row
has the defaults.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from bot.daily import DailyError, due_instant, parse_time, parse_timezone
from bot.storage.rows import from_row, ts

if TYPE_CHECKING:
    from bot.storage.store import Storage

FREQUENCIES = ("refresh", "daily", "weekly")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
CAP_MAX = 10  # papers one message lists before ▶ (a page of the notice)
EXCLUDE_MAX = 100  # characters of negative terms
_WORD = re.compile(r"[^\s\"'()-][^\s\"'()]*")


class FeedError(ValueError):
    """A feed setting that cannot be used; the message says what would work."""


@dataclass(frozen=True, slots=True)
class FeedSettings:
    """One feed's delivery; `exclude` holds bare words (no leading -), space separated;
    `min_score` is a share (0 to 1) of the best score a paper could reach for the feed."""

    feed_id: str
    user_id: int
    frequency: str = "refresh"
    at_time: str = "09:00"
    weekday: int = 0
    timezone: str = "UTC"
    cap: int = CAP_MAX
    exclude: str = ""
    min_score: float = 0.0
    updated_at: datetime | None = None

    @property
    def excluded(self) -> tuple[str, ...]:
        return tuple(self.exclude.split())

    def describe(self) -> str:
        """One line for `/follow list` and the confirmation of `/follow tune`."""
        when = {
            "refresh": "after each refresh",
            "daily": f"daily at {self.at_time} {self.timezone}",
            "weekly": f"{WEEKDAYS[self.weekday].title()}s at {self.at_time} {self.timezone}",
        }[self.frequency]
        parts = [when, f"{self.cap} a message"]
        if self.excluded:
            parts.append("without " + ", ".join(f"-{w}" for w in self.excluded))
        if self.min_score > 0:
            parts.append(f"score ≥ {round(self.min_score * 100)}%")
        return " · ".join(parts)


def next_delivery(settings: FeedSettings, now: datetime) -> datetime | None:
    """When a notice of matches found at `now` goes out; None: at once (`refresh`)."""
    if settings.frequency == "refresh":
        return None
    tz = ZoneInfo(settings.timezone)
    at = parse_time(settings.at_time)
    day = now.astimezone(tz).date()
    for ahead in range(8):
        candidate = day + timedelta(days=ahead)
        if settings.frequency == "weekly" and candidate.weekday() != settings.weekday:
            continue
        when = due_instant(candidate, at, tz)
        if when > now:
            return when
    raise AssertionError("a day of the next week is always ahead")  # pragma: no cover


def parse_exclude(text: str) -> str:
    """Negative terms as typed (`survey -benchmark, toy`) to the stored bare words."""
    words = [w.lstrip("-").strip(",;") for w in _WORD.findall(text.replace(",", " "))]
    cleaned = " ".join(dict.fromkeys(w for w in words if w))
    if len(cleaned) > EXCLUDE_MAX:
        raise FeedError(f"At most {EXCLUDE_MAX} characters of words to leave out.")
    return cleaned


def tuned(
    current: FeedSettings,
    *,
    frequency: str | None = None,
    at_time: str | None = None,
    weekday: str | None = None,
    timezone: str | None = None,
    cap: int | None = None,
    exclude: str | None = None,
    min_score: float | None = None,
) -> FeedSettings:
    """`current` with the options given changed, each checked (FeedError says why not)."""
    changes: dict[str, Any] = {}
    if frequency is not None:
        if frequency not in FREQUENCIES:
            raise FeedError(f"Frequency is one of {', '.join(FREQUENCIES)}.")
        changes["frequency"] = frequency
    try:
        if at_time is not None:
            changes["at_time"] = parse_time(at_time).strftime("%H:%M")
        if timezone is not None:
            changes["timezone"] = parse_timezone(timezone)
    except DailyError as exc:
        raise FeedError(str(exc)) from exc
    if weekday is not None:
        day = weekday.strip().lower()
        found = [i for i, name in enumerate(WEEKDAYS) if name.startswith(day[:3])] if day else []
        if len(day) < 3 or not found:
            raise FeedError(f"{weekday!r} is not a day: use monday, tuesday, ... sunday.")
        changes["weekday"] = found[0]
    if cap is not None:
        if not 1 <= cap <= CAP_MAX:
            raise FeedError(f"The cap is 1 to {CAP_MAX} papers a message.")
        changes["cap"] = cap
    if exclude is not None:
        changes["exclude"] = parse_exclude(exclude)
    if min_score is not None:
        if not 0 <= min_score <= 100:
            raise FeedError("The minimum score is a percentage, 0 to 100.")
        changes["min_score"] = min_score / 100
    return replace(current, **changes)


# `/follow tune` written as text (the console): KEY=VALUE words, each key the Discord option's.
TUNE_KEYS = ("frequency", "time", "day", "timezone", "cap", "exclude", "min_score")


def tune_options(text: str) -> dict[str, Any]:
    """`frequency=daily time=09:30 exclude="survey benchmark" cap=3` as `tuned`'s keywords
    (`exclude=-` clears the words); FeedError names an unknown key or a number that is not."""
    options: dict[str, Any] = {}
    for key, quoted, bare in re.findall(r'(\w+)=(?:"([^"]*)"|(\S*))', text):
        value = quoted or bare
        if key not in TUNE_KEYS:
            raise FeedError(f"Unknown option {key!r}: use {', '.join(TUNE_KEYS)} (KEY=VALUE).")
        if key in ("cap", "min_score"):
            if not value.isdigit():
                raise FeedError(f"{key} is a whole number, not {value!r}.")
            options[key] = int(value)
        elif key == "exclude":
            options[key] = "" if value.strip() == "-" else value
        else:
            options[{"time": "at_time", "day": "weekday"}.get(key, key)] = value
    if not options:
        raise FeedError(f"Nothing to change: give one of {', '.join(TUNE_KEYS)} as KEY=VALUE.")
    return options


class Feeds:
    """Feed settings over one `Storage`; only ever read by the feed's own id and member."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    async def get(self, feed_id: str, user_id: int) -> FeedSettings:
        """The feed's settings (the defaults when never tuned)."""

        def q(c: Any) -> FeedSettings:
            row = c.execute(
                "SELECT feed_id, user_id, frequency, at_time, weekday, timezone, cap, exclude, "
                "min_score, updated_at FROM feed_settings WHERE feed_id = ?",
                (feed_id,),
            ).fetchone()
            return FeedSettings(feed_id, user_id) if row is None else from_row(FeedSettings, row)

        return await self.storage.run(q, write=False)

    async def put(self, settings: FeedSettings, now: datetime) -> None:
        s = settings
        await self.storage.run(
            lambda c: c.execute(
                "INSERT INTO feed_settings (feed_id, user_id, frequency, at_time, weekday, "
                "timezone, cap, exclude, min_score, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (feed_id) DO UPDATE SET "
                "frequency = excluded.frequency, at_time = excluded.at_time, "
                "weekday = excluded.weekday, timezone = excluded.timezone, cap = excluded.cap, "
                "exclude = excluded.exclude, min_score = excluded.min_score, "
                "updated_at = excluded.updated_at",
                (
                    s.feed_id,
                    s.user_id,
                    s.frequency,
                    s.at_time,
                    s.weekday,
                    s.timezone,
                    s.cap,
                    s.exclude,
                    s.min_score,
                    ts(now),
                ),
            )
        )

    async def forget(self, feed_id: str) -> None:
        await self.storage.run(
            lambda c: c.execute("DELETE FROM feed_settings WHERE feed_id = ?", (feed_id,))
        )

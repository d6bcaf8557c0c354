"""A feed's settings as rules: when its notice goes out (daily, weekly, in a time zone, over
DST), the checks on each option, and the words it leaves out."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.follows.feeds import FeedError, FeedSettings, next_delivery, parse_exclude, tuned

BASE = FeedSettings("f1", 1)


def test_refresh_goes_at_once_daily_and_weekly_wait_for_their_time() -> None:
    now = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)  # a Wednesday
    assert next_delivery(BASE, now) is None
    daily = tuned(BASE, frequency="daily", at_time="9:30", timezone="europe/paris")
    assert daily.timezone == "Europe/Paris"
    assert daily.at_time == "09:30"
    # 10:00 UTC is 11:00 in Paris: today's 09:30 has passed, tomorrow's is 08:30 UTC.
    assert next_delivery(daily, now) == datetime(2026, 3, 5, 8, 30, tzinfo=UTC)
    weekly = tuned(daily, frequency="weekly", weekday="Mon")
    assert next_delivery(weekly, now) == datetime(2026, 3, 9, 8, 30, tzinfo=UTC)
    # Across the spring change (29 March 2026 in Paris): 09:30 is 07:30 UTC from then on.
    late = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)
    assert next_delivery(daily, late) == datetime(2026, 3, 29, 7, 30, tzinfo=UTC)
    assert "daily at 09:30 Europe/Paris" in daily.describe()
    assert weekly.describe().startswith("Mondays at 09:30")


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"frequency": "hourly"}, "refresh, daily, weekly"),
        ({"at_time": "25:00"}, "hours go from 00 to 23"),
        ({"timezone": "Mars/Olympus"}, "Unknown time zone"),
        ({"weekday": "someday"}, "is not a day"),
        ({"cap": 0}, "1 to 10"),
        ({"cap": 11}, "1 to 10"),
        ({"min_score": 101}, "0 to 100"),
        ({"exclude": "x" * 101}, "At most 100"),
    ],
)
def test_bad_settings_say_what_would_work(change: dict[str, object], says: str) -> None:
    with pytest.raises(FeedError, match=says):
        tuned(BASE, **change)  # type: ignore[arg-type]


def test_negative_terms_are_stored_as_bare_words() -> None:
    assert parse_exclude("-survey, benchmark  -survey toy") == "survey benchmark toy"
    assert parse_exclude("   ") == ""
    feed = tuned(BASE, exclude="-survey", min_score=40, cap=3)
    assert feed.excluded == ("survey",)
    assert feed.min_score == 0.4
    assert feed.describe() == "after each refresh · 3 a message · without -survey · score ≥ 40%"

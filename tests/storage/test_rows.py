"""The one row reader (bot/storage/rows.py) every record of the storage package goes through."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from bot.daily.records import Schedule
from bot.storage.rows import from_row, ts


def test_timestamps_are_utc_text_and_naive_ones_are_refused() -> None:
    paris = timezone(timedelta(hours=1))
    assert ts(datetime(2026, 1, 1, 10, tzinfo=paris)) == "2026-01-01T09:00:00+00:00"
    assert ts(None) is None
    with pytest.raises(ValueError, match="timezone-aware"):
        ts(datetime(2026, 1, 1, 10))


def test_a_row_becomes_its_record_by_field_name_and_type() -> None:
    row = {
        "guild_id": 1,
        "channel_id": 2,
        "post_time": "09:30",
        "timezone": "UTC",
        "topic": None,
        "enabled": 0,  # SQLite's false
        "stopped_reason": None,
        "start_date": "2026-01-01",
        "updated_at": "2026-01-01T09:00:00+00:00",
    }
    schedule = from_row(Schedule, row, time="post_time")
    assert schedule.time == "09:30"
    assert schedule.enabled is False
    assert schedule.updated_at == datetime(2026, 1, 1, 9, tzinfo=UTC)
    assert schedule.topic is None

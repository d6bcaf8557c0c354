from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.daily.rules import (
    DailyError,
    draw,
    due_instant,
    local_date,
    next_local_midnight,
    parse_time,
    parse_timezone,
    pick_marker,
    pool_order,
    remaining,
)

NY = ZoneInfo("America/New_York")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("09:30", time(9, 30)),
        ("7:05", time(7, 5)),
        ("00:00", time(0, 0)),
        (" 23:59 ", time(23, 59)),
    ],
)
def test_parse_time_accepts_24_hour_times(text, expected):
    assert parse_time(text) == expected


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("25:00", "hours go from 00 to 23"),
        ("12:60", "minutes go from 00 to 59"),
        ("noon", "HH:MM"),
        ("", "HH:MM"),
        ("9", "HH:MM"),
    ],
)
def test_parse_time_rejects_with_a_clear_message(text, needle):
    with pytest.raises(DailyError, match=needle):
        parse_time(text)


def test_parse_timezone_canonicalises_case():
    assert parse_timezone("Europe/Paris") == "Europe/Paris"
    assert parse_timezone("europe/paris") == "Europe/Paris"
    assert parse_timezone("utc") == "UTC"


def test_unknown_timezone_is_a_clear_error():
    with pytest.raises(DailyError, match="Unknown time zone 'Mars/Olympus'"):
        parse_timezone("Mars/Olympus")


@pytest.mark.parametrize(
    ("typo", "suggestion"), [("Europe/Pariss", "Europe/Paris"), ("paris", "Europe/Paris")]
)
def test_misspelt_timezone_suggests(typo, suggestion):
    with pytest.raises(DailyError, match="Did you mean") as info:
        parse_timezone(typo)
    assert suggestion in str(info.value)


def test_spaces_in_a_zone_name_are_underscores():
    assert parse_timezone("America/New York") == "America/New_York"


def test_path_like_zone_is_rejected():
    with pytest.raises(DailyError):
        parse_timezone("../../etc/passwd")


def test_due_instant_on_an_ordinary_day():
    assert due_instant(date(2025, 6, 1), time(9, 0), NY) == datetime(2025, 6, 1, 13, 0, tzinfo=UTC)


def test_spring_forward_gap_posts_at_the_transition():
    # 2025-03-09 02:00 EST jumps to 03:00 EDT: 02:30 does not exist; post at 03:00 EDT.
    due = due_instant(date(2025, 3, 9), time(2, 30), NY)
    assert due == datetime(2025, 3, 9, 7, 0, tzinfo=UTC)
    assert due.astimezone(NY).date() == date(2025, 3, 9)


def test_half_hour_gap_lord_howe():
    tz = ZoneInfo("Australia/Lord_Howe")  # 02:00 -> 02:30 on 2025-10-05
    due = due_instant(date(2025, 10, 5), time(2, 15), tz)
    assert due.astimezone(tz).replace(tzinfo=None) == datetime(2025, 10, 5, 2, 30)


def test_fall_back_ambiguity_uses_first_occurrence():
    # 2025-11-02 01:30 happens twice in New York; the first one is EDT (UTC-4).
    assert due_instant(date(2025, 11, 2), time(1, 30), NY) == datetime(
        2025, 11, 2, 5, 30, tzinfo=UTC
    )


def test_local_date_and_midnight():
    now = datetime(2025, 1, 1, 3, 0, tzinfo=UTC)
    assert local_date(now, NY) == date(2024, 12, 31)
    assert next_local_midnight(date(2024, 12, 31), NY) == datetime(2025, 1, 1, 5, 0, tzinfo=UTC)
    # a 23-hour day
    assert next_local_midnight(date(2025, 3, 9), NY) - next_local_midnight(
        date(2025, 3, 8), NY
    ) == (datetime(2, 1, 1, 23) - datetime(2, 1, 1))


ids_strategy = st.sets(
    st.text(alphabet="abcdef0123", min_size=1, max_size=6), min_size=1, max_size=30
)


@given(ids_strategy, ids_strategy, st.integers(0, 2**63))
def test_new_ids_do_not_reorder_existing_ones(old, new, seed):
    before = pool_order(old, seed, 0)
    after = [pid for pid in pool_order(old | new, seed, 0) if pid in old]
    assert before == after


def test_pool_order_depends_on_seed_and_epoch():
    ids = [f"p{i}" for i in range(20)]
    assert pool_order(ids, 1, 0) == pool_order(list(reversed(ids)), 1, 0)
    assert pool_order(ids, 1, 0) != pool_order(ids, 2, 0)
    assert pool_order(ids, 1, 0) != pool_order(ids, 1, 1)


@given(st.sets(st.integers(0, 999), min_size=1, max_size=25), st.integers(0, 2**63))
def test_draw_without_replacement_then_reshuffle(numbers, seed):
    ids = {f"p{n}" for n in numbers}
    drawn: list[str] = []
    epoch = 0
    for _ in range(len(ids)):
        result = draw(ids, drawn, seed, epoch)
        assert result.epoch == 0
        drawn.append(result.paper_id)
    assert sorted(drawn) == sorted(ids)
    assert remaining(ids, drawn) == 0
    fresh = draw(ids, drawn, seed, epoch, avoid=drawn[-1])
    assert fresh.epoch == 1
    if len(ids) > 1:
        assert fresh.paper_id != drawn[-1]


def test_removed_ids_are_ignored_and_new_ones_join():
    drawn = {"a", "b", "gone"}
    assert draw({"a", "b", "c"}, drawn, 5, 0) == draw({"c"}, set(), 5, 0)
    assert remaining({"a", "b", "c", "d"}, drawn) == 2


def test_empty_pool_is_an_error():
    with pytest.raises(DailyError, match="empty"):
        draw(set(), set(), 1, 0)


def test_marker_is_stable_and_distinct():
    a = pick_marker(1, date(2025, 1, 1), "p1")
    assert a == pick_marker(1, "2025-01-01", "p1")
    assert a != pick_marker(2, date(2025, 1, 1), "p1")
    assert a != pick_marker(1, date(2025, 1, 2), "p1")
    assert len(a) < 40

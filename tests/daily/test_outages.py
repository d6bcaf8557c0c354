"""Issue 26: the paper of the day while its database cannot be reached (both backends).

What should happen: a failed step is one warning line naming the database and the wait (never
a traceback: a database outage is not a bug), the scheduler tries again by itself with growing
waits, and once the database answers the day's post goes out once. The real server killed and
restarted is tests/app/exts/daily/test_database_restart.py; here the outage is injected at the
storage facade so that the waits can be read off a fake clock.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import sqlite3
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.daily.scheduler import DailyRequest
from bot.daily.tables import DailyTables
from bot.storage.store import Storage
from tests.daily.test_scheduler import START, Corpus, FakeClock, FakePoster, Harness

DUE = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
FAILURES = 5


def outage_error(storage: Storage) -> Exception:
    """What the driver raises when its server is gone (PEP 249's OperationalError)."""
    if storage.dialect == "postgresql":
        import psycopg

        return psycopg.OperationalError("connection failed: Connection refused")
    return sqlite3.OperationalError("disk I/O error")


class RecordingClock(FakeClock):
    """FakeClock that remembers how long each sleep of the loop was."""

    def __init__(self, now: datetime) -> None:
        super().__init__(now)
        self.waits: list[timedelta] = []

    async def sleep_until(self, when: datetime) -> None:
        self.waits.append(when - self.current)
        await super().sleep_until(when)


async def test_a_database_outage_is_retried_with_backoff_in_one_line_each(
    database_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    clock = RecordingClock(START)
    h = Harness(database_url, clock, FakePoster(clock), Corpus())
    sched = await h.open()
    assert h.storage is not None
    storage = h.storage
    try:
        await sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC"))
        error, left = outage_error(storage), [FAILURES]
        real_run = storage.run

        async def run(*args: Any, **kwargs: Any) -> Any:
            if left[0] > 0:
                left[0] -= 1
                raise error
            return await real_run(*args, **kwargs)

        clock.set(DUE)
        clock.limit = DUE + timedelta(hours=1)  # after the post, the loop sleeps until tomorrow
        monkeypatch.setattr(storage, "run", run)
        caplog.set_level(logging.INFO, logger="bot.daily")
        sched.start()
        # Until the loop has slept after the step that posted (each failed step sleeps once).
        deadline = asyncio.get_running_loop().time() + 30  # a bound for a stalled machine only
        while len(clock.waits) <= FAILURES and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.005)
    finally:
        await sched.stop()
        await storage.close()

    assert [m.guild_id for m in h.poster.messages] == [1]
    check = await Storage.open(database_url)
    try:
        pick = await DailyTables(check).get_pick(1, "2025-03-01")
    finally:
        await check.close()
    assert pick is not None
    assert pick.state == "sent"

    waits = [w.total_seconds() for w in clock.waits[:FAILURES]]
    assert all(b > a for a, b in itertools.pairwise(waits)), waits  # it backs off,
    assert waits[0] <= 60, waits  # starting soon,
    assert waits[-1] <= 300, waits  # and the post follows the database's return within minutes
    records = [r for r in caplog.records if r.name.startswith("bot.daily")]
    warnings = [r for r in records if r.levelno >= logging.WARNING]
    assert [r.exc_info for r in records] == [None] * len(records)  # no traceback
    assert len(warnings) == FAILURES, [r.getMessage() for r in warnings]
    for record in warnings:
        line = record.getMessage()
        assert "\n" not in line
        assert "the database cannot be reached (OperationalError: " in line
        assert "trying again in" in line
    assert any("database answers again" in r.getMessage() for r in records)

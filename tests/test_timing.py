"""The one retry rule (bot/timing.py) the daily poster and the source fetcher share, and the
real clock's chunked sleep."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from bot import timing
from bot.daily import delivery
from bot.sources import http
from bot.timing import SystemClock, backoff


def test_backoff_doubles_caps_and_honours_retry_after() -> None:
    assert [backoff(n, 30, 100) for n in (1, 2, 3, 4)] == [30, 60, 100, 100]
    assert backoff(1, 30, 100, retry_after=250) == 250
    assert backoff(3, 30, 100, retry_after=5) == 100


def test_daily_posts_and_source_fetches_retry_on_the_same_rule() -> None:
    assert delivery.backoff is timing.backoff
    assert http.backoff is timing.backoff


async def test_system_clock_sleeps_in_chunks_until_the_instant(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.offset += timedelta(seconds=seconds)
        await real_sleep(0)

    class Shifted(SystemClock):
        offset = timedelta()

        def now(self):
            return super().now() + self.offset

    clock = Shifted()
    monkeypatch.setattr(timing.asyncio, "sleep", fake_sleep)
    await clock.sleep_until(clock.now() + timedelta(seconds=2000))
    assert slept[:2] == [timing.MAX_SLEEP_CHUNK, timing.MAX_SLEEP_CHUNK]
    assert sum(slept) == pytest.approx(2000, abs=0.5)

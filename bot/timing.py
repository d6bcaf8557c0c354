"""Time for the background loops: what time it is, sleeping until an instant, how long to wait
before retrying.

One place for both because the daily poster (bot/daily) and the source fetcher (bot/sources)
retry on the same rule and the refresh loop sleeps like the daily one; tests inject a `Clock`.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Protocol

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


def backoff(attempt: int, base: float, cap: float, retry_after: float | None = None) -> float:
    """Seconds to wait after failed attempt number `attempt` (1-based): doubling, capped.

    A server-given Retry-After wins when it is longer, since retrying sooner only fails again.
    """
    delay = min(cap, base * (2.0 ** max(0, attempt - 1)))
    if retry_after is not None:
        delay = max(delay, retry_after)
    return max(0.0, delay)

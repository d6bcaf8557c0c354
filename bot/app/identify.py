"""Pacing IDENTIFYs as Discord allows: `max_concurrency` per 5 seconds, one per bucket.

Discord's session start limit puts shard `id` in bucket `id % max_concurrency` and lets each
bucket IDENTIFY once per 5 s. discord.py's default `before_identify_hook` sleeps 5 s before every
IDENTIFY but the first, whatever the bucket, so a process running shards 0-15 of a bot with
`max_concurrency` 16 would take 75 s to connect instead of none. This waits only as long as the
shard's own bucket needs, measured from that bucket's last IDENTIFY in this process.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

import aiohttp
import discord

log = logging.getLogger(__name__)
IDENTIFY_INTERVAL = 5.0  # seconds between IDENTIFYs of one bucket (Discord's rule)


class IdentifyPacer:
    """Waits before an IDENTIFY until its bucket is free; `max_concurrency` is asked once."""

    def __init__(
        self,
        max_concurrency: Callable[[], Awaitable[int]],
        *,
        clock: Callable[[], float] = time.monotonic,
        interval: float = IDENTIFY_INTERVAL,
    ) -> None:
        self._ask = max_concurrency
        self._clock = clock
        self.interval = interval
        self.concurrency: int | None = None
        self._last: dict[int, float] = {}
        self._locks: dict[int, asyncio.Lock] = {}

    async def _concurrency(self) -> int:
        if self.concurrency is None:
            try:
                self.concurrency = max(1, int(await self._ask()))
            except (
                discord.DiscordException,
                aiohttp.ClientError,
                OSError,
                TimeoutError,
                KeyError,
                TypeError,
                ValueError,
            ) as exc:  # not known: the safe pace, one bucket
                log.warning("session start limit unknown (%s): one IDENTIFY per 5 s", exc)
                self.concurrency = 1
        return self.concurrency

    async def wait(self, shard_id: int | None) -> float:
        """Sleep until shard `shard_id` may IDENTIFY; returns the seconds slept."""
        bucket = (shard_id or 0) % await self._concurrency()
        lock = self._locks.setdefault(bucket, asyncio.Lock())
        async with lock:
            last = self._last.get(bucket)
            delay = 0.0 if last is None else max(0.0, last + self.interval - self._clock())
            if delay:
                await asyncio.sleep(delay)
            self._last[bucket] = self._clock()
        return delay

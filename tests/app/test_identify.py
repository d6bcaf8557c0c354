"""IDENTIFY pacing: one per 5 s per bucket (`shard_id % max_concurrency`), as Discord allows."""

from __future__ import annotations

import asyncio

import discord

from bot.app.identify import IdentifyPacer


def asker(value: int | Exception) -> tuple[IdentifyPacer, list[int]]:
    asked: list[int] = []

    async def ask() -> int:
        asked.append(1)
        if isinstance(value, Exception):
            raise value
        return value

    return IdentifyPacer(ask, interval=0.2), asked


async def test_one_bucket_waits_the_interval_between_identifies() -> None:
    pacer, asked = asker(1)
    waits = [await pacer.wait(shard) for shard in (0, 1, 2)]
    assert waits[0] == 0.0
    assert all(0.1 < w <= 0.2 for w in waits[1:])
    assert asked == [1]  # the limit is asked once


async def test_shards_in_different_buckets_identify_at_once() -> None:
    pacer, _ = asker(16)
    waits = await asyncio.gather(*(pacer.wait(shard) for shard in range(4)))
    assert waits == [0.0, 0.0, 0.0, 0.0]
    assert await pacer.wait(16) > 0.1  # bucket 0 again


async def test_an_unknown_limit_paces_as_one_bucket() -> None:
    pacer, _ = asker(discord.GatewayNotFound())
    assert await pacer.wait(0) == 0.0
    assert await pacer.wait(1) > 0.1
    assert pacer.concurrency == 1

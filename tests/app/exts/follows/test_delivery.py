"""Follow notices through the loopback Discord when things go wrong or get big: a 503 on a DM
is retried (by the retry loop, or at the next start) and delivered exactly once; a send cut
short before it was confirmed is found, not repeated; 15 `/follow add` at once keep the limit;
10,000 new matches make one paged message within Discord's limits."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from bot.follows.outbox import Outbox
from bot.follows.store import Follows
from bot.storage.schema import StorageError
from tests.app.exts.daily.support import SteppedClock, until
from tests.app.exts.follows.support import MATCHING, OTHER, QUERY, Env, grown, new_paper
from tests.app.helpers import answered, assert_within_limits

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def posts_to(env: Env, channel_id: str) -> int:
    """Message creations the bot asked Discord for in a channel, failed ones included."""
    path = f"/channels/{channel_id}/messages"
    return sum(1 for c in env.fake.requests if c.method == "POST" and c.path.endswith(path))


async def test_a_503_on_the_dm_is_retried_by_the_loop_and_delivered_once(env: Env) -> None:
    fake, clock = env.fake, SteppedClock(T0)
    await env.start(clock=clock)
    await env.slash("follow add", {"query": QUERY})
    dm = fake.world.dm_channel(fake.alice)
    fault = fake.faults.server_error("POST", f"/channels/{dm.id}/messages", status=503)
    engine = grown(env.engine, *MATCHING, *OTHER)

    await env.reload(engine)

    assert fault.hits == 1
    assert fake.channel_messages(dm) == []
    listed = await env.slash("follow list")
    assert "⚠️ 1 notice waiting: Discord answered 503, retrying" in listed.embed["description"]
    await env.reload(engine)  # a round before the backoff ends does not send it early
    assert fake.channel_messages(dm) == []

    clock.advance(minutes=1, seconds=1)
    await until(lambda: _count(env, dm.id, 1), what="the retried notice")
    [notice] = fake.channel_messages(dm)
    assert "Hyperbolic Embeddings for Trees" in notice["embeds"][0]["description"]
    await env.reload(engine)
    await env.stop()
    await env.start(engine, clock=clock)
    assert len(fake.channel_messages(dm)) == 1
    assert posts_to(env, dm.id) == 2  # the failed one, and the one that went through
    listed = await env.slash("follow list")
    assert "⚠️" not in listed.embed["description"]


async def _count(env: Env, channel_id: str, n: int) -> bool:
    return len(env.fake.channel_messages(channel_id)) >= n


async def test_a_notice_that_failed_is_sent_at_the_next_start(env: Env) -> None:
    fake, clock = env.fake, SteppedClock(T0)
    await env.start(clock=clock)
    await env.slash("follow add", {"query": QUERY})
    dm = fake.world.dm_channel(fake.alice)
    fake.faults.server_error("POST", f"/channels/{dm.id}/messages", status=503)
    engine = grown(env.engine, *MATCHING)
    await env.reload(engine)
    await env.stop()
    assert fake.channel_messages(dm) == []

    clock.advance(minutes=5)
    await env.start(engine, clock=clock)

    [notice] = fake.channel_messages(dm)
    assert notice["embeds"][0]["footer"]["text"].startswith("2 new · page 1/1")
    state = await Follows(env.follows_storage).outbox.due(clock.now() + timedelta(days=1))
    assert state == []


async def test_a_send_not_confirmed_is_found_again_not_repeated(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, clock = env.fake, SteppedClock(T0)
    await env.start(clock=clock)
    await env.slash("follow add", {"query": QUERY})
    dm = fake.world.dm_channel(fake.alice)
    confirm = Outbox.mark_sent
    calls = 0

    async def lost_once(self: Outbox, *args: object, **kwargs: object) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:  # the process dies after Discord took the message, before recording it
            raise StorageError("database went away")
        await confirm(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Outbox, "mark_sent", lost_once)
    engine = grown(env.engine, *MATCHING)
    await env.reload(engine)
    await env.stop()
    assert len(fake.channel_messages(dm)) == 1

    clock.advance(minutes=10)  # the dead process's lease has run out
    await env.start(engine, clock=clock)

    assert len(fake.channel_messages(dm)) == 1
    assert posts_to(env, dm.id) == 1  # found in the DM's history: not sent again
    assert await Follows(env.follows_storage).outbox.next_due() is None


async def test_fifteen_concurrent_follow_adds_store_ten(env: Env) -> None:
    await env.start()
    handles = await asyncio.gather(
        *(env.fake.slash("follow add", {"query": f"topic {i}"}) for i in range(15))
    )
    replies = [await answered(h, type=4, ephemeral=True) for h in handles]
    assert len(await Follows(env.follows_storage).personal(int(env.fake.alice.id))) == 10
    full = [r for r in replies if "the most allowed" in r.embed["description"]]
    assert len(full) == 5


async def test_ten_thousand_new_matches_make_one_paged_message(env: Env) -> None:
    fake = env.fake
    await env.start()
    await env.slash("follow add", {"query": "hyperbolic"})
    many = [new_paper(1000 + i, f"Hyperbolic study {i}", "Curved spaces.") for i in range(10_000)]
    dm = fake.world.dm_channel(fake.alice)

    await env.reload(grown(env.engine, *many))

    [notice] = fake.channel_messages(dm)
    assert posts_to(env, dm.id) == 1
    assert_within_limits(notice)
    embed = notice["embeds"][0]
    assert embed["footer"]["text"].startswith("10000 new · page 1/1000 ")
    assert embed["description"].startswith("1. ")
    assert embed["description"].endswith("…and 9990 more (▶)")
    page2 = await answered(await fake.click(notice, _ids(notice)[1]), type=7)
    assert page2.embed["description"].startswith("11. [Hyperbolic study 10]")
    assert page2.embed["footer"]["text"].startswith("10000 new · page 2/1000 ")
    page3 = await answered(await fake.click(notice, _ids(fake.message(notice))[1]), type=7)
    assert page3.embed["description"].startswith("21. ")
    back = await answered(await fake.click(notice, _ids(fake.message(notice))[0]), type=7)
    assert back.embed["description"].startswith("11. ")


def _ids(message: dict) -> list[str]:  # type: ignore[type-arg]
    """The notice's ◀ ▶ (its Save menu, Open links and Stop following aside)."""
    ids = [c.get("custom_id", "") for row in message["components"] for c in row["components"]]
    return [i for i in ids if i.startswith("pb:fb:")]

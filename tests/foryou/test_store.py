"""For you's tables on both backends: ratings (a toggle, 👎 wins over a save), the one shown
memory shared by every feed, feed settings, a follow's claim that respects both, and
`/library clear` deleting all of it. A member's rows are read with their own id only."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest_asyncio

from bot.follows import Feeds, Follows
from bot.follows.feeds import tuned
from bot.foryou import DOWN, UP, Ratings, signals_of
from bot.library import Library
from bot.storage.store import Storage

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ALICE, BOB = 1 << 45, (1 << 45) + 1


@pytest_asyncio.fixture
async def storage(database_url: str) -> AsyncIterator[Storage]:
    store = await Storage.open(database_url)
    yield store
    await store.close()


async def test_ratings_toggle_and_stay_with_their_member(storage: Storage) -> None:
    ratings = Ratings(storage)
    assert await ratings.rate(ALICE, "p1", UP, T0) == UP
    assert await ratings.rate(ALICE, "p1", UP, T0) is None  # the same again takes it back
    assert await ratings.rate(ALICE, "p1", DOWN, T0) == DOWN
    assert await ratings.rate(ALICE, "p2", UP, T0 + timedelta(seconds=1)) == UP
    assert [(r.paper_id, r.rating) for r in await ratings.of(ALICE)] == [("p2", 1), ("p1", -1)]
    assert await ratings.of(BOB) == []
    assert await ratings.rejected(ALICE) == {"p1"}
    assert await ratings.rejected(BOB) == set()
    # A save and a 👎 of the same paper: the 👎 wins; likes are saves and 👍, newest first.
    await Library(storage).save(ALICE, "p1", T0)
    await Library(storage).save(ALICE, "p3", T0)
    signals = await signals_of(Library(storage), ratings, ALICE)
    assert signals.liked == ("p2", "p3")
    assert signals.disliked == ("p1",)


async def test_one_shown_memory_per_member(storage: Storage) -> None:
    ratings = Ratings(storage)
    await ratings.rate(ALICE, "bad", DOWN, T0)
    assert await ratings.mark_shown(ALICE, ["a", "b", "bad", "a"], "new", T0) == ["a", "b"]
    assert await ratings.mark_shown(ALICE, ["b", "c"], "foryou", T0) == ["c"]
    assert await ratings.mark_shown(BOB, ["a"], "new", T0) == ["a"]  # Bob's memory is his
    assert await ratings.shown_among(ALICE, ["a", "c", "z"]) == {"a", "c"}
    assert await ratings.shown_among(BOB, ["a", "c"]) == {"a"}


async def test_a_dm_follow_skips_what_any_feed_showed_and_daily_notices_gather(
    storage: Storage,
) -> None:
    follows, ratings = Follows(storage), Ratings(storage)
    one = await follows.add(ALICE, "graphs", now=T0)
    two = await follows.add(ALICE, "trees", now=T0)
    await ratings.mark_shown(ALICE, ["p1"], "new", T0)
    await ratings.rate(ALICE, "p9", DOWN, T0)
    _batch, first = await follows.claim(one, ["p1", "p2", "p9"], T0)
    assert first == ["p2"]  # shown by /new, and 👎: neither is pushed
    _batch, second = await follows.claim(two, ["p2", "p3"], T0)
    assert second == ["p3"]  # the other follow already pushed p2
    # A daily feed: the second refresh's matches join the waiting notice, not a new message.
    due = T0 + timedelta(hours=5)
    batch, got = await follows.claim(one, ["p4"], T0, not_before=due)
    again, more = await follows.claim(one, ["p5", "p6"], T0 + timedelta(hours=1), not_before=due)
    assert (got, more, again) == (["p4"], ["p5", "p6"], batch)
    assert await follows.batch(batch) == ["p4", "p5", "p6"]
    notice = await follows.outbox.notice(batch)
    assert notice is not None
    assert notice.papers == 3
    assert notice.next_attempt_at == due
    assert batch not in [n.batch_id for n in await follows.outbox.due(T0 + timedelta(hours=2))]
    assert batch in [n.batch_id for n in await follows.outbox.due(due)]
    # Once a sender claimed it, later matches make a notice of their own.
    await follows.outbox.mark_sending(batch, "me", due, due + timedelta(minutes=5), attempts=0)
    third, late = await follows.claim(one, ["p7"], due, not_before=due)
    assert late == ["p7"]
    assert third != batch


async def test_feed_settings_and_clear_delete_everything_personal(storage: Storage) -> None:
    follows, feeds, ratings = Follows(storage), Feeds(storage), Ratings(storage)
    mine = await follows.add(ALICE, "graphs", now=T0)
    channel = await follows.add(ALICE, "trees", now=T0, channel=(5, 6))
    bobs = await follows.add(BOB, "graphs", now=T0)
    for follow in (mine, channel, bobs):
        current = await feeds.get(follow.follow_id, follow.user_id)
        assert current.frequency == "refresh"
        assert current.cap == 10
        await feeds.put(tuned(current, frequency="weekly", cap=3, exclude="-survey"), T0)
    got = await feeds.get(mine.follow_id, ALICE)
    assert (got.frequency, got.cap, got.excluded) == ("weekly", 3, ("survey",))
    await ratings.rate(ALICE, "p1", UP, T0)
    await ratings.rate(BOB, "p1", DOWN, T0)
    await ratings.mark_shown(ALICE, ["p1"], "new", T0)

    counts = await Library(storage).forget_user(ALICE)
    assert counts["ratings"] == 1
    assert counts["follows"] == 1
    assert await ratings.of(ALICE) == []
    assert await ratings.shown_among(ALICE, ["p1"]) == set()
    assert (await feeds.get(mine.follow_id, ALICE)).frequency == "refresh"  # gone: defaults
    # The server's channel follow keeps its settings; Bob keeps everything.
    assert (await feeds.get(channel.follow_id, 0)).cap == 3
    assert [r.rating for r in await ratings.of(BOB)] == [DOWN]
    assert (await feeds.get(bobs.follow_id, BOB)).cap == 3
    # Removing a follow removes its settings.
    await follows.remove(bobs.follow_id)
    assert (await feeds.get(bobs.follow_id, BOB)).cap == 10

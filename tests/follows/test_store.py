"""The follows store on both backends: limits held by the database under concurrent adds, and
each notice's way out (claimed, sent, confirmed; a failure retried, never a second send)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
import pytest_asyncio

from bot.follows.store import AlreadyFollowed, Follows, TooManyFollows
from bot.library.store import Library
from bot.storage.store import Storage

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
LEASE = timedelta(minutes=5)


@pytest_asyncio.fixture
async def storage(database_url: str) -> AsyncIterator[Storage]:
    store = await Storage.open(database_url)
    yield store
    await store.close()


async def test_fifteen_concurrent_adds_leave_exactly_the_limit(storage: Storage) -> None:
    follows = Follows(storage)
    added = await asyncio.gather(
        *(follows.add(1, f"topic {i}", now=T0, limit=10) for i in range(15)),
        return_exceptions=True,
    )
    assert len(await follows.personal(1)) == 10
    refused = [r for r in added if isinstance(r, BaseException)]
    assert len(refused) == 5
    assert all(isinstance(r, TooManyFollows) and r.limit == 10 for r in refused)
    # A server's channel follows have their own limit, held the same way.
    channel = await asyncio.gather(
        *(
            follows.add(100 + i, "graphs", now=T0, channel=(9, 1000 + i), limit=10)
            for i in range(15)
        ),
        return_exceptions=True,
    )
    assert len(await follows.of_guild(9)) == 10
    assert sum(isinstance(r, TooManyFollows) for r in channel) == 5
    assert len(await follows.personal(1)) == 10  # the personal ones are apart


async def test_the_same_follow_added_at_once_is_stored_once(storage: Storage) -> None:
    follows = Follows(storage)
    added = await asyncio.gather(
        *(follows.add(2, "optimal transport", now=T0, limit=10) for _ in range(6)),
        return_exceptions=True,
    )
    [kept] = await follows.personal(2)
    refused = [r for r in added if isinstance(r, BaseException)]
    assert len(refused) == 5
    assert all(isinstance(r, AlreadyFollowed) and r.follow == kept for r in refused)


async def test_a_notice_is_claimed_sent_and_confirmed_once(storage: Storage) -> None:
    follows = Follows(storage)
    follow = await follows.add(1, "graphs", now=T0)
    batch, claimed = await follows.claim(follow, ["a", "b", "c"], T0)
    assert claimed == ["a", "b", "c"]
    [due] = await follows.outbox.due(T0)
    assert (due.batch_id, due.follow_id, due.papers, due.state) == (
        batch,
        follow.follow_id,
        3,
        "pending",
    )
    assert await follows.outbox.due(T0, console=True) == []  # the console's reader only
    # Two senders read it; the claim is conditional, so exactly one may send.
    mine = await follows.outbox.mark_sending(batch, "host:1", T0, T0 + LEASE, attempts=0)
    assert mine is not None
    assert mine.attempts == 1
    assert await follows.outbox.mark_sending(batch, "host:2", T0, T0 + LEASE, attempts=0) is None
    assert await follows.outbox.due(T0) == []  # in flight, under its lease
    # A transient failure: due again after the backoff, and /follow list can say so.
    later = T0 + timedelta(minutes=1)
    await follows.outbox.mark_retry(batch, "Discord answered 503", later, T0)
    assert await follows.outbox.due(T0) == []
    assert await follows.outbox.next_due() == later
    assert await follows.outbox.waiting([follow.follow_id]) == {
        follow.follow_id: (1, "Discord answered 503")
    }
    assert [n.batch_id for n in await follows.outbox.due(later)] == [batch]
    taken = await follows.outbox.mark_sending(batch, "host:2", later, later + LEASE, attempts=1)
    assert taken is not None
    assert taken.attempts == 2
    assert taken.first_attempt_at == T0
    await follows.outbox.mark_sent(batch, 12345, later)
    assert await follows.outbox.due(later + timedelta(days=1)) == []
    assert await follows.outbox.next_due() is None
    assert await follows.outbox.waiting([follow.follow_id]) == {}
    assert await follows.outbox.waiting([]) == {}
    assert (await follows.outbox.notice(batch)).message_id == 12345  # type: ignore[union-attr]
    # The papers stay claimed for that follower: never in a second notice.
    assert (await follows.claim(follow, ["a", "d"], later))[1] == ["d"]


async def test_a_send_cut_short_is_due_again_when_its_lease_ends(storage: Storage) -> None:
    follows = Follows(storage)
    follow = await follows.add(1, "graphs", now=T0)
    batch, _ = await follows.claim(follow, ["a"], T0)
    await follows.outbox.mark_sending(batch, "host:1", T0, T0 + LEASE, attempts=0)
    # host:1 died after sending, before confirming: nobody else may take it during its lease.
    assert await follows.outbox.due(T0 + LEASE - timedelta(seconds=1)) == []
    assert await follows.outbox.next_due() == T0 + LEASE
    [stale] = await follows.outbox.due(T0 + LEASE)
    assert stale.state == "sending"
    assert stale.attempts == 1


async def test_notices_of_a_removed_follow_are_dropped(storage: Storage) -> None:
    follows = Follows(storage)
    follow = await follows.add(1, "graphs", now=T0)
    await follows.claim(follow, ["a"], T0)
    assert await follows.remove(follow.follow_id)
    assert await follows.outbox.due(T0) == []


async def test_forgetting_a_reader_forgets_their_queued_notices(storage: Storage) -> None:
    follows = Follows(storage)
    follow = await follows.add(1, "graphs", now=T0)
    batch, _ = await follows.claim(follow, ["a"], T0)
    await Library(storage).forget_user(1)
    assert await follows.outbox.notice(batch) is None


@pytest.mark.parametrize("size", [25])
async def test_a_batch_is_read_a_page_at_a_time(storage: Storage, size: int) -> None:
    follows = Follows(storage)
    follow = await follows.add(1, "graphs", now=T0)
    ids = [f"p{i:03d}" for i in range(size)]
    batch, _ = await follows.claim(follow, ids, T0)
    assert await follows.batch_size(batch) == size
    assert await follows.batch_page(batch, 20, 10) == ids[20:]
    assert await follows.batch_page(batch, 0, 10) == ids[:10]

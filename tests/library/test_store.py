"""The library and follow stores on their own: the SQL they run, row by row."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest_asyncio

from bot.follows.store import Follows
from bot.library.store import Library
from bot.storage.store import Storage

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest_asyncio.fixture
async def storage(database_url: str) -> AsyncIterator[Storage]:
    """A fresh database on each backend (tests/conftest.py): the stores run on both."""
    store = await Storage.open(database_url)
    yield store
    await store.close()


async def test_saved_papers_newest_first_read_and_remove(storage: Storage) -> None:
    lib = Library(storage)
    assert await lib.save(1, "p/a", T0, guild_id=9)
    assert await lib.save(1, "p/b", T0 + timedelta(hours=1))
    assert not await lib.save(1, "p/a", T0 + timedelta(hours=2))  # twice: nothing changes
    assert [s.paper_id for s in await lib.all(1)] == ["p/b", "p/a"]
    first = await lib.get(1, "p/a")
    assert first is not None
    assert first.saved_at == T0
    assert first.guild_id == 9
    assert not first.read
    assert await lib.mark_read(1, "p/a", T0)
    read = await lib.get(1, "p/a")
    assert read is not None
    assert read.read
    assert await lib.mark_read(1, "p/a", T0, read=False)
    assert not await lib.mark_read(1, "p/zzz", T0)
    assert await lib.remove(1, "p/b")
    assert not await lib.remove(1, "p/b")
    assert await lib.count(1) == 1
    assert await lib.count(2) == 0


async def test_top_counts_per_server_and_period(storage: Storage) -> None:
    lib = Library(storage)
    await lib.save(1, "p/a", T0 - timedelta(days=40), guild_id=9)
    await lib.save(2, "p/a", T0, guild_id=9)
    await lib.save(3, "p/b", T0, guild_id=9)
    await lib.save(4, "p/b", T0, guild_id=9)
    await lib.save(5, "p/c", T0, guild_id=8)  # another server
    week = T0 - timedelta(days=7)
    assert [(t.paper_id, t.count) for t in await lib.top_saved(9, week, 5)] == [
        ("p/b", 2),
        ("p/a", 1),
    ]
    assert [(t.paper_id, t.count) for t in await lib.top_saved(9, None, 5)] == [
        ("p/a", 2),
        ("p/b", 2),
    ]
    await lib.add_reaction(9, 100, "p/a", 1, "👍", T0)
    await lib.add_reaction(9, 100, "p/a", 1, "🔥", T0)  # one member, two emoji: one reader
    await lib.add_reaction(9, 100, "p/a", 1, "👍", T0)  # the same reaction again
    await lib.add_reaction(9, 100, "p/a", 2, "👍", T0)
    assert [(t.paper_id, t.count) for t in await lib.top_reacted(9, week, 5)] == [("p/a", 2)]
    await lib.remove_reaction(100, 2, "👍")
    assert [t.count for t in await lib.top_reacted(9, None, 5)] == [1]


async def test_default_venue_set_and_cleared(storage: Storage) -> None:
    lib = Library(storage)
    assert await lib.default_venue(9) is None
    await lib.set_default_venue(9, "ICML 2026", T0)
    assert await lib.default_venue(9) == "ICML 2026"
    await lib.set_default_venue(9, None, T0)
    assert await lib.default_venue(9) is None


async def test_corpus_record_claims_and_forgetting(storage: Storage) -> None:
    follows = Follows(storage)
    assert await follows.record_corpus(["a", "b"], T0) == []  # first run: nothing is new
    assert await follows.record_corpus(["a", "b", "c", "c"], T0) == ["c"]
    assert await follows.record_corpus(["a", "b", "c"], T0) == []
    mine = await follows.add(1, "graphs", now=T0)
    also = await follows.add(1, "trees", now=T0)
    chan = await follows.add(1, "graphs", now=T0, channel=(9, 77))
    batch, claimed = await follows.claim(mine, ["c", "d"], T0)
    assert claimed == ["c", "d"]
    assert await follows.batch(batch) == ["c", "d"]
    # The same follower (the user's DMs) never gets a paper twice, even from another follow.
    assert (await follows.claim(also, ["d", "e"], T0))[1] == ["e"]
    assert (await follows.claim(chan, ["c"], T0))[1] == ["c"]  # the channel is another target
    await follows.disable(also.follow_id, "closed DMs")
    assert {f.follow_id for f in await follows.active()} == {mine.follow_id, chan.follow_id}
    counts = await Library(storage).forget_user(1)
    assert counts == {"saved papers": 0, "reactions": 0, "follows": 2, "ratings": 0}
    assert await follows.personal(1) == []
    assert await follows.delivered("dm:1") == []
    [kept] = await follows.of_guild(9)  # the server's channel follow stays, creator forgotten
    assert kept.user_id == 0
    assert await follows.delivered("ch:77") == ["c"]


async def test_save_many_is_all_or_nothing(storage: Storage) -> None:
    lib = Library(storage)
    assert await lib.save(1, "p/a", T0)
    assert await lib.save_many(1, ["p/a", "p/b", "p/c", "p/b"], T0, 9, max_saved=3) == (2, 1)
    assert sorted(s.paper_id for s in await lib.all(1)) == ["p/a", "p/b", "p/c"]
    assert (await lib.get(1, "p/b")).guild_id == 9  # type: ignore[union-attr]
    # One more would overfill it: nothing of the file is written.
    assert await lib.save_many(1, ["p/d", "p/e"], T0, max_saved=4) == (-1, 3)
    assert await lib.count(1) == 3
    assert await lib.save_many(2, [], T0, max_saved=1) == (0, 0)
    assert await lib.save_many(1, ["p/a"], T0, max_saved=1) == (0, 3)  # nothing new: no refusal

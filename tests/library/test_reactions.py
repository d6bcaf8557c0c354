"""Reactions on daily posts in the store itself, on both backends: concurrent adds, and what a
removal, a clear and a deleted post take away (issue 26). The gateway side is
tests/app/exts/server/test_reactions_removed.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest_asyncio

from bot.library.store import Library
from bot.storage.store import Storage

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
GUILD, POST, OTHER = 9, 100, 200


@pytest_asyncio.fixture
async def lib(database_url: str) -> AsyncIterator[Library]:
    storage = await Storage.open(database_url)
    yield Library(storage)
    await storage.close()


async def counts(lib: Library) -> dict[str, int]:
    return {t.paper_id: t.count for t in await lib.top_reacted(GUILD, None, 10)}


async def stored(lib: Library) -> int:
    [n] = await lib.storage.column("SELECT COUNT(*) FROM reactions", ())
    return int(n)


async def test_one_members_duplicate_adds_at_once_count_once(lib: Library) -> None:
    """The gateway may deliver the same MESSAGE_REACTION_ADD again (a resume replays it): many
    copies of one reaction at once are one row and one reader, never an error."""
    await asyncio.gather(*(lib.add_reaction(GUILD, POST, "p/a", 1, "👍", T0) for _ in range(30)))
    assert await counts(lib) == {"p/a": 1}
    assert await stored(lib) == 1


async def test_many_members_reacting_at_once_all_count(lib: Library) -> None:
    members = range(1, 41)
    await asyncio.gather(*(lib.add_reaction(GUILD, POST, "p/a", u, "👍", T0) for u in members))
    await asyncio.gather(*(lib.add_reaction(GUILD, POST, "p/a", u, "🔥", T0) for u in members))
    assert await counts(lib) == {"p/a": 40}  # two emoji each: still one reader each
    assert await stored(lib) == 80


async def test_clearing_and_deleting_take_only_that_posts_reactions(lib: Library) -> None:
    for user in (1, 2):
        await lib.add_reaction(GUILD, POST, "p/a", user, "👍", T0)
        await lib.add_reaction(GUILD, OTHER, "p/b", user, "👍", T0)
    await lib.add_reaction(GUILD, POST, "p/a", 2, "🔥", T0)
    await lib.add_reaction(8, 300, "p/a", 3, "👍", T0)  # another server's post of the same paper

    await lib.clear_reactions(GUILD, [POST], emoji="👍")  # MESSAGE_REACTION_REMOVE_EMOJI
    assert await counts(lib) == {"p/a": 1, "p/b": 2}
    await lib.clear_reactions(GUILD, [POST])  # MESSAGE_REACTION_REMOVE_ALL, MESSAGE_DELETE
    assert await counts(lib) == {"p/b": 2}
    await lib.clear_reactions(GUILD, [OTHER, 12345])  # MESSAGE_DELETE_BULK
    assert await counts(lib) == {}
    assert [(t.paper_id, t.count) for t in await lib.top_reacted(8, None, 5)] == [("p/a", 1)]
    await lib.clear_reactions(GUILD, [])  # nothing to do


async def test_custom_emoji_stored_by_its_old_text_is_still_removed(lib: Library) -> None:
    """Rows written before emoji were keyed by id hold the text `<:name:id>` (`<a:...>` when
    animated); removing that emoji by its id, alone or by a clear, takes them too."""
    await lib.add_reaction(GUILD, POST, "p/a", 1, "<a:party:123>", T0)
    await lib.add_reaction(GUILD, POST, "p/a", 2, "<:party:123>", T0)
    await lib.add_reaction(GUILD, POST, "p/a", 3, "<:party:1234>", T0)  # another emoji
    await lib.remove_reaction(POST, 1, "123")
    assert await counts(lib) == {"p/a": 2}
    await lib.clear_reactions(GUILD, [POST], emoji="123")
    assert await counts(lib) == {"p/a": 1}

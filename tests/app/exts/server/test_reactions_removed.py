"""Reactions on the daily post when they, or the post, go away (issue 26), through the loopback
Discord and the real gateway payloads Discord documents for each event.

The rule (`bot/app/exts/server/cog.py`): /top counts the reactions a daily post has now. A removed
reaction, a post cleared of all reactions or of one emoji, and a deleted post (alone or in a bulk
delete) count no more; reactions on any other message never count.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest

from bot.library.store import Library
from tests.app.exts.daily.support import DUE, DailyEnv, until
from tests.fakediscord import FakeUser

JSON = dict[str, Any]
PARTY = "111111111111111111"  # a server's custom emoji


def unicode(name: str) -> JSON:
    return {"id": None, "name": name}


def reaction(message: JSON, user: FakeUser, emoji: JSON) -> JSON:
    """MESSAGE_REACTION_ADD / MESSAGE_REACTION_REMOVE."""
    return {
        "user_id": user.id,
        "channel_id": message["channel_id"],
        "message_id": message["id"],
        "guild_id": message["guild_id"],
        "emoji": emoji,
        "burst": False,
        "type": 0,
    }


def cleared(message: JSON, emoji: JSON | None = None) -> JSON:
    """MESSAGE_REACTION_REMOVE_ALL, or with `emoji` MESSAGE_REACTION_REMOVE_EMOJI."""
    data = {
        "channel_id": message["channel_id"],
        "message_id": message["id"],
        "guild_id": message["guild_id"],
    }
    return data if emoji is None else {**data, "emoji": emoji}


async def deleted(env: DailyEnv, *messages: JSON) -> None:
    """A moderator deletes `messages`: one MESSAGE_DELETE, or MESSAGE_DELETE_BULK for several."""
    for message in messages:
        env.fake.world.messages.delete(message["id"])
    where = {"channel_id": messages[0]["channel_id"], "guild_id": messages[0]["guild_id"]}
    if len(messages) == 1:
        await env.fake.dispatch("MESSAGE_DELETE", {"id": messages[0]["id"], **where})
    else:
        await env.fake.dispatch(
            "MESSAGE_DELETE_BULK", {"ids": [m["id"] for m in messages], **where}
        )


async def daily_post(env: DailyEnv, day: int = 0) -> JSON:
    """The server's daily post of START + `day` days, once its message id is recorded."""
    if day == 0:
        await env.set_daily()
    env.clock.advance_to(DUE + timedelta(days=day))
    post = await env.fake.wait_for_message(env.papers, index=day)
    await env.wait_state(env.fake.guild, "sent", (DUE + timedelta(days=day)).date().isoformat())
    return {**post, "guild_id": env.fake.guild.id}


def readers(env: DailyEnv) -> Callable[[int], Awaitable[None]]:
    """`await counted(n)`: wait until /top's reaction count of the server's top post is n."""

    async def counted(expected: int) -> None:
        async def reached() -> bool:
            assert env.storage is not None
            rows = await Library(env.storage).top_reacted(int(env.fake.guild.id), None, 5)
            return sum(r.count for r in rows) == expected

        await until(reached, timeout=3.0, what=f"{expected} reader(s) counted")

    return counted


async def top_reacted_field(env: DailyEnv) -> str:
    top = await env.slash("top", {"period": "all"}, user=env.fake.alice, ephemeral=True)
    return {f["name"]: f["value"] for f in top.embed["fields"]}["Most reacted-to daily posts"]


async def test_removed_and_cleared_reactions_stop_counting(daily_env: DailyEnv) -> None:
    await daily_env.start()
    fake, counted = daily_env.fake, readers(daily_env)
    post = await daily_post(daily_env)
    add = "MESSAGE_REACTION_ADD"
    await fake.dispatch(add, reaction(post, fake.alice, unicode("👍")))
    await fake.dispatch(add, reaction(post, fake.admin, unicode("👍")))
    await fake.dispatch(add, reaction(post, fake.admin, unicode("🔥")))
    party = {"id": PARTY, "name": "party", "animated": True}
    await fake.dispatch(add, reaction(post, fake.owner, party))
    await counted(3)

    # The owner takes back the custom emoji, renamed meanwhile (events carry the emoji's
    # current name, and only ADD is sure to say it is animated): the same reaction, gone.
    renamed = {"id": PARTY, "name": "party_time"}
    await fake.dispatch("MESSAGE_REACTION_REMOVE", reaction(post, fake.owner, renamed))
    await counted(2)
    # A moderator removes every 👍: alice had only that one, admin still has 🔥.
    await fake.dispatch("MESSAGE_REACTION_REMOVE_EMOJI", cleared(post, unicode("👍")))
    await counted(1)
    await fake.dispatch("MESSAGE_REACTION_REMOVE_ALL", cleared(post))
    await counted(0)
    assert await top_reacted_field(daily_env) == "nothing yet"


async def test_deleted_daily_posts_stop_counting(daily_env: DailyEnv) -> None:
    await daily_env.start()
    fake, counted = daily_env.fake, readers(daily_env)
    first = await daily_post(daily_env)
    await fake.dispatch("MESSAGE_REACTION_ADD", reaction(first, fake.alice, unicode("👍")))
    await counted(1)
    await deleted(daily_env, first)
    await counted(0)

    second = await daily_post(daily_env, day=1)
    chatter = await fake.user_message("nice one", channel=daily_env.papers)
    for user in (fake.alice, fake.admin):
        await fake.dispatch("MESSAGE_REACTION_ADD", reaction(second, user, unicode("🔥")))
    await counted(2)
    await deleted(daily_env, {**chatter, "guild_id": fake.guild.id}, second)
    await counted(0)
    assert await top_reacted_field(daily_env) == "nothing yet"


async def test_reactions_on_other_messages_never_count(daily_env: DailyEnv) -> None:
    await daily_env.start()
    fake, counted = daily_env.fake, readers(daily_env)
    post = await daily_post(daily_env)
    await fake.dispatch("MESSAGE_REACTION_ADD", reaction(post, fake.alice, unicode("👍")))
    # /today shows the same paper, a member's message sits in the same channel: neither is the
    # daily post, so reactions there, and their clearing or deletion, change nothing.
    today = await daily_env.slash("today", user=fake.alice)
    assert today.message is not None
    chatter = await fake.user_message("👀", channel=daily_env.papers)
    for message in (today.message, chatter):
        other = {**message, "guild_id": fake.guild.id}
        await fake.dispatch("MESSAGE_REACTION_ADD", reaction(other, fake.admin, unicode("👍")))
        await fake.dispatch("MESSAGE_REACTION_REMOVE_ALL", cleared(other))
        await fake.dispatch("MESSAGE_REACTION_REMOVE_EMOJI", cleared(other, unicode("👍")))
    await deleted(daily_env, {**chatter, "guild_id": fake.guild.id})
    # Handled in order: once the owner's later reaction counts, every event above was seen.
    await fake.dispatch("MESSAGE_REACTION_ADD", reaction(post, fake.owner, unicode("👍")))
    await counted(2)
    assert (await top_reacted_field(daily_env)).endswith("· 2 readers")


@pytest.mark.parametrize("takeback", ["MESSAGE_REACTION_REMOVE", "MESSAGE_DELETE"])
async def test_a_removal_right_after_a_slow_add_wins(
    daily_env: DailyEnv, monkeypatch: pytest.MonkeyPatch, takeback: str
) -> None:
    """Events of one message are handled in gateway order: a removal or deletion that arrives
    while the add before it is still writing (a busy database) is not undone by that add."""
    await daily_env.start()
    fake, counted = daily_env.fake, readers(daily_env)
    post = await daily_post(daily_env)
    real = Library.add_reaction
    landed = asyncio.Event()

    async def slow_add(self: Library, *args: Any) -> None:
        await asyncio.sleep(0.3)
        await real(self, *args)
        landed.set()

    monkeypatch.setattr(Library, "add_reaction", slow_add)
    await fake.dispatch("MESSAGE_REACTION_ADD", reaction(post, fake.alice, unicode("👍")))
    if takeback == "MESSAGE_DELETE":
        await deleted(daily_env, post)
    else:
        await fake.dispatch(takeback, reaction(post, fake.alice, unicode("👍")))
    await asyncio.wait_for(landed.wait(), 3.0)
    await counted(0)

"""The loopback Discord's forum channels refuse what Discord refuses (tests/fakediscord/
rules_forum.py): one bad start-thread payload per rule, sent raw through discord.py's HTTP
client, comes back 400 / 50035 naming the field (a missing required tag: 400 / 40067); a good
one makes the thread and its starter message, which shares the thread's id."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import discord
import pytest
import pytest_asyncio
from discord.http import Route

from tests.fakediscord import FakeChannel, FakeDiscord
from tests.fakediscord.models import snowflake
from tests.fakediscord.rules_forum import REQUIRE_TAG

TAG_ID = snowflake()
TAGS = [
    {"id": TAG_ID, "name": "Diffusion", "moderated": False, "emoji_id": None, "emoji_name": None}
]
GOOD: dict[str, Any] = {
    "name": "A paper",
    "type": 11,
    "auto_archive_duration": 1440,
    "message": {"embeds": [{"title": "A paper"}]},
}


@pytest_asyncio.fixture
async def forums(
    fake_discord: FakeDiscord, connect_bot: Any
) -> AsyncIterator[tuple[discord.Client, FakeChannel, FakeChannel]]:
    fake_discord.rest.refusals_expected = True  # the tests here send what Discord refuses
    guild = fake_discord.guild
    forum = guild.add_channel("forum", type=15, available_tags=list(TAGS))
    strict = guild.add_channel("strict", type=15, available_tags=list(TAGS), flags=REQUIRE_TAG)
    client = discord.Client(intents=discord.Intents.default())
    await connect_bot(client)
    yield client, forum, strict


async def start(client: discord.Client, channel: FakeChannel, body: dict[str, Any]) -> Any:
    route = Route("POST", "/channels/{channel_id}/threads", channel_id=int(channel.id))
    return await client.http.request(route, json=body)


BAD = [
    ("no starter message", {k: v for k, v in GOOD.items() if k != "message"}, "message"),
    ("empty starter message", {**GOOD, "message": {"content": ""}}, "message"),
    ("six tags", {**GOOD, "applied_tags": [TAG_ID] * 6}, "applied_tags"),
    ("a tag not of this forum", {**GOOD, "applied_tags": ["123"]}, "applied_tags.0"),
    ("archive after 5 minutes", {**GOOD, "auto_archive_duration": 5}, "auto_archive_duration"),
    ("name of 101 characters", {**GOOD, "name": "n" * 101}, "name"),
    (
        "starter embed title too long",
        {**GOOD, "message": {"embeds": [{"title": "t" * 257}]}},
        "message.embeds.0.title",
    ),
]


@pytest.mark.parametrize(("body", "field"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
async def test_a_bad_forum_post_is_refused(
    fake_discord: FakeDiscord,
    forums: tuple[discord.Client, FakeChannel, FakeChannel],
    body: dict[str, Any],
    field: str,
) -> None:
    client, forum, _strict = forums
    with pytest.raises(discord.HTTPException) as caught:
        await start(client, forum, body)
    assert (caught.value.status, caught.value.code) == (400, 50035), caught.value
    assert f"In {field}:" in caught.value.text or f"{field}:" in str(caught.value)
    assert fake_discord.threads == []


async def test_a_forum_that_requires_a_tag_refuses_a_post_without_one(
    fake_discord: FakeDiscord, forums: tuple[discord.Client, FakeChannel, FakeChannel]
) -> None:
    client, _forum, strict = forums
    with pytest.raises(discord.HTTPException) as caught:
        await start(client, strict, GOOD)
    assert (caught.value.status, caught.value.code) == (400, 40067)
    made = await start(client, strict, {**GOOD, "applied_tags": [TAG_ID]})
    assert made["applied_tags"] == [TAG_ID]


async def test_a_good_forum_post_is_a_thread_whose_starter_message_shares_its_id(
    fake_discord: FakeDiscord, forums: tuple[discord.Client, FakeChannel, FakeChannel]
) -> None:
    client, forum, _strict = forums
    made = await start(client, forum, {**GOOD, "applied_tags": [TAG_ID]})
    assert made["parent_id"] == forum.id
    assert made["message"]["id"] == made["id"]
    assert made["message"]["channel_id"] == made["id"]
    [stored] = fake_discord.channel_messages(made["id"])
    assert stored["embeds"][0]["title"] == "A paper"
    active = await client.http.request(
        Route("GET", "/guilds/{guild_id}/threads/active", guild_id=int(fake_discord.guild.id))
    )
    assert [t["id"] for t in active["threads"]] == [made["id"]]

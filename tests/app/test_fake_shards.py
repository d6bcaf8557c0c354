"""The loopback Discord routes servers by shard as Discord does, and refuses impossible shards.

Checked with real discord.py `AutoShardedClient`s (one shard range each, as one process of a
sharded bot) and with a raw websocket for what discord.py never sends (a shard id past the
count). GET /gateway/bot is checked against Discord's OpenAPI schema when ../shared is present.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import discord
import pytest
from jsonschema import Draft202012Validator

from tests.fakediscord import BotConnection, FakeDiscord
from tests.fakediscord import spec as discord_spec
from tests.fakediscord.gateway import shard_of

Connect = Callable[..., Awaitable[BotConnection]]


class Listener(discord.AutoShardedClient):
    """A client on some shards that remembers the messages it heard of."""

    def __init__(self, shard_ids: list[int], shard_count: int) -> None:
        super().__init__(
            intents=discord.Intents.default(), shard_ids=shard_ids, shard_count=shard_count
        )
        self.heard: list[int] = []

    async def on_message(self, message: discord.Message) -> None:
        assert message.guild is not None
        self.heard.append(message.guild.id)


async def test_each_shard_hears_only_its_servers(
    fake_discord: FakeDiscord, connect_bot: Connect
) -> None:
    fake = fake_discord
    servers = [fake.world.add_guild(f"s{i}", shard=(i % 4, 4)) for i in range(8)]
    for server in servers:
        server.add_channel("general")
    low, high = Listener([0, 1], 4), Listener([2, 3], 4)
    await connect_bot(low)
    await connect_bot(high)
    shards = sorted(tuple(i["shard"]) for i in fake.gateway.identifies.items)
    assert shards == [(0, 4), (1, 4), (2, 4), (3, 4)]
    every = [fake.guild, *servers]
    for client, mine in ((low, {0, 1}), (high, {2, 3})):
        expected = {int(g.id) for g in every if shard_of(g.id, 4) in mine}
        assert {g.id for g in client.guilds} == expected
        assert any(int(s.id) in expected for s in servers)  # both ranges have servers
    for server in servers:
        await fake.user_message("hello", user=fake.owner, channel=server.channel("general"))
    for server in servers:  # DMs and guild events: only the session of the server's shard
        owner = low if shard_of(server.id, 4) < 2 else high
        await asyncio.wait_for(_heard(owner, int(server.id)), timeout=5)
    assert sorted(low.heard + high.heard) == sorted(int(s.id) for s in servers)
    assert not set(low.heard) & set(high.heard)
    assert fake.gateway.shard_connections() == {(n, 4): 1 for n in range(4)}


async def _heard(client: Listener, guild_id: int) -> None:
    while guild_id not in client.heard:
        await asyncio.sleep(0.01)


async def test_two_clients_on_the_same_shard_both_hear_its_servers(
    fake_discord: FakeDiscord, connect_bot: Connect
) -> None:
    """A misconfigured overlap: Discord serves both sessions, so the bot must not post twice."""
    fake = fake_discord
    server = fake.world.add_guild("both", shard=(1, 2))
    channel = server.add_channel("general")
    first, second = Listener([1], 2), Listener([1], 2)
    await connect_bot(first)
    await connect_bot(second)
    await fake.user_message("hello", user=fake.owner, channel=channel)
    await asyncio.wait_for(_heard(first, int(server.id)), timeout=5)
    await asyncio.wait_for(_heard(second, int(server.id)), timeout=5)
    assert fake.gateway.shard_connections() == {(1, 2): 2}


async def _identify(fake: FakeDiscord, shard: Any) -> int | None:
    """IDENTIFY over a raw websocket; the close code Discord's stand-in answers with."""
    data: dict[str, Any] = {"token": "fake-token", "intents": 1, "properties": {}}
    if shard is not None:
        data["shard"] = shard
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(f"{fake.gateway_url}?v=10&encoding=json") as ws,
    ):
        hello = json.loads((await ws.receive(timeout=5)).data)
        assert hello["op"] == 10
        await ws.send_str(json.dumps({"op": 2, "d": data}))
        while True:
            message = await ws.receive(timeout=5)
            if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                return ws.close_code
            event = json.loads(message.data)
            if event.get("t") == "READY":
                return None


@pytest.mark.parametrize(
    "shard", [[2, 2], [-1, 2], [0, 0], [0], ["0", "2"], [True, 2], [0, 2, 1], "0,2"]
)
async def test_an_impossible_shard_is_closed_with_4010(
    fake_discord: FakeDiscord, shard: Any
) -> None:
    assert await _identify(fake_discord, shard) == 4010
    assert fake_discord.gateway.sessions == {}


async def test_valid_shards_and_no_shard_get_ready(fake_discord: FakeDiscord) -> None:
    assert await _identify(fake_discord, [1, 2]) is None
    assert await _identify(fake_discord, None) is None  # no shard: [0, 1]


async def test_too_many_servers_on_one_shard_is_closed_with_4011(
    fake_discord: FakeDiscord, connect_bot: Connect
) -> None:
    fake = fake_discord
    fake.gateway.max_guilds_per_shard = 3
    for n in range(4):  # shards 0, 2, 0, 2 of 4: all on shard 0 of 2
        fake.world.add_guild(f"busy{n}", shard=(n % 2 * 2, 4))
    assert await _identify(fake, [0, 1]) == 4011  # 5 servers on a single shard
    assert await _identify(fake, [0, 2]) == 4011  # 4 or 5 on shard 0 of 2
    with pytest.raises(discord.ConnectionClosed) as closed:
        await connect_bot(Listener([0], 2))
    assert closed.value.code == 4011
    await connect_bot(Listener([0, 1, 2, 3], 4))  # spread wider it fits: 2 or 3 per shard


async def test_gateway_bot_reports_shards_and_session_starts(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    fake.gateway.max_concurrency = 16
    async with aiohttp.ClientSession() as session:

        async def gateway_bot() -> dict[str, Any]:
            headers = {"Authorization": "Bot fake-token"}
            async with session.get(f"{fake.url}/gateway/bot", headers=headers) as response:
                assert response.status == 200
                body: dict[str, Any] = await response.json()
                return body

        first = await gateway_bot()
        assert first["shards"] == 1
        assert first["session_start_limit"]["max_concurrency"] == 16
        await _identify(fake, [0, 1])
        assert (await gateway_bot())["session_start_limit"]["remaining"] == (
            first["session_start_limit"]["remaining"] - 1
        )
        for n in range(1000):
            fake.world.add_guild(f"g{n}")
        assert (await gateway_bot())["shards"] == 2  # a shard per 1,000 servers
    document = discord_spec.load()
    if document is None:
        pytest.skip("needs ../shared/discord/openapi.json for the schema check")
    validator = Draft202012Validator(
        {
            "$ref": "#/components/schemas/GatewayBotResponse",
            "components": document.document["components"],
        }
    )
    assert list(validator.iter_errors(first)) == []

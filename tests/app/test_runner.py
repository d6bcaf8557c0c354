"""Startup paths of `python -m bot` with a token, against the loopback Discord."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace

import discord
import pytest_asyncio

from bot.app.client import PaperBot, cog_modules
from bot.config import StorageSettings
from bot.search.engine import SearchEngine
from bot.storage.store import Storage
from tests.app.helpers import TOKEN, answered, make_settings
from tests.fakediscord import BotConnection, FakeDiscord

Connect = Callable[..., Awaitable[BotConnection]]


@pytest_asyncio.fixture
async def storage() -> AsyncIterator[Storage]:
    store = await Storage.open(":memory:")
    yield store
    await store.close()


def test_every_cog_module_is_found() -> None:
    names = cog_modules()
    assert {
        "bot.app.exts.search",
        "bot.app.exts.papers",
        "bot.app.exts.meta",
        "bot.app.exts.errors",
    } <= set(names)
    assert all(not n.rsplit(".", 1)[1].startswith("_") for n in names)


async def test_autosharded_bot_asks_discord_for_shards_and_opens_its_own_storage(
    fake_discord: FakeDiscord, connect_bot: Connect, icml_engine: SearchEngine, tmp_path
) -> None:
    settings = replace(
        make_settings(fake_discord),
        storage=StorageSettings(database=str(tmp_path / "state.sqlite3")),
    )
    bot = PaperBot(settings, engine=icml_engine)  # shard_count from settings: 0 -> ask Discord
    connection = await connect_bot(bot, TOKEN)
    assert bot.shard_count == 1
    assert fake_discord.calls("GET", "/gateway/bot")
    assert bot.storage is not None
    assert (tmp_path / "state.sqlite3").exists()
    reply = await answered(await fake_discord.slash("help"), type=4)
    assert reply.embed["title"] == "Paper bot"
    await connection.close()
    assert bot.storage is None  # closed with the bot


async def test_stale_button_gets_an_answer(
    fake_discord: FakeDiscord, connect_bot: Connect, icml_engine: SearchEngine, storage: Storage
) -> None:
    bot = PaperBot(make_settings(fake_discord), engine=icml_engine, storage=storage, shard_count=1)
    await connect_bot(bot, TOKEN)
    channel = bot.get_channel(int(fake_discord.channel.id))
    assert isinstance(channel, discord.TextChannel)
    view = discord.ui.View(timeout=None)
    view.add_item(discord.ui.Button(label="old", custom_id="pb:v0:whatever"))
    sent = await channel.send("an old message", view=view)
    click = await fake_discord.click(sent.id, "pb:v0:whatever")
    reply = await answered(click, type=4, ephemeral=True)
    assert "older version" in reply.embed["description"]

"""A loopback Discord (REST API v10 + Gateway) that the real discord.py client connects to.

Typical use (fixtures from ``tests.fakediscord.fixtures``; see ``tests/app/test_fakediscord.py``)::

    async def test_search(fake_discord, connect_bot):
        bot = make_bot()
        await connect_bot(bot)                      # login + connect, waits until ready
        await bot.tree.sync()                       # recorded in fake_discord.command_syncs
        handle = await fake_discord.slash("search", {"query": "bm25"})
        reply = await handle.assert_answered(type=4)   # callback JSON: reply.embeds, .components
        click = await fake_discord.click(reply, "next")  # button on the message the bot posted
        done = await fake_discord.autocomplete("paper", {"ref": "attn"})
        fake_discord.faults.rate_limit("POST", "/channels/{id}/messages", retry_after=0.05)
        await fake_discord.gateway.drop(4000)       # discord.py RESUMEs

Without pytest: ``async with fake_discord() as fake, connected(bot): ...``.
"""

from .faults import Fault, Faults
from .gateway import Gateway
from .harness import BotConnection, connect, connected, fake_discord, patched
from .interactions import InteractionHandle, Reply
from .messages import EPHEMERAL, LOADING, Upload, find_component, iter_components
from .models import FakeChannel, FakeGuild, FakeMember, FakeRole, FakeUser
from .rest import Call
from .server import FakeDiscord
from .world import CommandSync, World

__all__ = [
    "EPHEMERAL",
    "LOADING",
    "BotConnection",
    "Call",
    "CommandSync",
    "FakeChannel",
    "FakeDiscord",
    "FakeGuild",
    "FakeMember",
    "FakeRole",
    "FakeUser",
    "Fault",
    "Faults",
    "Gateway",
    "InteractionHandle",
    "Reply",
    "Upload",
    "World",
    "connect",
    "connected",
    "fake_discord",
    "find_component",
    "iter_components",
    "patched",
]

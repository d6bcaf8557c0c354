"""Pointing a real discord.py client at a ``FakeDiscord`` and running it in the background."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterator
from typing import TypeVar

import discord
import discord.http
import yarl
from discord.gateway import DiscordWebSocket

from .server import FakeDiscord

log = logging.getLogger(__name__)

ClientT = TypeVar("ClientT", bound=discord.Client)


@contextlib.contextmanager
def patched(fake: FakeDiscord) -> Iterator[None]:
    """Point discord.py at ``fake``: ``Route.BASE`` (REST and interaction webhooks) and
    ``DiscordWebSocket.DEFAULT_GATEWAY`` (discord.py 2.7 connects there without asking
    ``/gateway``); both restored on exit."""
    old_base = discord.http.Route.BASE
    old_gateway = DiscordWebSocket.DEFAULT_GATEWAY
    discord.http.Route.BASE = fake.url
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(fake.gateway_url)
    try:
        yield
    finally:
        discord.http.Route.BASE = old_base
        DiscordWebSocket.DEFAULT_GATEWAY = old_gateway


@contextlib.asynccontextmanager
async def fake_discord(*, echo_events: bool = True) -> AsyncIterator[FakeDiscord]:
    """Start a ``FakeDiscord``, patch discord.py to use it, yield it; undo all on exit."""
    fake = FakeDiscord(echo_events=echo_events)
    await fake.start()
    try:
        with patched(fake):
            yield fake
    finally:
        await fake.close()


class BotConnection:
    """A bot running against the fake in a background task. ``await conn.close()`` stops it."""

    def __init__(self, bot: discord.Client, task: asyncio.Task[None]) -> None:
        self.bot = bot
        self.task = task

    async def close(self, timeout: float = 5.0) -> None:
        if not self.bot.is_closed():
            await self.bot.close()
        try:
            await asyncio.wait_for(self.task, timeout)
        except TimeoutError:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        except asyncio.CancelledError:
            if not self.task.cancelled():
                raise


async def _no_identify_wait(shard_id: int | None, *, initial: bool = False) -> None:
    return None


async def connect(
    bot: ClientT,
    token: str = "fake-token",
    *,
    timeout: float = 5.0,
    guild_ready_timeout: float = 0.05,
    fast_reidentify: bool = True,
    wait_synced: bool = True,
) -> BotConnection:
    """``bot.login`` then ``bot.connect`` in a background task; returns once the bot is ready.

    ``guild_ready_timeout`` replaces discord.py's 2 s wait for more GUILD_CREATEs (the fake sends
    them all at once). ``fast_reidentify`` drops the 5 s sleep discord.py's default
    ``before_identify_hook`` does before a re-IDENTIFY. ``wait_synced`` waits (up to ``timeout``)
    for a bot's ``wait_until_synced()``, when it has one, so tests see the synced commands.
    """
    bot._connection.guild_ready_timeout = guild_ready_timeout
    if fast_reidentify:
        bot.before_identify_hook = _no_identify_wait  # type: ignore[method-assign]
    await bot.login(token)

    async def run() -> None:
        await bot.connect(reconnect=True)

    task = asyncio.create_task(run(), name=f"fake-discord-bot-{id(bot)}")
    connection = BotConnection(bot, task)
    ready = asyncio.create_task(bot.wait_until_ready())
    done, _ = await asyncio.wait(
        {ready, task}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
    )
    if ready not in done:
        ready.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ready
        if task in done:
            await connection.close()
            task.result()  # re-raise the connect error
        await connection.close()
        raise TimeoutError(f"bot was not ready within {timeout}s")
    # A bot that syncs commands in the background (PaperBot) is settled once that is done.
    settled = getattr(bot, "wait_until_synced", None)
    if wait_synced and settled is not None:
        await settled(timeout)
    return connection


@contextlib.asynccontextmanager
async def connected(
    bot: ClientT, token: str = "fake-token", *, timeout: float = 5.0
) -> AsyncIterator[ClientT]:
    """``async with connected(bot):`` - connect, yield the ready bot, close it cleanly."""
    connection = await connect(bot, token, timeout=timeout)
    try:
        yield bot
    finally:
        await connection.close()

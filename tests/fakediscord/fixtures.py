"""pytest fixtures; a conftest uses them with ``from tests.fakediscord.fixtures import *``.

* ``fake_discord`` - a started, patched :class:`FakeDiscord` (closed after the test).
* ``connect_bot`` - ``await connect_bot(bot)`` logs a bot in against the fake, waits until ready,
  and closes it at teardown (before the fake stops).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import discord
import pytest_asyncio

from .harness import BotConnection, connect
from .harness import fake_discord as _fake_discord
from .server import FakeDiscord

__all__ = ["connect_bot", "fake_discord"]


@pytest_asyncio.fixture
async def fake_discord() -> AsyncIterator[FakeDiscord]:
    async with _fake_discord() as fake:
        yield fake


@pytest_asyncio.fixture
async def connect_bot(
    fake_discord: FakeDiscord,
) -> AsyncIterator[Callable[[discord.Client], Awaitable[BotConnection]]]:
    connections: list[BotConnection] = []

    async def _connect(
        bot: discord.Client, token: str = "fake-token", **options: Any
    ) -> BotConnection:
        connection = await connect(bot, token, **options)
        connections.append(connection)
        return connection

    yield _connect
    for connection in reversed(connections):
        await connection.close()

"""pytest fixtures, registered for the whole suite by tests/conftest.py (``pytest_plugins``).

* ``fake_discord`` - a started, patched :class:`FakeDiscord` (closed after the test). A test
  whose requests were refused (400/50035) fails at teardown unless it set
  ``fake.rest.refusals_expected = True``: the bot's own traffic must always be acceptable.
* ``connect_bot`` - ``await connect_bot(bot)`` logs a bot in against the fake, waits until ready,
  and closes it at teardown (before the fake stops).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import discord
import pytest
import pytest_asyncio

from .harness import BotConnection, connect
from .harness import fake_discord as _fake_discord
from .server import FakeDiscord

__all__ = ["connect_bot", "fake_discord"]


@pytest_asyncio.fixture
async def fake_discord() -> AsyncIterator[FakeDiscord]:
    """The fake; a test whose traffic Discord would refuse fails, unless it expects refusals."""
    async with _fake_discord() as fake:
        yield fake
        refused = [c for c in fake.rest.refused if not fake.rest.refusals_expected]
        if refused:
            lines = [f"{c.method} {c.path}: {c.response}" for c in refused[:5]]
            pytest.fail("Discord would refuse what was sent:\n" + "\n".join(lines))


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

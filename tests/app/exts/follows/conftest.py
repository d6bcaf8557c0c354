"""The `env` fixture of the follows tests: a bot on the loopback Discord over a SQLite file."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio

from bot.search.engine import SearchEngine
from tests.app.exts.follows.support import Env
from tests.fakediscord import FakeDiscord


@pytest_asyncio.fixture
async def env(
    fake_discord: FakeDiscord, connect_bot: Any, icml_engine: SearchEngine, tmp_path: Path
) -> AsyncIterator[Env]:
    env = Env(fake_discord, tmp_path / "bot.sqlite3", connect_bot, icml_engine)
    yield env
    await env.stop()

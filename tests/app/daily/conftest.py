"""The `daily_env` fixture of the paper-of-the-day loopback tests (see support.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest_asyncio

from bot.search.engine import SearchEngine
from tests.app.daily.support import START, DailyEnv, SteppedClock
from tests.fakediscord import FakeDiscord


@pytest_asyncio.fixture
async def daily_env(
    fake_discord: FakeDiscord,
    connect_bot: Callable[..., Any],
    icml_engine: SearchEngine,
    tmp_path: Path,
) -> AsyncIterator[DailyEnv]:
    env = DailyEnv(
        fake_discord, icml_engine, SteppedClock(START), tmp_path / "bot.sqlite3", connect_bot
    )
    yield env
    await env.stop()

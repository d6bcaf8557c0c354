"""Shared pieces of the paper-of-the-day loopback tests (no tests here).

`SteppedClock` is the injected clock: time moves only when a test says so, and the scheduler's
sleep ends exactly then, so a day of schedule runs in milliseconds. `DailyEnv` runs the real
PaperBot (all cogs) against the loopback Discord on a database (both backends), and can restart it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest_asyncio

from bot.app.client import PaperBot
from bot.config import DailySettings
from bot.daily.tables import DailyTables
from bot.search.engine import SearchEngine
from bot.storage.store import Storage
from tests.app.helpers import TOKEN, answered, make_bot, make_settings, page_texts
from tests.fakediscord import BotConnection, FakeChannel, FakeDiscord, FakeGuild, Reply

START = datetime(2025, 3, 1, 7, 0, tzinfo=UTC)  # 08:00 in Paris: today's 09:00 is still ahead
DUE = datetime(2025, 3, 1, 8, 0, tzinfo=UTC)  # 09:00 Europe/Paris
DAILY = DailySettings(
    retry_window_hours=6, retry_base_seconds=30, retry_max_seconds=600, open_thread=True
)


class SteppedClock:
    """`bot.daily.scheduler.Clock` whose time moves only by `advance_to`.

    `asleep` is set whenever the scheduler waits for a later instant: after `advance_to`, waiting
    on it means "the scheduler has done everything due up to now".
    """

    def __init__(self, now: datetime) -> None:
        self.current = now
        self._tick = asyncio.Event()
        self.asleep = asyncio.Event()

    def now(self) -> datetime:
        return self.current

    async def sleep_until(self, when: datetime) -> None:
        while self.current < when:
            tick = self._tick
            self.asleep.set()
            await tick.wait()

    def advance_to(self, when: datetime) -> None:
        assert when >= self.current, "time only moves forward"
        self.asleep.clear()
        self.current = when
        self._tick.set()
        self._tick = asyncio.Event()

    def advance(self, **delta: float) -> None:
        self.advance_to(self.current + timedelta(**delta))

    async def settled(self, timeout: float = 5.0) -> None:
        await asyncio.wait_for(self.asleep.wait(), timeout)


async def until(
    predicate: Callable[[], Awaitable[bool]], timeout: float = 5.0, what: str = "condition"
) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


@dataclass
class DailyEnv:
    fake: FakeDiscord
    engine: SearchEngine
    clock: SteppedClock
    url: str
    connect: Callable[..., Awaitable[BotConnection]]
    storage: Storage | None = None
    connection: BotConnection | None = None

    @property
    def bot(self) -> PaperBot:
        assert self.connection is not None
        return self.connection.bot  # type: ignore[return-value]

    @property
    def papers(self) -> FakeChannel:
        return self.fake.guild.channel("papers")

    async def start(self, **discord_options: Any) -> PaperBot:
        self.storage = await Storage.open(self.url)
        settings = replace(make_settings(self.fake, **discord_options), daily=DAILY)
        bot = make_bot(settings, self.engine, self.storage)
        bot.clock = self.clock
        self.clock.asleep.clear()
        self.connection = await self.connect(bot, TOKEN)
        return bot

    async def stop(self) -> None:
        if self.connection is not None:
            await self.connection.close()
            self.connection = None
        if self.storage is not None:
            await self.storage.close()
            self.storage = None

    async def restart(self) -> PaperBot:
        """A new process: new PaperBot, the same database, the same (fake) time."""
        await self.stop()
        return await self.start()

    async def slash(
        self,
        name: str,
        options: dict[str, Any] | None = None,
        *,
        user: Any = None,
        channel: FakeChannel | None = None,
        **expect: Any,
    ) -> Reply:
        handle = await self.fake.slash(name, options, user=user or self.fake.admin, channel=channel)
        return await answered(handle, **expect)

    async def set_daily(
        self,
        channel: FakeChannel | None = None,
        time: str = "09:00",
        timezone: str = "Europe/Paris",
        topic: str | None = None,
        **kwargs: Any,
    ) -> Reply:
        options: dict[str, Any] = {
            "channel": channel or self.papers,
            "time": time,
            "timezone": timezone,
        }
        if topic is not None:
            options["topic"] = topic
        return await self.slash("daily set", options, channel=channel, **kwargs)

    async def pick_state(self, guild: FakeGuild, day: str = "2025-03-01") -> str | None:
        assert self.storage is not None
        pick = await DailyTables(self.storage).get_pick(int(guild.id), day)
        return pick.state if pick else None

    async def wait_state(self, guild: FakeGuild, state: str, day: str = "2025-03-01") -> None:
        async def reached() -> bool:
            return await self.pick_state(guild, day) == state

        await until(reached, what=f"pick of {day} in {guild.name} to be {state}")


def text_of(reply: Reply) -> str:
    """Everything a person reads in a reply: content, embed title/description/fields."""
    embed = reply.embeds[0] if reply.embeds else {}
    parts = [reply.content, embed.get("title") or "", embed.get("description") or ""]
    parts += [f"{f['name']}: {f['value']}" for f in embed.get("fields") or []]
    parts += page_texts(reply.data)  # a Components v2 message (a results page)
    return "\n".join(parts)


@pytest_asyncio.fixture
async def daily_env(
    fake_discord: FakeDiscord,
    connect_bot: Callable[..., Any],
    icml_engine: SearchEngine,
    database_url: str,
) -> AsyncIterator[DailyEnv]:
    """The bot on a fresh database: every loopback daily test runs on SQLite and PostgreSQL."""
    env = DailyEnv(fake_discord, icml_engine, SteppedClock(START), database_url, connect_bot)
    yield env
    await env.stop()

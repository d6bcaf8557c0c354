"""The console's server and Discord's servers on one database: each side posts only its own.

A Discord bot and a console may share the configured database (issue 14 §3). The console's
schedule is stored under `CONSOLE_SERVER` (0, never a Discord snowflake); were the bot's scheduler
to take it, it would post to channel 0 on Discord, fail, and stop the console's schedule.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

from bot.daily.scheduler import DailyRequest, DailyScheduler
from bot.daily.servers import CONSOLE_CHANNEL, CONSOLE_SERVER
from bot.daily.tables import DailyTables
from bot.storage.store import Storage

NOW = datetime(2025, 3, 1, 7, 0, tzinfo=UTC)
GUILD, CHANNEL = 81_384_788_765_712_384, 81_384_788_765_712_385


class Clock:
    def now(self) -> datetime:
        return NOW

    async def sleep_until(self, when: datetime) -> None:
        raise AssertionError("run_due only")


class Recorder:
    def __init__(self) -> None:
        self.sent: list[tuple[int, int]] = []

    async def post(
        self, guild_id: int, channel_id: int, paper_id: str, local_date: date, marker: str
    ) -> int:
        self.sent.append((guild_id, channel_id))
        return len(self.sent)

    async def find_existing(
        self, channel_id: int, marker: str, since: datetime | None = None
    ) -> int | None:
        return None


async def test_the_bot_never_posts_the_consoles_schedule_nor_the_console_a_servers(
    tmp_path: Path,
) -> None:
    storage = await Storage.open(str(tmp_path / "bot.sqlite3"))
    try:
        corpus = [f"p{i}" for i in range(5)]
        bot, console = Recorder(), Recorder()
        on_discord = DailyScheduler(storage, bot, lambda: corpus, clock=Clock())
        local = DailyScheduler(storage, console, lambda: corpus, clock=Clock(), console=True)
        await on_discord.set_schedule(DailyRequest(GUILD, CHANNEL, "08:00", "UTC"))
        await local.set_schedule(DailyRequest(CONSOLE_SERVER, CONSOLE_CHANNEL, "08:00", "UTC"))
        due = datetime(2025, 3, 1, 8, 0, tzinfo=UTC)
        assert await on_discord.next_wakeup(NOW) == due
        assert await local.next_wakeup(NOW) == due
        bot_posts = await on_discord.run_due(due)
        console_posts = await local.run_due(due)
        assert [(o.guild_id, o.result) for o in bot_posts] == [(GUILD, "sent")]
        assert [(o.guild_id, o.result) for o in console_posts] == [(CONSOLE_SERVER, "sent")]
        assert bot.sent == [(GUILD, CHANNEL)]
        assert console.sent == [(CONSOLE_SERVER, CONSOLE_CHANNEL)]
        schedule = await DailyTables(storage).get_schedule(CONSOLE_SERVER)
        assert schedule is not None
        assert schedule.active
    finally:
        await storage.close()

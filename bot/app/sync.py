"""Command sync in the background: the bot is online first, and a refused sync never kills it.

Why: `tree.sync()` awaited in `setup_hook` keeps the bot offline while Discord rate-limits the
sync route (discord.py sleeps through each 429, 20 s and more) or answers 5xx (it retries for
about 25 s), and lets a refused payload (400 / 50035) escape `setup_hook` and end the process.
Here the sync runs in a task after login; 429 and 5xx are retried with backoff while the bot
serves what Discord already has; a refusal is logged once, naming command and field, and shown
to the owner by `/sync`; a DISCORD_GUILD_ID the bot is not in falls back to the global commands.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import aiohttp
import discord

if TYPE_CHECKING:
    from bot.app.client import PaperBot

log = logging.getLogger(__name__)
FIRST_RETRY = 5.0  # seconds before retrying after discord.py gave up on 5xx or a network error
MAX_RETRY = 300.0
REPLY_WAIT = 3.0  # how long /sync waits for an answer before saying what it is waiting for
RATE_LIMITED = "We are being rate limited."  # the start of discord.py's 429 warning (http.py)


def one_line(exc: BaseException) -> str:
    """An exception's text on one line (CommandSyncFailure's names command and field)."""
    return "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())


# Where command sync stands; /sync shows it.
SyncState = Literal["idle", "syncing", "waiting", "synced", "refused", "failed"]


@dataclass
class SyncStatus:
    """What the last sync did, for /sync: its state and a sentence for people."""

    state: SyncState = "idle"
    detail: str = ""
    retry_at: float | None = None  # loop time of the next attempt while waiting

    def describe(self) -> str:
        if self.state == "waiting" and self.retry_at is not None:
            seconds = max(0, round(self.retry_at - time.monotonic()))
            return f"{self.detail}, retrying in {seconds} s"
        return self.detail or self.state


class _RateLimitWatch(logging.Filter):
    """Notes discord.py's 429 warning for the commands route while a sync is in flight.

    discord.py sleeps through a 429 inside its HTTP client and says so only in that log
    record, whose arguments are (method, url, retry_after); the filter reads them and lets
    the record through unchanged.
    """

    def __init__(self, status: SyncStatus) -> None:
        super().__init__()
        self.status = status

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        if str(record.msg).startswith(RATE_LIMITED) and len(args) == 3:
            _method, url, retry_after = args
            if "/commands" in str(url) and isinstance(retry_after, int | float):
                self.status.state = "waiting"
                self.status.detail = "rate limited"
                self.status.retry_at = time.monotonic() + float(retry_after)
        return True


class CommandSyncer:
    """Runs `PaperBot.sync_commands` in one background task at a time, with backoff."""

    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot
        self.status = SyncStatus()
        self.task: asyncio.Task[None] | None = None
        self.done = asyncio.Event()
        self.done.set()

    def start(self, *, force: bool = False, guild: discord.abc.Snowflake | None = None) -> None:
        """Sync in the background (unless a sync is already running)."""
        if self.task is not None and not self.task.done():
            return
        self.done.clear()
        self.task = asyncio.create_task(self._run(force, guild), name="paperbot-command-sync")

    async def wait(self, timeout: float | None = None) -> bool:
        """True once no sync is running; False if `timeout` passed first."""
        try:
            await asyncio.wait_for(self.done.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def stop(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        self.done.set()

    async def request(self, guild: discord.abc.Snowflake | None) -> str:
        """/sync: a forced sync (or the running one), and what came of it within a few seconds."""
        if self.task is None or self.task.done():
            self.start(force=True, guild=guild)
        if not await self.wait(REPLY_WAIT):
            return f"Sync still running: {self.status.describe()}."
        return self.status.describe()

    async def _run(self, force: bool, guild: discord.abc.Snowflake | None) -> None:
        watch = _RateLimitWatch(self.status)
        http_log = logging.getLogger("discord.http")
        http_log.addFilter(watch)
        delay = FIRST_RETRY
        try:
            while True:
                self.status.state, self.status.retry_at = "syncing", None
                retry = await self._attempt(force, guild)
                if retry is None:
                    return
                self.status.state = "waiting"
                self.status.retry_at = time.monotonic() + max(retry, delay)
                log.warning("command sync: %s", self.status.describe())
                await asyncio.sleep(max(retry, delay))
                delay = min(delay * 2, MAX_RETRY)
        finally:
            http_log.removeFilter(watch)
            self.done.set()

    async def _attempt(self, force: bool, guild: discord.abc.Snowflake | None) -> float | None:
        """One sync; None when finished (synced, refused or failed), else seconds to wait."""
        status = self.status
        try:
            count, where = await self.bot.sync_commands(force=force, guild=guild)
        except discord.RateLimited as exc:
            status.detail = "rate limited"
            return exc.retry_after
        except discord.Forbidden as exc:
            if exc.code == 50001 and guild is None and self.bot.sync_target() is not None:
                log.error(
                    "DISCORD_GUILD_ID=%s names a server this bot is not in (Discord: 50001 "
                    "Missing Access); serving the global commands instead. Invite the bot "
                    "there or remove DISCORD_GUILD_ID.",
                    self.bot.settings.secrets.guild_id,
                )
                self.bot.sync_guild_refused = True
                return await self._attempt(force, None)
            return self._finish("failed", f"Discord refused the sync: {one_line(exc)}")
        except discord.DiscordServerError as exc:
            status.detail = f"Discord answered HTTP {exc.status}"
            return 0.0
        except discord.HTTPException as exc:
            if exc.status == 429:  # discord.py gave up (Cloudflare, or five 429s in a row)
                status.detail = "rate limited"
                return float(exc.response.headers.get("Retry-After", 0) or 0)
            if exc.code == 50035:
                log.error("Discord refused the command list (400, 50035): %s", one_line(exc))
                return self._finish("refused", f"Discord refused the commands: {one_line(exc)}")
            return self._finish("failed", f"command sync failed: {one_line(exc)}")
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            status.detail = f"Discord unreachable ({type(exc).__name__})"
            return 0.0
        return self._finish("synced", f"Synced {count} commands to {where}.")

    def _finish(self, state: SyncState, detail: str) -> float | None:
        """Record the outcome; None, the "finished" answer of `_attempt`."""
        self.status.state, self.status.detail, self.status.retry_at = state, detail, None
        if state == "failed":
            log.error("%s", detail)
        return None

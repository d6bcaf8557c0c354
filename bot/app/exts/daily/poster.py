"""The Discord side of the paper of the day: send the post, find it again, classify failures.

`DiscordPoster` implements `bot.daily.rules.Poster` for `bot.daily.scheduler.DailyScheduler`.
The scheduler
owns every decision (when, what, whether to retry); this module only turns discord.py calls and
their exceptions into the two outcomes the scheduler understands:

* `TransientPostError` (retry later, maybe after `retry_after`): 429, 5xx, network trouble,
  timeouts;
* `PermanentPostError` (stop this server's schedule, reason shown in /daily status): the
  channel is gone (404) or the bot may not see it or post there (403).

What we rely on from discord.py: its HTTP client already retries a 429 after sleeping the
server's Retry-After (up to 5 tries), and a 500/502/504/524 after 1, 3, 5… s. So an ordinary
rate limit or a one-off 500 costs a short delay and never reaches us. What does reach us is
classified here: the exhausted retries (`DiscordServerError`), a 503 (not retried by
discord.py), a Cloudflare 429 (an `HTTPException` with status 429), `RateLimited` when the
client sets `max_ratelimit_timeout`, and connection errors. Because a long Retry-After would
make discord.py sleep inside `post` (holding up every other server's post), each call is bounded
by `SEND_TIMEOUT`; a timeout is transient, and the scheduler looks for the message by its
marker before sending again, so a send that did reach Discord is never duplicated.

Any other `HTTPException` (e.g. 400: an embed Discord rejects) is left to propagate: it is a bug
on our side, which the scheduler logs with its traceback and retries within the day, without
stopping the schedule.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from datetime import date, datetime
from typing import TYPE_CHECKING, Literal

import aiohttp
import discord

from bot.app import render
from bot.app.exts.daily.embeds import daily_embed, starter_text, thread_name
from bot.app.exts.daily.forum import carries, forum_tags, thread_created_after
from bot.app.results.views import paper_view
from bot.daily.rules import PermanentPostError, Posted, TransientPostError
from bot.daily.tables import DailyTables
from bot.papers.records import Paper

if TYPE_CHECKING:
    from bot.app.client import PaperBot

log = logging.getLogger(__name__)

SEND_TIMEOUT = 60.0  # seconds for one send (discord.py's own 429/5xx retries included)
THREAD_TIMEOUT = 30.0  # the thread is a nicety: never hold the post's bookkeeping for long
HISTORY_SCAN = 100  # recent messages searched for a marker when the first attempt is unknown
# The server channels a post can go to: discord.py's guild Messageables, and forums (where
# each day's paper is a post: a thread whose starter message is the paper).
PostChannel = (
    discord.TextChannel
    | discord.VoiceChannel
    | discord.StageChannel
    | discord.Thread
    | discord.ForumChannel
)
THREAD_ARCHIVE_MINUTES: Literal[60, 1440, 4320, 10080] = 1440  # Discord's allowed values
TRANSIENT_STATUSES = frozenset({429, 500, 502, 503, 504, 520, 521, 522, 523, 524})

# Permissions the bot needs in the daily channel, by discord.py attribute, and as people call
# them. Reading history lets the bot check, after a crash mid-send, whether the post went out.
REQUIRED = {
    "view_channel": "View Channel",
    "send_messages": "Send Messages",
    "embed_links": "Embed Links",
    "read_message_history": "Read Message History",
}
OPTIONAL = {"create_public_threads": "Create Public Threads"}


def missing_permissions(permissions: discord.Permissions) -> tuple[list[str], list[str]]:
    """(required, optional) permission names the bot lacks, as Discord's UI spells them."""
    required = [label for attr, label in REQUIRED.items() if not getattr(permissions, attr)]
    optional = [label for attr, label in OPTIONAL.items() if not getattr(permissions, attr)]
    return required, optional


def nonce_for(marker: str) -> str:
    """The send's nonce, the same for every attempt of one pick (Discord allows 25 characters).

    Sent with `enforce_nonce` (discord.py adds it whenever a nonce is given): a retried send
    within Discord's few minutes returns the message the first one created instead of a second.
    """
    return hashlib.blake2b(marker.encode(), digest_size=10).hexdigest()


def _retry_after(exc: discord.HTTPException) -> float | None:
    headers = getattr(exc.response, "headers", None) or {}
    value = headers.get("Retry-After")
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def classify(exc: BaseException, channel_id: int) -> TransientPostError | PermanentPostError | None:
    """The scheduler's view of a discord.py failure; None means "not ours to classify"."""
    where = f"<#{channel_id}>"
    if isinstance(exc, discord.RateLimited):
        return TransientPostError("rate limited by Discord", retry_after=exc.retry_after)
    if isinstance(exc, discord.NotFound):
        if exc.code == 10003:
            return PermanentPostError(
                f"the channel {where} was deleted (Discord: Unknown "
                "Channel). Choose another channel with /daily set."
            )
        return PermanentPostError(
            f"Discord could not find {where} or this server "
            f"({exc.status} {exc.code}: {exc.text or 'Not Found'})."
        )
    if isinstance(exc, discord.Forbidden):
        if exc.code == 50001:
            return PermanentPostError(
                f"I can no longer see {where} (Discord: Missing Access). "
                "Give me View Channel there, then run /daily set again."
            )
        if exc.code == 50013:
            return PermanentPostError(
                f"I am not allowed to post in {where} (Discord: Missing Permissions). I need "
                f"{', '.join(REQUIRED.values())} there; then run /daily set again."
            )
        return PermanentPostError(
            f"Discord refused the post in {where} ({exc.status} "
            f"{exc.code}: {exc.text or 'Forbidden'})."
        )
    if isinstance(exc, discord.DiscordServerError):
        return TransientPostError(f"Discord server error {exc.status}")
    if isinstance(exc, discord.HTTPException) and exc.status in TRANSIENT_STATUSES:
        return TransientPostError(f"Discord answered {exc.status}", retry_after=_retry_after(exc))
    if isinstance(exc, TimeoutError):
        return TransientPostError("Discord did not answer in time")
    if isinstance(exc, aiohttp.ClientError | OSError):
        return TransientPostError(f"network error: {type(exc).__name__}: {exc}")
    return None


class DiscordPoster:
    """`bot.daily.rules.Poster` over a connected PaperBot; reads `bot.engine` at each post."""

    def __init__(self, bot: PaperBot, *, open_thread: bool = True) -> None:
        self.bot = bot
        self.open_thread = open_thread

    async def _channel(self, channel_id: int) -> PostChannel:
        channel = self.bot.get_channel(channel_id)
        if channel is None:
            channel = await self.bot.fetch_channel(channel_id)
        if not isinstance(channel, PostChannel):
            raise PermanentPostError(f"<#{channel_id}> is not a server text channel.")
        return channel

    async def post(
        self, guild_id: int, channel_id: int, paper_id: str, local_date: date, marker: str
    ) -> int | Posted:
        try:
            paper = self.bot.engine.paper(paper_id)
        except ValueError as exc:  # UnknownPaper: the corpus was reloaded without it
            raise TransientPostError(f"paper {paper_id} is no longer in the corpus") from exc
        # Rendering is bounded (`render.readable`) but still CPU work: keep it off the loop.
        embed = await asyncio.to_thread(daily_embed, paper, local_date)
        view = paper_view(paper_id, render.found_links(paper), share=False, marker=marker)
        name = thread_name(paper, local_date)
        try:
            async with asyncio.timeout(SEND_TIMEOUT):
                channel = await self._channel(channel_id)
                if isinstance(channel, discord.ForumChannel):
                    made = await channel.create_thread(
                        name=name,
                        embed=embed,
                        view=view,
                        applied_tags=forum_tags(channel, await self._topic(guild_id)),
                        auto_archive_duration=THREAD_ARCHIVE_MINUTES,
                    )
                    thread, message = made.thread, made.message
                else:
                    message = await channel.send(embed=embed, view=view, nonce=nonce_for(marker))
                    thread = None
        except (discord.DiscordException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            mapped = classify(exc, channel_id)
            if mapped is None:
                raise
            raise mapped from exc
        if thread is not None:  # a forum post: the thread is the post
            await self._start_discussion(thread, paper)
            return Posted(message.id, thread.id)
        if self.open_thread:
            thread = await self._open_thread(channel, message, name)
            if thread is not None:
                await self._start_discussion(thread, paper)
        return message.id

    async def _topic(self, guild_id: int) -> str | None:
        """The schedule's topic (a forum post is tagged with it)."""
        if self.bot.storage is None:
            return None
        schedule = await DailyTables(self.bot.storage).get_schedule(guild_id)
        return schedule.topic if schedule else None

    async def _start_discussion(self, thread: discord.Thread, paper: Paper) -> None:
        """The thread's first message: what to discuss and the links. A nicety: failures
        only log, the post stands."""
        try:
            async with asyncio.timeout(THREAD_TIMEOUT):
                await thread.send(content=starter_text(paper), suppress_embeds=True)
        except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            log.warning(
                "guild %d: posted, but could not start the discussion in thread %d: %s",
                thread.guild.id,
                thread.id,
                exc,
            )

    async def _open_thread(
        self, channel: object, message: discord.Message, name: str
    ) -> discord.Thread | None:
        """A discussion thread on the post, when the channel allows; failures only log."""
        if not isinstance(channel, discord.TextChannel):  # threads cannot hold threads
            return None
        me = channel.guild.me
        if me is None or not channel.permissions_for(me).create_public_threads:
            log.info(
                "guild %d: no Create Public Threads in channel %d: posting without a thread",
                channel.guild.id,
                channel.id,
            )
            return None
        try:
            async with asyncio.timeout(THREAD_TIMEOUT):
                return await message.create_thread(
                    name=name,
                    auto_archive_duration=THREAD_ARCHIVE_MINUTES,
                )
        except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            log.warning(
                "guild %d: posted, but could not open a thread in channel %d: %s",
                channel.guild.id,
                channel.id,
                exc,
            )
        return None

    async def find_existing(
        self, channel_id: int, marker: str, since: datetime | None = None
    ) -> int | Posted | None:
        """Our message carrying `marker` (in a component's custom_id; an older version's post
        in its footer), read oldest first from `since` on; in a forum, the post among its
        threads.

        Why every message since then: after a crash between Discord accepting the post and us
        recording it, a busy channel may hold hundreds of newer messages before the restart;
        reading only the last 100 missed the post and sent it again. `after=` pages through
        100 at a time (one request each) from a snowflake made of `since`.
        """
        try:
            async with asyncio.timeout(SEND_TIMEOUT):
                channel = await self._channel(channel_id)
                me = self.bot.user.id if self.bot.user else None
                if isinstance(channel, discord.ForumChannel):
                    return await self._find_in_forum(channel, marker, since, me)
                if since is None:
                    history = channel.history(limit=HISTORY_SCAN)
                else:
                    after = discord.Object(id=discord.utils.time_snowflake(since))
                    history = channel.history(limit=None, after=after, oldest_first=True)
                async for message in history:
                    if me is not None and message.author.id != me:
                        continue
                    if carries(message, marker):
                        return message.id
        except (discord.DiscordException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            mapped = classify(exc, channel_id)
            if mapped is None:
                raise
            raise mapped from exc
        return None

    async def _find_in_forum(
        self, forum: discord.ForumChannel, marker: str, since: datetime | None, me: int | None
    ) -> Posted | None:
        """A forum post is a thread whose starter message shares its id: look at the bot's
        active threads of the forum opened since `since`, and their starter messages."""
        for thread in await forum.guild.active_threads():
            if thread.parent_id != forum.id or (me is not None and thread.owner_id != me):
                continue
            if not thread_created_after(thread.id, since):
                continue
            try:
                message = await thread.fetch_message(thread.id)
            except discord.NotFound:
                continue
            if carries(message, marker):
                return Posted(message.id, thread.id)
        return None

"""Telling follows about papers new to the corpus, after a reload, a refresh or a restart, and
retrying the notices Discord did not take.

Which follows hear about which papers, and the claim-send-confirm rule, are
`bot.follows.notices` (discord-free; the console prints the same notices). `DiscordSender`
sends one notice (≤ `NOTICE_PAGE` papers, then "…and N more" with ▶), finds one an earlier
attempt already sent, and sorts discord.py's failures: a destination refusing for good (closed
DMs 50007, an unknown user, a lost channel) stops the follow; anything else is retried.

What reaches us from discord.py: it retries a 429 after its Retry-After and a 500/502/504/524
itself; a 503 (not retried), exhausted retries and network errors arrive here. Each send is
bounded by `SEND_TIMEOUT`, so a long Retry-After never holds up the other follows' notices.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
from datetime import datetime
from typing import TYPE_CHECKING

import aiohttp
import discord

from bot.app import limits
from bot.app.exts.follows.embeds import notice_embed, notice_title
from bot.app.exts.follows.views import NOTICE_PAGE, carries_batch, notice_view
from bot.follows.notices import FollowStopped, Notice, Round, SendFailed, deliver, plan
from bot.follows.store import Follow
from bot.timing import Clock, SystemClock

if TYPE_CHECKING:
    from bot.app.client import PaperBot

log = logging.getLogger(__name__)
SEND_TIMEOUT = 60.0  # seconds for one send (discord.py's own 429/5xx retries included)
HISTORY_SCAN = 100  # recent messages searched for a marker when the first attempt is unknown
CANNOT_DM = 50007
UNKNOWN_USER = 10013
GONE_CODES = {
    10003: "the channel was deleted",
    50001: "I can no longer see the channel",
    50013: "I am not allowed to post in the channel",
}


def notice_message(notice: Notice) -> tuple[discord.Embed, discord.ui.View]:
    cap = notice.per_page
    pages = max(1, -(-notice.total // cap))
    embed = notice_embed(notice_title(notice.follow), notice.papers, 1, notice.total, cap)
    view = notice_view(notice.batch, 1, pages, notice.papers, notice.follow.follow_id, cap)
    return embed, view


def nonce_for(notice: Notice) -> str:
    """The send's nonce, the same for every attempt of one notice (≤ 25 characters): with
    `enforce_nonce` (discord.py adds it), a retry within Discord's few minutes returns the
    message an earlier attempt created instead of a second one."""
    return f"fn{notice.batch}"


async def _destination(bot: PaperBot, follow: Follow) -> discord.abc.Messageable:
    if follow.channel_id is None:
        user = bot.get_user(follow.user_id) or await bot.fetch_user(follow.user_id)
        return user.dm_channel or await user.create_dm()
    channel = bot.get_channel(follow.channel_id) or await bot.fetch_channel(follow.channel_id)
    if not isinstance(channel, discord.abc.Messageable):
        raise discord.ClientException(f"<#{follow.channel_id}> is not a text channel")
    return channel


def stop_reason(follow: Follow, exc: discord.HTTPException) -> str | None:
    """Why a follow must stop after `exc`, or None when it may work next time."""
    if exc.code == CANNOT_DM:
        return (
            "I can't send you direct messages (Discord: Cannot send messages to this user). "
            "Allow DMs from this server's members, then add the follow again."
        )
    if follow.channel_id is None and exc.code == UNKNOWN_USER:
        return "Discord no longer knows this user."
    if follow.channel_id is not None and exc.code in GONE_CODES:
        return f"{GONE_CODES[exc.code]} <#{follow.channel_id}>; add the follow again elsewhere."
    return None


def classify(follow: Follow, exc: BaseException) -> SendFailed | FollowStopped | None:
    """The delivery rule's view of a discord.py failure; None: not ours to classify."""
    if isinstance(exc, discord.RateLimited):
        return SendFailed("rate limited by Discord", exc.retry_after)
    if isinstance(exc, discord.HTTPException):
        reason = stop_reason(follow, exc)
        if reason is not None:
            return FollowStopped(reason)
        header = getattr(exc.response, "headers", None) or {}
        try:
            retry_after = float(header["Retry-After"]) if "Retry-After" in header else None
        except (TypeError, ValueError):
            retry_after = None
        return SendFailed(f"Discord answered {exc.status}", retry_after)
    if isinstance(exc, discord.ClientException):
        return FollowStopped(str(exc))
    if isinstance(exc, TimeoutError):
        return SendFailed("Discord did not answer in time")
    if isinstance(exc, aiohttp.ClientError | OSError):
        return SendFailed(limits.truncate(f"network error: {type(exc).__name__}: {exc}", 120))
    return None


class DiscordSender:
    """`bot.follows.notices.Sender` over a connected PaperBot."""

    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot

    async def send(self, notice: Notice) -> int:
        embed, view = notice_message(notice)
        try:
            async with asyncio.timeout(SEND_TIMEOUT):
                where = await _destination(self.bot, notice.follow)
                message = await where.send(embed=embed, view=view, nonce=nonce_for(notice))
        except (discord.DiscordException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise _mapped(notice.follow, exc) from exc
        return message.id

    async def find_sent(self, notice: Notice, since: datetime | None) -> int | None:
        """Our message carrying the notice's marker, read oldest first from `since` on."""
        me = self.bot.user.id if self.bot.user else None
        try:
            async with asyncio.timeout(SEND_TIMEOUT):
                where = await _destination(self.bot, notice.follow)
                if since is None:
                    history = where.history(limit=HISTORY_SCAN)
                else:  # every message since the first attempt, 100 a request
                    history = where.history(limit=None, after=since, oldest_first=True)
                async for message in history:
                    if me is not None and message.author.id != me:
                        continue
                    if sent_notice(message, notice):
                        return message.id
        except (discord.DiscordException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise _mapped(notice.follow, exc) from exc
        return None


def sent_notice(message: discord.Message, notice: Notice) -> bool:
    """Whether `message` is `notice`: its Stop following button names the batch (an older
    version's notice: its footer holds the marker)."""
    ids = [
        child.custom_id
        for row in message.components
        for child in getattr(row, "children", [])
        if getattr(child, "custom_id", None)
    ]
    if carries_batch(ids, notice.batch):
        return True
    return any(notice.marker in (e.footer.text or "") for e in message.embeds)


def _mapped(follow: Follow, exc: BaseException) -> BaseException:
    found = classify(follow, exc)
    return exc if found is None else found


def owner_name() -> str:
    """This process's name on the notices it claims (host, pid, and a random tail)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


def clock_of(bot: PaperBot) -> Clock:
    return bot.clock or SystemClock()


async def run(bot: PaperBot, owner: str, *, queue: bool = True) -> Round:
    """Queue notices for the corpus the bot serves now (after start, reload or refresh) unless
    `queue` is off (a retry round), then deliver every notice due."""
    if bot.storage is None:
        return Round(0, 0, None)
    clock = clock_of(bot)
    if queue:
        await plan(bot.storage, bot.engine, clock.now())
    return await deliver(
        bot.storage, bot.engine, DiscordSender(bot), now=clock.now, owner=owner, page=NOTICE_PAGE
    )

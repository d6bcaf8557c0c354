"""Telling follows about papers new to the corpus, after a reload, a refresh or a restart.

Which follows hear about which papers is `bot.follows.notices.plan` (discord-free; the console
prints the same notices). `deliver` sends each notice (≤ `NOTICE_PAGE` papers, then "…and N
more" with ▶) and disables a follow whose destination refuses for good: closed DMs (50007) or
a channel we lost.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import discord

from bot.app.exts.follows.embeds import notice_embed
from bot.app.exts.follows.views import NOTICE_PAGE, notice_view
from bot.follows.notices import Notice, plan
from bot.follows.store import Follow, Follows
from bot.library import now

if TYPE_CHECKING:
    from bot.app.client import PaperBot

log = logging.getLogger(__name__)
CANNOT_DM = 50007
GONE_CODES = {
    10003: "the channel was deleted",
    50001: "I can no longer see the channel",
    50013: "I am not allowed to post in the channel",
}


def notice_message(notice: Notice) -> tuple[discord.Embed, discord.ui.View | None]:
    total = len(notice.papers)
    pages = max(1, -(-total // NOTICE_PAGE))
    embed = notice_embed(notice.follow.query, notice.papers, 1, total, NOTICE_PAGE)
    return embed, notice_view(notice.batch, 1, pages)


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
    if follow.channel_id is not None and exc.code in GONE_CODES:
        return f"{GONE_CODES[exc.code]} <#{follow.channel_id}>; add the follow again elsewhere."
    return None


async def deliver(bot: PaperBot, notices: Sequence[Notice]) -> int:
    """Send each notice; returns how many were sent. Failures are logged, never raised."""
    assert bot.storage is not None
    follows = Follows(bot.storage)
    sent = 0
    for notice in notices:
        embed, view = notice_message(notice)
        try:
            where = await _destination(bot, notice.follow)
            if view is None:
                await where.send(embed=embed)
            else:
                await where.send(embed=embed, view=view)
            sent += 1
        except discord.HTTPException as exc:
            reason = stop_reason(notice.follow, exc)
            if reason is None:
                log.warning("follow %s: notice not sent: %s", notice.follow.follow_id, exc)
                continue
            await follows.disable(notice.follow.follow_id, reason)
            log.info("follow %s disabled: %s", notice.follow.follow_id, reason)
        except discord.ClientException as exc:
            await follows.disable(notice.follow.follow_id, str(exc))
    return sent


async def run(bot: PaperBot) -> int:
    """Plan and deliver for the corpus the bot serves now (after start, reload or refresh)."""
    if bot.storage is None:
        return 0
    notices = await plan(bot.storage, bot.engine, now())
    return await deliver(bot, notices)

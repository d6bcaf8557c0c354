"""For you on Discord: `/foryou`, the 👍 / 👎 under paper cards (`bot.app.results.rating`),
and the For you feed's settings."""

from typing import Any

import discord

from bot.app.results import rating

ITEMS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (*rating.ITEMS,)


async def setup(bot: Any) -> None:
    """Filled in by the cog (`bot.app.exts.foryou.cog`)."""

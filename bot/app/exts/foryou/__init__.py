"""For you on Discord: `/foryou` with its pages, and the 👍 / 👎 under paper cards
(`bot.app.results.rating`, registered here as this feature's persistent components)."""

from typing import Any

import discord

from bot.app.exts.foryou.cog import setup
from bot.app.exts.foryou.views import ITEMS as PAGE_ITEMS
from bot.app.results import rating

ITEMS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (*rating.ITEMS, *PAGE_ITEMS)

__all__ = ["ITEMS", "setup"]

"""`/new [days] [venue]`: the papers the corpus gained recently, newest first, paged like /search.

"Added" is when this bot's corpus first saw a paper (written by `python -m bot fetch` and the
scheduled refresh; bot/search/recent.py says why not the source's own date). The listing itself
lives in the search layer; this cog only turns the options into a page state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.app.checks import effective_venue, venue_autocomplete
from bot.app.results import views as components
from bot.app.results.pages import LIMIT_MAX, VENUE_MAX, PageState, page_limit
from bot.search.recent import MAX_DAYS

if TYPE_CHECKING:
    from bot.app.client import PaperBot

DEFAULT_DAYS = 7


class New(commands.Cog):
    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot

    @app_commands.command(name="new", description="Papers added to the bot recently, newest first")
    @app_commands.describe(
        days=f"How many days back (1-{MAX_DAYS}, default {DEFAULT_DAYS})",
        venue="Only papers from this venue (start typing; all: every venue despite a default)",
        limit="Papers per page (1-10)",
    )
    @app_commands.autocomplete(venue=venue_autocomplete)
    async def new(
        self,
        interaction: discord.Interaction[PaperBot],
        days: app_commands.Range[int, 1, MAX_DAYS] = DEFAULT_DAYS,
        venue: app_commands.Range[str, 1, VENUE_MAX] | None = None,
        limit: app_commands.Range[int, 1, LIMIT_MAX] | None = None,
    ) -> None:
        venue = await effective_venue(self.bot, interaction, venue)
        # Discord enforces the ranges in its client only; a raw API call may send anything.
        span = max(1, min(MAX_DAYS, days))
        size = page_limit(limit or self.bot.settings.search.page_size)
        # The venue may be an autocomplete key (`bot.app.refs`); `show_page` resolves it.
        state = PageState(kind="n", ref=str(span), limit=size, venue=(venue or "").strip())
        await components.show_page(
            interaction, state, edit=False, ephemeral=self.bot.settings.discord.ephemeral
        )


async def setup(bot: PaperBot) -> None:
    await bot.add_cog(New(bot))

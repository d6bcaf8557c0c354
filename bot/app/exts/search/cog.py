"""`/search`: ranked papers, one embed page at a time, with ◀ ▶, an open menu and Share."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.app import installs, limits
from bot.app.checks import effective_venue, venue_autocomplete
from bot.app.results import views as components
from bot.app.results.pages import LIMIT_MAX, QUERY_MAX, VENUE_MAX, PageState, page_limit
from bot.search.results import EmptyQuery, SearchError

if TYPE_CHECKING:
    from bot.app.client import PaperBot

AUTHOR_MAX = 80  # an author name; with the query it must fit QUERY_MAX


def search_cooldown(interaction: discord.Interaction[PaperBot]) -> app_commands.Cooldown | None:
    """Per-user rate from settings ([discord] search_cooldown_uses / _seconds); 0 turns it off."""
    settings = interaction.client.settings.discord
    if settings.search_cooldown_uses <= 0 or settings.search_cooldown_seconds <= 0:
        return None
    return app_commands.Cooldown(settings.search_cooldown_uses, settings.search_cooldown_seconds)


class Search(commands.Cog):
    """The search command; paging and the detail menu live in `bot.app.results.views`."""

    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot

    @app_commands.command(
        name="search", description="Find papers by the words of their title and abstract"
    )
    @app_commands.describe(
        query=(
            'A few words; "a phrase", -exclude, author:name, venue:icml, year:2026, sort:new work'
        ),
        venue="Only papers from this venue (start typing; all: every venue despite a default)",
        limit="Papers per page (1-10)",
        author="Only papers by this author (start typing a name); alone, lists their papers",
    )
    @app_commands.autocomplete(venue=venue_autocomplete)
    @app_commands.checks.dynamic_cooldown(search_cooldown, key=lambda i: i.user.id)
    @installs.anywhere
    async def search(
        self,
        interaction: discord.Interaction[PaperBot],
        query: app_commands.Range[str, 1, QUERY_MAX] | None = None,
        venue: app_commands.Range[str, 1, VENUE_MAX] | None = None,
        limit: app_commands.Range[int, 1, LIMIT_MAX] | None = None,
        author: app_commands.Range[str, 1, AUTHOR_MAX] | None = None,
    ) -> None:
        text = " ".join((query or "").split())
        name = " ".join((author or "").replace('"', " ").split())
        if name:
            text = f'{text} author:"{name}"'.strip()
        if not text:
            raise EmptyQuery(
                "Nothing to search for: type a few words about the paper, or pick an author."
            )
        if len(text) > QUERY_MAX:
            raise SearchError(f"The query and the author together pass {QUERY_MAX} characters.")
        venue = await effective_venue(self.bot, interaction, venue)
        # Discord enforces 1-10 in its client only; a raw API call may send anything.
        size = page_limit(limit or self.bot.settings.search.page_size)
        # The venue may be an autocomplete key (`bot.app.refs`); `show_page` resolves it.
        state = PageState(kind="s", ref=text, limit=size, venue=(venue or "").strip())
        await components.show_page(
            interaction, state, edit=False, ephemeral=self.bot.settings.discord.ephemeral
        )

    @search.autocomplete("author")
    async def author_autocomplete(
        self, interaction: discord.Interaction[PaperBot], current: str
    ) -> list[app_commands.Choice[str]]:
        """Author names as the corpus lists them, the most prolific first (memory only)."""
        return [
            app_commands.Choice(
                name=limits.truncate(f"{name} ({count})", limits.CHOICE_NAME),
                value=name[:AUTHOR_MAX],
            )
            for name, count in self.bot.engine.suggest_authors(current, limits.CHOICES)
        ]


async def setup(bot: PaperBot) -> None:
    await bot.add_cog(Search(bot))

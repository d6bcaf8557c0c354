"""`/paper`, `/similar` and `/random`: one paper in full, papers like it, a paper by chance."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.app import installs, limits, refs, render, respond
from bot.app.checks import effective_venue, venue_autocomplete
from bot.app.results import views as components
from bot.app.results.pages import VENUE_MAX, PageState, page_limit

if TYPE_CHECKING:
    from bot.app.client import PaperBot

PAPER_REF_MAX = 100  # an id or a title as typed; autocomplete values are ids
PaperRef = app_commands.Range[str, 1, PAPER_REF_MAX]
PAPER_HELP = "Start typing a title (or paste a paper id)"


def paper_choices(bot: PaperBot, current: str) -> list[app_commands.Choice[str]]:
    """Up to 25 titles matching what was typed, from memory: Discord allows 3 s, we use µs.
    A value is the paper id, or its key when the id is longer than a choice value may be."""
    choices = []
    for paper_id, title in bot.engine.suggest(current, limit=limits.CHOICES):
        name = limits.truncate(render.plain_title(title), limits.CHOICE_NAME)
        choices.append(
            app_commands.Choice(
                name=name or limits.truncate(paper_id, limits.CHOICE_NAME),
                value=refs.ref_for(paper_id, limits.CHOICE_VALUE),
            )
        )
    return choices


class Papers(commands.Cog):
    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot
        self.rng = random.Random()

    @property
    def ephemeral(self) -> bool:
        return self.bot.settings.discord.ephemeral

    @app_commands.command(name="paper", description="Show one paper: abstract, authors, links")
    @app_commands.describe(paper=PAPER_HELP)
    @installs.anywhere
    async def paper(self, interaction: discord.Interaction[PaperBot], paper: PaperRef) -> None:
        await components.show_paper(interaction, paper, ephemeral=self.ephemeral)

    @app_commands.command(name="similar", description="Papers similar to one paper")
    @app_commands.describe(paper=PAPER_HELP)
    @installs.anywhere
    async def similar(self, interaction: discord.Interaction[PaperBot], paper: PaperRef) -> None:
        engine = self.bot.engine
        found = await respond.compute(
            interaction, refs.find_paper, engine, paper, ephemeral=self.ephemeral
        )
        size = page_limit(self.bot.settings.search.page_size)
        await components.show_page(
            interaction,
            PageState(kind="l", ref=found.id, limit=size),
            edit=False,
            ephemeral=self.ephemeral,
        )

    @app_commands.command(name="random", description="A paper picked at random")
    @app_commands.describe(
        venue="Only papers from this venue (start typing; all: every venue despite a default)"
    )
    @app_commands.autocomplete(venue=venue_autocomplete)
    @installs.anywhere
    async def random_paper(
        self,
        interaction: discord.Interaction[PaperBot],
        venue: app_commands.Range[str, 1, VENUE_MAX] | None = None,
    ) -> None:
        engine = self.bot.engine
        venue = await effective_venue(self.bot, interaction, venue)
        wanted = refs.find_venue(engine, venue) if venue else None  # may be a key
        found = engine.random(wanted, self.rng)  # memory only; raises BadFilter
        await components.show_paper(interaction, found.id, ephemeral=self.ephemeral)

    @paper.autocomplete("paper")
    @similar.autocomplete("paper")
    async def paper_autocomplete(
        self, interaction: discord.Interaction[PaperBot], current: str
    ) -> list[app_commands.Choice[str]]:
        return paper_choices(self.bot, current)


async def setup(bot: PaperBot) -> None:
    await bot.add_cog(Papers(bot))

"""`/foryou`: new papers ranked for the member from their library and their 👍 / 👎.

Ephemeral: what a member saves and rates is theirs. The ranking is `bot.foryou` (shared with
the console); the For you feed by DM is `/follow foryou` (a follow of its own, tuned with
`/follow tune` like any other).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.app.exts.foryou.views import show_foryou

if TYPE_CHECKING:
    from bot.app.client import PaperBot


class ForYou(commands.Cog, name="For you"):
    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot

    @app_commands.command(
        name="foryou", description="New papers for you, from what you save and rate 👍 / 👎"
    )
    @app_commands.describe(page="Which page (default 1)")
    async def foryou(
        self,
        interaction: discord.Interaction[PaperBot],
        page: app_commands.Range[int, 1, 1000] = 1,
    ) -> None:
        await show_foryou(interaction, max(1, min(page, 1000)), edit=False)


async def setup(bot: PaperBot) -> None:
    await bot.add_cog(ForYou(bot))

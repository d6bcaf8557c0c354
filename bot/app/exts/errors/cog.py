"""The tree-level error handler: every failed command answers the user and logs why.

Without it, an exception in a slash command leaves the user with "The application did not
respond" and the traceback only in discord.py's default log line. Component callbacks report
through `bot.app.respond.guarded` with the same messages.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.app import render, respond

if TYPE_CHECKING:
    from bot.app.client import PaperBot

log = logging.getLogger(__name__)
STALE = "This button belongs to an older version of the bot. Run the command again for a fresh one."


class Errors(commands.Cog):
    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot
        self._previous: Any = None

    async def cog_load(self) -> None:
        tree = self.bot.tree
        self._previous = tree.on_error
        tree.error(self.on_app_command_error)

    async def cog_unload(self) -> None:
        self.bot.tree.error(self._previous)

    async def on_app_command_error(
        self, interaction: discord.Interaction[PaperBot], error: app_commands.AppCommandError
    ) -> None:
        await respond.report(interaction, error)

    @commands.Cog.listener()
    async def on_interaction(self, interaction: discord.Interaction[PaperBot]) -> None:
        """Answer clicks on our components whose custom_id no current item understands."""
        if interaction.type is not discord.InteractionType.component:
            return
        custom_id = str(respond.data_of(interaction).get("custom_id", ""))
        if not custom_id.startswith("pb:"):
            return
        from bot.app.client import dynamic_items

        if any(
            item.__discord_ui_compiled_template__.fullmatch(custom_id) for item in dynamic_items()
        ):
            return
        log.info("stale component %r", custom_id)
        if not interaction.response.is_done():
            await interaction.response.send_message(embed=render.error_embed(STALE), ephemeral=True)


async def setup(bot: PaperBot) -> None:
    await bot.add_cog(Errors(bot))

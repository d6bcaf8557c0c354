"""`/help` (what the bot does, how to search, corpus figures) and the owner-only `/sync`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.app import installs, render, respond
from bot.app.checks import owner_only

if TYPE_CHECKING:
    from bot.app.client import PaperBot


class Meta(commands.Cog):
    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot

    @app_commands.command(name="help", description="What this bot does and how to search")
    @installs.anywhere
    async def help(self, interaction: discord.Interaction[PaperBot]) -> None:
        ephemeral = self.bot.settings.discord.ephemeral
        embed = render.help_embed(self.bot.engine.venues(), ephemeral=ephemeral)
        await respond.send(interaction, embed=embed, ephemeral=True)

    @app_commands.command(
        name="sync", description="Owner only: push the command list to Discord now"
    )
    @app_commands.describe(scope="Where to sync: the configured place, or this server only")
    @app_commands.choices(
        scope=[
            app_commands.Choice(name="configured (guild or global)", value="configured"),
            app_commands.Choice(name="this server", value="here"),
        ]
    )
    @app_commands.default_permissions(administrator=True)
    @app_commands.check(owner_only)
    async def sync(
        self,
        interaction: discord.Interaction[PaperBot],
        scope: app_commands.Choice[str] | None = None,
    ) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        here = scope is not None and scope.value == "here" and interaction.guild is not None
        guild = discord.Object(interaction.guild.id) if here and interaction.guild else None
        # The sync runs in the background: a rate limit is reported, not waited out here.
        text = await self.bot.syncer.request(guild)
        await interaction.followup.send(text, ephemeral=True)


async def setup(bot: PaperBot) -> None:
    await bot.add_cog(Meta(bot))

"""`/admin reload`: owner-only live corpus reload (the logic lives in bot/app/reload.py).

Two gates, because either alone is not enough: `default_permissions(administrator)` hides the
group from members who are not server admins (a server can change that in its integration
settings, so it is a convenience, not security), and the `owner_only` check runs on our side
for every invocation against DISCORD_OWNER_IDS (or the application owner).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.app import limits, render, respond
from bot.app.checks import owner_only

if TYPE_CHECKING:
    from bot.app.client import PaperBot


class Admin(commands.Cog):
    admin = app_commands.Group(
        name="admin",
        description="Owner-only maintenance commands",
        default_permissions=discord.Permissions(administrator=True),
    )

    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot

    @admin.command(
        name="reload",
        description="Owner only: reload settings and corpus; the current corpus serves meanwhile",
    )
    @app_commands.describe(
        force="Swap in a corpus even if it lost many papers or has malformed lines"
    )
    @app_commands.check(owner_only)
    async def reload(self, interaction: discord.Interaction[PaperBot], force: bool = False) -> None:
        # Loading may take longer than Discord's 3 s: answer "thinking…" first.
        await interaction.response.defer(ephemeral=True, thinking=True)
        outcome = await self.bot.reloader.reload(
            f"/admin reload by {interaction.user.id}", force=force
        )
        text = limits.truncate(outcome.summary(), limits.EMBED_DESCRIPTION)
        embed = (
            render.finish(
                discord.Embed(title="Corpus reloaded", description=text, colour=render.COLOR)
            )
            if outcome.ok
            else render.error_embed(text)
        )
        await respond.send(interaction, embed=embed, ephemeral=True)


async def setup(bot: PaperBot) -> None:
    await bot.add_cog(Admin(bot))

"""A cog whose command description is 110 characters (the /admin reload bug of issue 10).

Loaded only by tests/app/test_commandcheck.py to prove `--check` names what Discord would refuse.
"""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands


class Bad(commands.Cog):
    @app_commands.command(name="reload", description="r" * 110)
    async def reload(self, interaction: discord.Interaction) -> None:
        return None


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Bad())

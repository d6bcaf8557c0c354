"""`/admin reload`, `/admin refresh` and `/admin status`: owner-only live corpus reload
(bot/app/reload.py), fetching every configured source now (bot/app/refresh.py), and what the
corpus, the last reload and each source's last refresh look like.

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

    @admin.command(
        name="refresh",
        description="Owner only: fetch every configured source now, then reload if papers changed",
    )
    @app_commands.check(owner_only)
    async def refresh(self, interaction: discord.Interaction[PaperBot]) -> None:
        if not self.bot.refresher.jobs:
            await respond.send(interaction, embed=self.status_embed(), ephemeral=True)
            return
        # Fetching takes seconds to minutes (arXiv asks for 3 s between calls).
        await interaction.response.defer(ephemeral=True, thinking=True)
        outcome = await self.bot.refresher.refresh(f"/admin refresh by {interaction.user.id}")
        embed = self.status_embed()
        embed.title = "Sources refreshed" if outcome is None or outcome.ok else "Refresh rejected"
        if outcome is None:
            embed.description = "No source brought anything new or changed: the corpus stays."
        await respond.send(interaction, embed=embed, ephemeral=True)

    @admin.command(
        name="status", description="Owner only: corpus size, last reload, each source's refresh"
    )
    @app_commands.check(owner_only)
    async def status(self, interaction: discord.Interaction[PaperBot]) -> None:
        await respond.send(interaction, embed=self.status_embed(), ephemeral=True)

    def status_embed(self) -> discord.Embed:
        bot = self.bot
        venues = bot.engine.venues()
        embed = discord.Embed(title="Bot status", colour=render.COLOR)
        corpus = f"{len(bot.engine.papers):,} papers in {len(venues)} venue(s)"
        last = bot.reloader.last
        if last is not None:
            corpus += f"\nLast reload ({last.source}): {last.summary()}"
        embed.add_field(
            name="Corpus", value=limits.truncate(corpus, limits.FIELD_VALUE), inline=False
        )
        refresher = bot.refresher
        jobs = refresher.jobs
        if not jobs:
            embed.add_field(
                name="Sources",
                inline=False,
                value="None configured: add [[sources.fetch]] to the settings (see README).",
            )
            return render.finish(embed)
        times = ", ".join(bot.settings.sources.refresh_at) or "never (fetch by hand)"
        when = f"Refresh at {times} UTC"
        if refresher.next_at is not None:
            when += f"; next <t:{int(refresher.next_at.timestamp())}:R>"
        lines = [when]
        for job in jobs[: limits.EMBED_FIELDS - 2]:
            state = refresher.sources.get(job.label)
            if state is None:
                lines.append(f"**{job.label}**: not refreshed since the bot started")
            else:
                mark = "✅" if state.ok else "❌"
                stamp = f"<t:{int(state.at.timestamp())}:R>"
                lines.append(f"{mark} **{job.label}** {stamp}: {state.text}")
        embed.add_field(
            name="Sources",
            value=limits.join_limited(lines, limits.FIELD_VALUE, sep="\n", more="and {n} more"),
            inline=False,
        )
        return render.finish(embed)


async def setup(bot: PaperBot) -> None:
    await bot.add_cog(Admin(bot))

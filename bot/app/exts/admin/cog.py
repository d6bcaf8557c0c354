"""`/admin reload`, `/admin refresh` and `/admin status`: owner-only live corpus reload
(bot/app/reload.py), fetching every configured source now (bot/app/refresh.py), and what the
corpus, the last reload and each source's last refresh look like.

`/admin refresh` answers at once and fetches in the background: a source may make it wait for
many minutes (Retry-After), longer than the 15 minutes an interaction's token lives. The owner
gets a follow-up when it is done while the token is still valid; after that, `/admin status`
(which shows each source's progress at any time) is where the result is.

Two gates, because either alone is not enough: `default_permissions(administrator)` hides the
group from members who are not server admins (a server can change that in its integration
settings, so it is a convenience, not security), and the `owner_only` check runs on our side
for every invocation against DISCORD_OWNER_IDS (or the application owner).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.app import limits, render, respond
from bot.app.checks import owner_only

if TYPE_CHECKING:
    from bot.app.client import PaperBot
    from bot.app.reload import ReloadOutcome

log = logging.getLogger(__name__)

# An interaction's token lives 15 minutes; a follow-up later than this is not tried.
FOLLOWUP_WINDOW = timedelta(minutes=14)


class Admin(commands.Cog):
    admin = app_commands.Group(
        name="admin",
        description="Owner-only maintenance commands",
        default_permissions=discord.Permissions(administrator=True),
    )

    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot
        self.followups: set[asyncio.Task[None]] = set()  # answers once a refresh is done

    async def cog_unload(self) -> None:
        for task in self.followups:
            task.cancel()

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
        refresher = self.bot.refresher
        if not refresher.jobs:
            await respond.send(interaction, embed=self.status_embed(), ephemeral=True)
            return
        # Fetching takes seconds to an hour: answer now, fetch in the background.
        started = refresher.clock.now()
        task = refresher.begin(f"/admin refresh by {interaction.user.id}")
        if task is None:
            run = refresher.current
            who = f" ({run.source})" if run is not None else ""
            text = f"A refresh{who} is already running; `/admin status` shows its progress."
            await respond.send(interaction, embed=render.error_embed(text), ephemeral=True)
            return
        count = len(refresher.jobs)
        text = (
            f"Refresh started: {count} source{'' if count == 1 else 's'}; `/admin status` "
            "shows progress. I will answer here when it is done, if within 15 minutes."
        )
        embed = discord.Embed(title="Refreshing sources", description=text, colour=render.COLOR)
        await respond.send(interaction, embed=render.finish(embed), ephemeral=True)
        followup = asyncio.get_running_loop().create_task(
            self._answer_when_done(interaction, task, started), name="admin-refresh-followup"
        )
        self.followups.add(followup)
        followup.add_done_callback(self.followups.discard)

    async def _answer_when_done(
        self,
        interaction: discord.Interaction[PaperBot],
        task: asyncio.Task[ReloadOutcome | None],
        started: datetime,
    ) -> None:
        """The result as a follow-up while the interaction's token is valid; after that, only
        `/admin status` shows it (a follow-up on an expired token is refused)."""
        try:
            outcome = await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.cancelled():  # the bot is stopping: the refresh was stopped with it
                return
            raise
        except Exception:
            log.exception("the refresh asked for by %s failed", interaction.user.id)
            outcome = None
        if self.bot.refresher.clock.now() - started >= FOLLOWUP_WINDOW or (
            interaction.is_expired()
        ):
            log.info("refresh done after the interaction expired; /admin status shows it")
            return
        try:
            await interaction.followup.send(embed=self.refresh_embed(outcome), ephemeral=True)
        except discord.HTTPException as exc:
            log.warning("could not send the refresh result to the owner: %s", exc)

    def refresh_embed(self, outcome: ReloadOutcome | None) -> discord.Embed:
        """What a finished refresh says: its reload, or that nothing changed, and each source."""
        embed = self.status_embed()
        jobs = self.bot.refresher.jobs
        failed = sum(
            1 for job in jobs if (s := self.bot.refresher.sources.get(job.label)) and not s.ok
        )
        if failed:
            embed.title = f"Refresh finished: {failed} source{'' if failed == 1 else 's'} failed"
        elif outcome is None or outcome.ok:
            embed.title = "Sources refreshed"
        else:
            embed.title = "Refresh rejected"
        if outcome is None:
            embed.description = "No source brought anything new or changed: the corpus stays."
        else:
            embed.description = limits.truncate(outcome.summary(), limits.EMBED_DESCRIPTION)
        return embed

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
        run = refresher.current
        if run is not None:
            lines.append(
                f"⏳ Refresh running (by {run.source}, started "
                f"<t:{int(run.started.timestamp())}:R>): {refresher.stage()}"
            )
        for job in jobs[: limits.EMBED_FIELDS - 2]:
            live = run.state(job.label) if run is not None else None
            state = refresher.sources.get(job.label)
            if live is not None:
                lines.append(f"⏳ **{job.label}**: {live}")
            elif state is None:
                lines.append(f"**{job.label}**: not refreshed since the bot started")
            else:
                mark, result = ("✅", "done") if state.ok else ("❌", "failed")
                stamp = f"<t:{int(state.at.timestamp())}:R>"
                lines.append(f"{mark} **{job.label}** {stamp}: {result}: {state.text}")
        embed.add_field(
            name="Sources",
            value=limits.join_limited(lines, limits.FIELD_VALUE, sep="\n", more="and {n} more"),
            inline=False,
        )
        return render.finish(embed)


async def setup(bot: PaperBot) -> None:
    await bot.add_cog(Admin(bot))

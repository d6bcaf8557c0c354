"""The server's voice: `/top` (most saved and most reacted-to papers), reactions on the daily
post, and `/server venue` (Manage Server), the default venue of /search and /random.

Reactions come as raw gateway events (MESSAGE_REACTION_ADD/REMOVE), which need the
non-privileged `guild_reactions` intent (part of `Intents.default()`, so no portal switch) and
no message cache: a reaction on a week-old post still counts. Only reactions on messages that
are a server's daily post (their id is in the pick history) are kept; the bot's own are not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

import bot.library as library
from bot.app import markdown, refs, respond
from bot.app.checks import manager_group, manager_only, venue_autocomplete
from bot.app.exts.server.embeds import top_embed
from bot.app.results.pages import VENUE_MAX

if TYPE_CHECKING:
    from bot.app.client import PaperBot


class Server(commands.Cog):
    server = manager_group("server", "This server's settings for the bot (needs Manage Server)")

    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot

    @app_commands.command(name="top", description="This server's most saved and most liked papers")
    @app_commands.describe(period="Over the last week, month, or all time")
    @app_commands.choices(
        period=[app_commands.Choice(name=p, value=p) for p in ("week", "month", "all")]
    )
    @app_commands.guild_only()
    async def top(
        self,
        interaction: discord.Interaction[PaperBot],
        period: app_commands.Choice[str] | None = None,
    ) -> None:
        assert interaction.guild_id is not None
        span = period.value if period else "week"
        start = library.since(span, library.now())
        store = library.library_of(self.bot.storage)
        saved = await store.top_saved(interaction.guild_id, start, library.TOP_SIZE)
        reacted = await store.top_reacted(interaction.guild_id, start, library.TOP_SIZE)
        embed = top_embed(saved, reacted, self.bot.engine, span)
        await respond.send(interaction, embed=embed, ephemeral=self.bot.settings.discord.ephemeral)

    @server.command(
        name="venue", description="The venue /search and /random use when none is given"
    )
    @app_commands.describe(venue="A venue of the corpus; leave empty to search every venue again")
    @app_commands.autocomplete(venue=venue_autocomplete)
    @app_commands.check(manager_only)
    async def venue(
        self,
        interaction: discord.Interaction[PaperBot],
        venue: app_commands.Range[str, 1, VENUE_MAX] | None = None,
    ) -> None:
        assert interaction.guild_id is not None
        if venue is not None:
            venue = refs.find_venue(self.bot.engine, venue)  # an autocomplete key: its name
            self.bot.engine.resolve_venues(venue)  # unknown: a clear message, nothing saved
        await library.library_of(self.bot.storage).set_default_venue(
            interaction.guild_id, venue, library.now()
        )
        text = (
            f"/search and /random now look in **{markdown.escape(venue)}** unless a venue is "
            "given (`venue: all` searches everything once)."
            if venue
            else "No default venue: /search and /random look in every venue."
        )
        await respond.confirm(interaction, text)

    # -- reactions on the daily post ------------------------------------------------------------

    async def _daily_paper(self, payload: discord.RawReactionActionEvent) -> str | None:
        if payload.guild_id is None or self.bot.storage is None:
            return None
        if self.bot.user is not None and payload.user_id == self.bot.user.id:
            return None
        return await library.library_of(self.bot.storage).daily_post_paper(
            payload.guild_id, payload.message_id
        )

    @commands.Cog.listener()
    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        paper_id = await self._daily_paper(payload)
        if paper_id is not None and payload.guild_id is not None:
            await library.library_of(self.bot.storage).add_reaction(
                payload.guild_id,
                payload.message_id,
                paper_id,
                payload.user_id,
                str(payload.emoji),
                library.now(),
            )

    @commands.Cog.listener()
    async def on_raw_reaction_remove(self, payload: discord.RawReactionActionEvent) -> None:
        if await self._daily_paper(payload) is not None:
            await library.library_of(self.bot.storage).remove_reaction(
                payload.message_id, payload.user_id, str(payload.emoji)
            )


async def setup(bot: PaperBot) -> None:
    await bot.add_cog(Server(bot))

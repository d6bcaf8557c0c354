"""`/follow add|list|remove`: be told about new papers matching a query, by DM or in a channel.

A personal follow (no channel) notifies its owner by DM; a channel follow needs Manage Server
and posts in that channel. Notices go out when the corpus grows: after `/admin reload`, a
scheduled refresh (both swap the engine and dispatch `corpus_reloaded`) and at start (papers
added while the bot was down). The rules are in `bot.app.exts.follows.notify`; this cog wires them.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.ext import commands

import bot.library as library
from bot.app import markdown, respond
from bot.app.checks import manager_only, stored_autocomplete
from bot.app.exts.follows import notify
from bot.app.exts.follows.embeds import follows_embed
from bot.follows.store import Follows
from bot.search.results import EmptyQuery

if TYPE_CHECKING:
    from bot.app.client import PaperBot
    from bot.storage.store import Storage

log = logging.getLogger(__name__)
QUERY_MAX = 100


async def _removable(
    interaction: discord.Interaction[PaperBot], storage: Storage
) -> list[tuple[str, str]]:
    """The follows `/follow remove` accepts from this user as (query, id): their DM follows,
    and the server's channel follows for a manager."""
    follows = Follows(storage)
    found = await follows.personal(interaction.user.id)
    if interaction.guild_id is not None and interaction.permissions.manage_guild:
        found += await follows.of_guild(interaction.guild_id)
    return [
        (f.query if f.channel_id is None else f"{f.query} (channel)", f.follow_id) for f in found
    ]


follow_autocomplete = stored_autocomplete(_removable)


class FollowsCog(commands.Cog, name="Follows"):
    follow = app_commands.Group(
        name="follow", description="New papers matching a query, as they arrive"
    )

    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()

    def _follows(self) -> Follows:
        if self.bot.storage is None:
            raise library.Refused("Follows need the bot's database, which is not available.")
        return Follows(self.bot.storage)

    # -- notices --------------------------------------------------------------------------------

    async def cog_load(self) -> None:
        self._spawn(self._at_start())

    async def cog_unload(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro, name="follow-notices")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _at_start(self) -> None:
        await self.bot.wait_until_ready()
        await self.notify_now()

    async def notify_now(self) -> int:
        """One planning-and-delivery pass at a time (a reload during the start pass waits)."""
        async with self._lock:
            try:
                return await notify.run(self.bot)
            except Exception:  # a failed pass must not take the bot down; the next one retries
                log.exception("follow notices failed")
                return 0

    @commands.Cog.listener()
    async def on_corpus_reloaded(self, outcome: Any) -> None:
        if getattr(outcome, "ok", True):
            self._spawn(self.notify_now())

    # -- commands -------------------------------------------------------------------------------

    @follow.command(name="add", description="Get new papers matching a query (DM, or a channel)")
    @app_commands.describe(
        query='Search words; "a phrase", -exclude, author:name, venue:icml, year:2026 work',
        channel="Post in this channel instead of your DMs (needs Manage Server)",
    )
    async def add(
        self,
        interaction: discord.Interaction[PaperBot],
        query: app_commands.Range[str, 1, QUERY_MAX],
        channel: discord.TextChannel | None = None,
    ) -> None:
        query = " ".join(query.split())
        if not query:
            raise EmptyQuery()
        self.bot.engine.search(query, limit=1)  # bad syntax or venue: a clear message, nothing kept
        follows = self._follows()
        user = interaction.user.id
        per_user = self.bot.settings.library.follows_per_user
        per_server = self.bot.settings.library.follows_per_server
        if channel is not None:
            await manager_only(interaction)
            assert interaction.guild_id is not None
            existing = await follows.of_guild(interaction.guild_id)
            if len(existing) >= per_server:
                raise library.Refused(
                    f"This server already has {per_server} channel follows, the most allowed. "
                    "Remove one with /follow remove first."
                )
            same = [f for f in existing if f.channel_id == channel.id and f.query == query]
        else:
            existing = await follows.personal(user)
            if len(existing) >= per_user:
                raise library.Refused(
                    f"You already follow {per_user} queries, the most allowed. "
                    "Remove one with /follow remove first."
                )
            same = [f for f in existing if f.query == query]
        if same:
            raise library.Refused(f"Already followed: `{same[0].follow_id}` {query}.")
        made = await follows.add(
            user,
            query,
            library.now(),
            guild_id=interaction.guild_id if channel is not None else None,
            channel_id=channel.id if channel is not None else None,
        )
        where = channel.mention if channel is not None else "your DMs"
        text = (
            f"Following **{markdown.escape(query)}** (`{made.follow_id}`): new papers that match "
            f"will be posted in {where} when the corpus grows."
        )
        if channel is None:
            text += " Keep DMs from this server's members open, or the follow stops."
        await respond.confirm(interaction, text)

    @follow.command(name="list", description="Your follows and this server's channel follows")
    async def list_(self, interaction: discord.Interaction[PaperBot]) -> None:
        follows = self._follows()
        mine = await follows.personal(interaction.user.id)
        embed = follows_embed(mine, "🔔 Your follows")
        embeds = [embed]
        if interaction.guild_id is not None:
            server = await follows.of_guild(interaction.guild_id)
            if server:
                embeds.append(follows_embed(server, "🔔 This server's channel follows"))
        await interaction.response.send_message(embeds=embeds, ephemeral=True)

    @follow.command(name="remove", description="Stop a follow")
    @app_commands.describe(follow="The follow (start typing its query)")
    @app_commands.autocomplete(follow=follow_autocomplete)
    async def remove(
        self, interaction: discord.Interaction[PaperBot], follow: app_commands.Range[str, 1, 20]
    ) -> None:
        follows = self._follows()
        found = await follows.get(follow.strip().strip("`"))
        mine = (
            found is not None and found.channel_id is None and found.user_id == interaction.user.id
        )
        server = (
            found is not None
            and found.channel_id is not None
            and found.guild_id == interaction.guild_id
        )
        if found is None or not (mine or server):
            raise library.Refused(f"No follow {follow!r} of yours. `/follow list` shows them.")
        if server:
            await manager_only(interaction)
        await follows.remove(found.follow_id)
        await respond.confirm(interaction, f"Stopped following **{markdown.escape(found.query)}**.")


async def setup(bot: PaperBot) -> None:
    await bot.add_cog(FollowsCog(bot))

"""The server's voice: `/top` (most saved and most reacted-to papers), reactions on the daily
post, and `/server venue` (Manage Server), the default venue of /search and /random.

Reactions come as raw gateway events, which need the non-privileged `guild_reactions` and
`guild_messages` intents (both in `Intents.default()`, so no portal switch) and no message cache:
a reaction on a week-old post still counts. Only reactions on messages that are a server's daily
post (their id is in the pick history) are kept; the bot's own are not.

/top counts the reactions a daily post has now, as Discord shows it: a reaction taken back
(MESSAGE_REACTION_REMOVE), a post cleared of every reaction or of one emoji
(MESSAGE_REACTION_REMOVE_ALL / _EMOJI) and a deleted post (MESSAGE_DELETE, MESSAGE_DELETE_BULK)
count no more. A custom emoji is known by its id, which survives a rename.

Discord sends one message's events in order, but discord.py runs each listener as its own
task and a database call may be slow: an add still writing could land after the removal that
followed it and count a reaction nobody has. One lock keeps the handlers in gateway order
(they start in the order the events came, and asyncio's lock is first come, first served).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

import bot.library as library
import bot.links as links
from bot.app import installs, markdown, refs, respond
from bot.app.checks import manager_group, manager_only, stored_text, venue_autocomplete
from bot.app.exts.server.embeds import top_embed
from bot.app.results.pages import VENUE_MAX

if TYPE_CHECKING:
    from bot.app.client import PaperBot


class Server(commands.Cog):
    server = manager_group("server", "This server's settings for the bot (needs Manage Server)")

    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot
        self._in_order = asyncio.Lock()  # reaction and deletion events, handled in gateway order

    @app_commands.command(name="top", description="This server's most saved and most liked papers")
    @app_commands.describe(period="Over the last week, month, or all time")
    @app_commands.choices(
        period=[app_commands.Choice(name=p, value=p) for p in ("week", "month", "all")]
    )
    @installs.server_only
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
            stored_text(venue, "the venue")
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

    @server.command(name="links", description="Reply to messages that post paper links")
    @app_commands.describe(state="on: reply with the papers of arXiv/OpenReview/DOI links")
    @app_commands.choices(state=[app_commands.Choice(name=v, value=v) for v in ("on", "off")])
    @app_commands.check(manager_only)
    async def link_replies(
        self, interaction: discord.Interaction[PaperBot], state: app_commands.Choice[str]
    ) -> None:
        assert interaction.guild_id is not None
        on = state.value == "on"
        if on and not self.bot.settings.links.replies:
            raise library.Refused(
                "Link replies need the Message Content intent, which this bot does not ask "
                "for: its operator sets `[links] replies = true` in settings.toml and turns the "
                "intent on in the developer portal. **Find papers** (a message's Apps menu) "
                "works without it."
            )
        if self.bot.storage is None:
            raise library.Refused("Link replies need the bot's database, which is not available.")
        await links.LinkReplies(self.bot.storage).set(interaction.guild_id, on, library.now())
        self.bot.dispatch("link_replies_changed", interaction.guild_id, on)
        text = (
            "I'll reply to messages here that post arXiv, OpenReview or DOI links, with the "
            "papers (compact)."
            if on
            else "No more link replies here. **Find papers** on a message still works."
        )
        await respond.confirm(interaction, text)

    # -- reactions on the daily post ------------------------------------------------------------

    def _store(self) -> library.Library | None:
        """The reaction store, or None when the bot runs without its database."""
        return None if self.bot.storage is None else library.Library(self.bot.storage)

    @commands.Cog.listener()
    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        async with self._in_order:
            store = self._store()
            if store is None or payload.guild_id is None or self._is_me(payload.user_id):
                return
            paper_id = await store.daily_post_paper(payload.guild_id, payload.message_id)
            if paper_id is not None:
                await store.add_reaction(
                    payload.guild_id,
                    payload.message_id,
                    paper_id,
                    payload.user_id,
                    emoji_key(payload.emoji),
                    library.now(),
                )

    @commands.Cog.listener()
    async def on_raw_reaction_remove(self, payload: discord.RawReactionActionEvent) -> None:
        async with self._in_order:
            store = self._store()
            if store is not None and payload.guild_id is not None:
                await store.remove_reaction(
                    payload.message_id, payload.user_id, emoji_key(payload.emoji)
                )

    @commands.Cog.listener()
    async def on_raw_reaction_clear(self, payload: discord.RawReactionClearEvent) -> None:
        await self._forget(payload.guild_id, [payload.message_id])

    @commands.Cog.listener()
    async def on_raw_reaction_clear_emoji(
        self, payload: discord.RawReactionClearEmojiEvent
    ) -> None:
        await self._forget(payload.guild_id, [payload.message_id], emoji_key(payload.emoji))

    @commands.Cog.listener()
    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        await self._forget(payload.guild_id, [payload.message_id])

    @commands.Cog.listener()
    async def on_raw_bulk_message_delete(self, payload: discord.RawBulkMessageDeleteEvent) -> None:
        await self._forget(payload.guild_id, sorted(payload.message_ids))

    async def _forget(
        self, guild_id: int | None, message_ids: list[int], emoji: str | None = None
    ) -> None:
        """Reactions on these messages count no more (any message: a non-post has none)."""
        async with self._in_order:
            store = self._store()
            if store is not None and guild_id is not None:
                await store.clear_reactions(guild_id, message_ids, emoji)

    def _is_me(self, user_id: int) -> bool:
        return self.bot.user is not None and user_id == self.bot.user.id


def emoji_key(emoji: discord.PartialEmoji) -> str:
    """How a reaction's emoji is stored: a custom emoji by its id (its name may change between
    an add and its removal, and only some events say it is animated), a Unicode emoji as
    itself."""
    return str(emoji.id) if emoji.id is not None else emoji.name or ""


async def setup(bot: PaperBot) -> None:
    await bot.add_cog(Server(bot))

""" "Find papers" on any message, and the optional link replies of `/server links on`.

"Find papers" is a message context-menu command: Discord puts the message (its content
included) in the interaction's resolved data, so it needs no privileged intent, and it is
offered everywhere the member is (guild and user installs, servers, DMs, group DMs). The answer
is only for the member who asked: the papers as cards, those not in the corpus fetched from
arXiv or OpenReview (`bot.links.OnDemand`), and a Save button each.

Link replies read every message, so they need the Message Content intent: the bot asks for it
only when `[links] replies = true` (the client's intents), and replies only in servers that
turned them on (`/server links`, in the server cog, which tells this cog through the
`link_replies_changed` event). The servers with replies on are read once at start and kept in
memory: a message costs no database read. Quoted titles are left out of replies (quotes are
common in chat); links and ids are what a reply answers.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

import bot.links as links
from bot.app import installs, render, respond
from bot.app.exts.links.embeds import NOTHING, cards, view
from bot.papers.mentions import TITLE
from bot.storage.core import DatabaseBusy

if TYPE_CHECKING:
    from bot.app.client import PaperBot

log = logging.getLogger(__name__)
MENU_NAME = "Find papers"


def message_text(message: discord.Message) -> str:
    """The message's words and the URLs of its embeds (a link preview keeps the URL)."""
    parts = [message.content or ""]
    parts += [e.url for e in message.embeds if e.url]
    return "\n".join(parts)


class Links(commands.Cog):
    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot
        self.fetcher = links.OnDemand(bot.settings)
        self.enabled: set[int] = set()
        menu = app_commands.ContextMenu(name=MENU_NAME, callback=self.find_papers)
        self.menu = installs.anywhere(menu)

    async def cog_load(self) -> None:
        self.bot.tree.add_command(self.menu)
        if self.bot.settings.links.replies and self.bot.storage is not None:
            try:
                self.enabled = await links.LinkReplies(self.bot.storage).enabled_guilds()
            except DatabaseBusy:
                log.warning("link replies: the database is busy; none until a server sets them")

    async def cog_unload(self) -> None:
        self.bot.tree.remove_command(self.menu.name, type=self.menu.type)

    async def find_papers(
        self, interaction: discord.Interaction[PaperBot], message: discord.Message
    ) -> None:
        work = links.find_papers(message_text(message), self.bot.engine, self.fetcher)
        finding = await respond.soon(interaction, work, ephemeral=True)
        if not finding.found:
            await respond.send(interaction, embed=render.note_embed(NOTHING), ephemeral=True)
            return
        answer = view(finding)
        if answer is None:
            await respond.send(interaction, embeds=cards(finding), ephemeral=True)
        else:
            await respond.send(interaction, embeds=cards(finding), view=answer, ephemeral=True)

    @commands.Cog.listener()
    async def on_link_replies_changed(self, guild_id: int, enabled: bool) -> None:
        (self.enabled.add if enabled else self.enabled.discard)(guild_id)

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        guild = message.guild
        if guild is None or guild.id not in self.enabled or message.author.bot:
            return
        if not self.bot.settings.links.replies or not self.bot.owns_guild(guild.id):
            return
        finding = await links.find_papers(message_text(message), self.bot.engine, self.fetcher)
        finding.found = [f for f in finding.found if f.mention.kind != TITLE]
        if not finding.papers:
            return
        try:
            await message.reply(
                embeds=cards(finding, compact=True),
                view=view(finding) or discord.utils.MISSING,
                mention_author=False,
            )
        except discord.HTTPException as exc:  # no Send Messages here: the server's choice
            log.info("link reply in %s not sent: %s", message.channel.id, exc)


async def setup(bot: PaperBot) -> None:
    await bot.add_cog(Links(bot))

"""Persistent buttons of the library: its pages and the confirmation of `/library clear`.

Each is a `DynamicItem` whose custom_id holds all it needs, so it works after any number of
restarts:

    pb:lib:{page}             a page of the clicker's own library (◀ ▶)
    pb:forget:{user id}       the confirmation of /library clear (only that user may press it)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import discord

from bot.app import limits, render, respond
from bot.app.exts.library.embeds import library_embed
from bot.app.items import BotButton, BotItem, Match, pager
from bot.library import actions as library

if TYPE_CHECKING:
    from bot.app.client import PaperBot


def library_view(page: int, pages: int) -> discord.ui.View | None:
    if pages <= 1:
        return None
    view = discord.ui.View(timeout=None)
    for button in pager(LibraryPageButton, page, pages):
        view.add_item(button)
    return view


class LibraryPageButton(BotButton, template=r"pb:lib:(?P<page>\d{1,5})"):
    """◀ ▶ of `/library show`: always the clicker's own library (the reply is theirs only)."""

    def __init__(self, page: int, label: str = "▶") -> None:
        super().__init__(limits.custom_id("pb", "lib", page), label=label)
        self.page = page

    @classmethod
    def from_match(cls, match: Match) -> LibraryPageButton:
        return cls(int(match["page"]))

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        await show_library(interaction, self.page, edit=True)


async def show_library(
    interaction: discord.Interaction[PaperBot], page: int, *, edit: bool
) -> None:
    bot = interaction.client
    store = library.library_of(bot.storage)
    view = await library.load_page(store, interaction.user.id, page)
    embed = library_embed(view, bot.engine)
    buttons = library_view(view.page, view.pages)
    await respond.send(
        interaction,
        embed=embed,
        view=(buttons or discord.ui.View(timeout=None)) if edit else buttons,
        ephemeral=True,
        edit=edit,
    )


class ForgetButton(BotButton, template=r"pb:forget:(?P<user>\d{1,20})"):
    """The confirmation of `/library clear`; only the reader who asked can press it."""

    LABEL = "Delete my data"
    STYLE = discord.ButtonStyle.danger
    EMOJI = "🗑️"

    def __init__(self, user_id: int) -> None:
        super().__init__(limits.custom_id("pb", "forget", user_id))
        self.user_id = user_id

    @classmethod
    def from_match(cls, match: Match) -> ForgetButton:
        return cls(int(match["user"]))

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        if interaction.user.id != self.user_id:
            raise library.Refused("This button belongs to someone else's /library clear.")
        bot = interaction.client
        counts = await library.library_of(bot.storage).forget_user(self.user_id)
        done = ", ".join(f"{n} {kind}" for kind, n in counts.items())
        embed = render.note_embed(f"Deleted: {done}. Nothing about you is left.")
        await respond.send(interaction, embed=embed, view=discord.ui.View(timeout=None), edit=True)


ITEMS: tuple[type[BotItem[Any]], ...] = (LibraryPageButton, ForgetButton)

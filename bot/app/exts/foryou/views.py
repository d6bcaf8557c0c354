"""The buttons of a `/foryou` page: 👍 and 👎 for each paper (numbered as listed; the
persistent `bot.app.results.rating` buttons) and ◀ ▶.

    pb:fy:{page}              a page of the clicker's own For you (the reply is theirs only)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import discord

from bot.app import limits, respond
from bot.app.exts.foryou.embeds import foryou_embed
from bot.app.items import BotButton, BotItem, Match, pager
from bot.app.results.rating import rating_buttons
from bot.follows import FOR_YOU, Follows
from bot.foryou import PAGE, ForYouPage, load_page, ratings_of
from bot.library import library_of, now

if TYPE_CHECKING:
    from bot.app.client import PaperBot


def foryou_view(view: ForYouPage) -> discord.ui.View:
    """Row 0: 👍 per paper, row 1: 👎 per paper, row 2: ◀ ▶ (when there are pages)."""
    buttons = discord.ui.View(timeout=None)
    for i, item in enumerate(view.items, start=(view.page - 1) * PAGE + 1):
        for row, button in enumerate(rating_buttons(item.paper.id)):
            assert isinstance(button, BotButton)
            button.item.label = str(i)
            button.item.row = row
            buttons.add_item(button)
    if view.pages > 1:
        for button in pager(ForYouPageButton, view.page, view.pages, row=2):
            buttons.add_item(button)
    return buttons


class ForYouPageButton(BotButton, template=r"pb:fy:(?P<page>\d{1,4})"):
    """◀ ▶ of `/foryou`: always the clicker's own page."""

    def __init__(self, page: int, label: str = "▶") -> None:
        super().__init__(limits.custom_id("pb", "fy", page), label=label)
        self.page = page

    @classmethod
    def from_match(cls, match: Match) -> ForYouPageButton:
        return cls(int(match["page"]))

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        await show_foryou(interaction, self.page, edit=True)


async def show_foryou(interaction: discord.Interaction[PaperBot], page: int, *, edit: bool) -> None:
    """The member's page of For you, as a reply only they see (or in place)."""
    bot = interaction.client
    library = library_of(bot.storage)
    storage = library.storage
    queries = [
        f.query for f in await Follows(storage).personal(interaction.user.id) if f.query != FOR_YOU
    ]
    view = await load_page(
        library, ratings_of(storage), bot.engine, interaction.user.id, queries, page, now()
    )
    await respond.send(
        interaction,
        embed=foryou_embed(view, bool(queries)),
        view=foryou_view(view),
        ephemeral=True,
        edit=edit,
    )


ITEMS: tuple[type[BotItem[Any]], ...] = (ForYouPageButton,)

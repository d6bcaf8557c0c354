"""Persistent buttons of the library and follows: Save, library pages, and a notice's pages.

Like `bot.app.components`, each is a `DynamicItem` whose custom_id holds all it needs, so a Save
button under a week-old daily post still works after any number of restarts:

    pb:save:{paper}           save this paper to the clicker's library (ephemeral answer); the
                              id, or its key when too long (`bot.app.refs`)
    pb:lib:{page}             a page of the clicker's own library (◀ ▶)
    pb:fb:{batch}:{page}      a page of a follow notification (◀ ▶): the batch's papers are in
                              storage (`deliveries`), in the order the notice listed them
    pb:forget:{user id}       the confirmation of /library clear (only that user may press it)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import discord

from bot.app import library, limits, render, respond
from bot.app.items import BotButton, BotItem, Button, Match, PaperButton
from bot.follows.store import Follows

if TYPE_CHECKING:
    from bot.app.client import PaperBot

NOTICE_PAGE = 10  # papers per follow notification page
NOTICE_TITLE = re.compile(r"^🆕 New papers for “(.*)”$", re.S)


def save_button(paper_id: str) -> SaveButton | None:
    """The Save button for a paper (a long id travels as its key, so every paper has one)."""
    return SaveButton(paper_id)


def save_view(paper_id: str) -> discord.ui.View:
    """A view holding only the Save button (the daily post, /today)."""
    view = discord.ui.View(timeout=None)
    button = save_button(paper_id)
    if button is not None:
        view.add_item(button)
    return view


def pager(
    make: Callable[[int, str], BotItem[Button]], page: int, pages: int, *, row: int = 0
) -> list[BotItem[Button]]:
    """◀ ▶ for page `page` of `pages`, built by `make(target page, label)`; disabled at the ends."""
    buttons = []
    for target, label in ((page - 1, "◀"), (page + 1, "▶")):
        button = make(max(0, min(target, pages + 1)), label)
        button.item.disabled = not 1 <= target <= pages
        button.item.row = row
        buttons.append(button)
    return buttons


def library_view(page: int, pages: int) -> discord.ui.View | None:
    if pages <= 1:
        return None
    view = discord.ui.View(timeout=None)
    for button in pager(LibraryPageButton, page, pages):
        view.add_item(button)
    return view


def notice_view(batch: str, page: int, pages: int) -> discord.ui.View | None:
    if pages <= 1:
        return None
    view = discord.ui.View(timeout=None)
    for button in pager(lambda p, label: NoticePageButton(batch, p, label), page, pages):
        view.add_item(button)
    return view


class SaveButton(PaperButton, template=re.compile(r"pb:save:(?P<ref>.+)", re.S)):
    """Save under a paper: adds it to the clicker's library; the answer only they see."""

    HEAD = "save"
    LABEL = "Save"
    EMOJI = "📚"

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        bot = interaction.client
        store = library.library_of(bot.storage)
        paper, new = await library.save(
            store,
            bot.engine,
            interaction.user.id,
            self.paper_ref,
            interaction.guild_id,
            max_saved=bot.settings.library.max_saved,
        )
        await respond.send(interaction, content=library.saved_text(paper, new), ephemeral=True)


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
    embed = library.library_embed(view, bot.engine)
    buttons = library_view(view.page, view.pages)
    await respond.send(
        interaction,
        embed=embed,
        view=(buttons or discord.ui.View(timeout=None)) if edit else buttons,
        ephemeral=True,
        edit=edit,
    )


class NoticePageButton(BotButton, template=r"pb:fb:(?P<batch>[0-9a-f]{1,32}):(?P<page>\d{1,4})"):
    """◀ ▶ under a follow notification: the other papers of the same batch."""

    def __init__(self, batch: str, page: int, label: str = "▶") -> None:
        super().__init__(limits.custom_id("pb", "fb", batch, page), label=label)
        self.batch = batch
        self.page = page

    @classmethod
    def from_match(cls, match: Match) -> NoticePageButton:
        return cls(match["batch"], int(match["page"]))

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        bot = interaction.client
        if bot.storage is None:
            raise library.Refused("This notice can no longer be paged (no database).")
        ids = await Follows(bot.storage).batch(self.batch)
        papers = [p for p in (library.find(bot.engine, pid) for pid in ids) if p is not None]
        if not papers:
            raise library.Refused("These papers are no longer in the corpus.")
        query = notice_query(interaction.message)
        pages = max(1, -(-len(papers) // NOTICE_PAGE))
        page = max(1, min(self.page, pages))
        embed = library.notice_embed(query, papers, page, len(papers), NOTICE_PAGE)
        await respond.send(
            interaction, embed=embed, view=notice_view(self.batch, page, pages), edit=True
        )


def notice_query(message: discord.Message | None) -> str:
    """The follow's query, read back from the notice's title."""
    if message is not None and message.embeds:
        match = NOTICE_TITLE.match(message.embeds[0].title or "")
        if match:
            return match.group(1)
    return "your follow"


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


DYNAMIC_ITEMS: tuple[type[BotItem[Any]], ...] = (
    SaveButton,
    LibraryPageButton,
    NoticePageButton,
    ForgetButton,
)

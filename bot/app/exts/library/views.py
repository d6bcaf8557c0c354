"""Persistent components of the library: its pages, marking read and removing without typing,
and the confirmation of `/library clear`.

Each is a `DynamicItem` whose custom_id holds all it needs, so it works after any number of
restarts:

    pb:lib:{page}                          a page of the clicker's own library (◀ ▶)
    pb:lpick:{user}:{page}                 the menu of the page's papers: picking one arms the
                                           buttons below it (the page is edited in place)
    pb:lread:{user}:{page}:{0|1}:{paper}   mark the picked paper read (1) or unread (0)
    pb:lrm:{user}:{page}:{paper}           remove the picked paper
    pb:forget:{user id}                    the confirmation of /library clear

A paper travels as its id, or its key when the id is too long (`bot.app.refs`); the page shows
titles only, never ids. Only the library's owner may use its components: anyone else gets an
ephemeral refusal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import discord

from bot.app import limits, markdown, refs, render, respond
from bot.app.exts.library.embeds import library_embed
from bot.app.items import BotButton, BotItem, Match, PaperMenu, pager
from bot.library import actions as library
from bot.library.store import Library

if TYPE_CHECKING:
    from bot.app.client import PaperBot
    from bot.search.engine import SearchEngine

NONE = "-"  # the paper part of a button's custom_id while no paper is picked
OWNER_ONLY = "This is someone else's library: `/library show` opens yours."


def library_view(
    view: library.LibraryPage, engine: SearchEngine, user_id: int, picked: str | None = None
) -> discord.ui.View | None:
    """Row 0: the page's papers to pick from; row 1: Mark read (or unread) and Remove for the
    picked one (disabled until a paper is picked); row 2: ◀ ▶ when there are more pages."""
    if not view.items:
        return None
    buttons = discord.ui.View(timeout=None)
    buttons.add_item(PickMenu(user_id, view, engine, picked))
    chosen = next((i for i in view.items if picked in (i.paper_id, paper_ref(i.paper_id))), None)
    ref = paper_ref(chosen.paper_id) if chosen else NONE
    read = ReadButton(user_id, view.page, not (chosen and chosen.read), ref)
    remove = RemoveButton(user_id, view.page, ref)
    for button in (read, remove):
        button.item.disabled = chosen is None
        buttons.add_item(button)
    if view.pages > 1:
        for page_button in pager(LibraryPageButton, view.page, view.pages, row=2):
            buttons.add_item(page_button)
    return buttons


def paper_ref(paper_id: str) -> str:
    """A saved paper as its components carry it (room for the longest head, `pb:lread`)."""
    return refs.ref_for(paper_id, limits.custom_id_room("pb", "lread", 10**20, 99999, 1))


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
    interaction: discord.Interaction[PaperBot],
    page: int,
    *,
    edit: bool,
    picked: str | None = None,
    note: str | None = None,
) -> None:
    bot = interaction.client
    store = library.library_of(bot.storage)
    view = await library.load_page(store, interaction.user.id, page)
    embed = library_embed(view, bot.engine)
    buttons = library_view(view, bot.engine, interaction.user.id, picked)
    await respond.send(
        interaction,
        content=note if edit else None,
        embed=embed,
        view=(buttons or discord.ui.View(timeout=None)) if edit else buttons,
        ephemeral=True,
        edit=edit,
    )


def _own(interaction: discord.Interaction[PaperBot], user_id: int) -> None:
    if interaction.user.id != user_id:
        raise library.Refused(OWNER_ONLY)


async def _saved_id(store: Library, user_id: int, ref: str) -> str:
    """The saved paper a component names (its id or key), even one no longer in the corpus."""
    for item in await store.all(user_id):
        if ref in (item.paper_id, paper_ref(item.paper_id)):
            return item.paper_id
    raise library.Refused("That paper is no longer in your library.")


def _plain(engine: SearchEngine | None, paper_id: str) -> str:
    """A saved paper's title as people read it (its id once it left the corpus)."""
    paper = library.find(engine, paper_id) if engine is not None else None
    return limits.truncate(render.title_text(paper) if paper is not None else paper_id, 200)


def title_of(engine: SearchEngine, paper_id: str) -> str:
    """A saved paper's title, escaped for markdown."""
    return markdown.escape(_plain(engine, paper_id))


class PickMenu(
    PaperMenu,
    template=r"pb:lpick:(?P<user>\d{1,20}):(?P<page>\d{1,5})",
):
    """The page's papers: the one picked is what Mark read and Remove act on."""

    def __init__(
        self,
        user_id: int,
        view: library.LibraryPage | None = None,
        engine: SearchEngine | None = None,
        picked: str | None = None,
        page: int = 1,
    ) -> None:
        options = []
        first = ((view.page if view else page) - 1) * library.PAGE_SIZE + 1
        for n, item in enumerate(view.items if view else [], first):
            ref = paper_ref(item.paper_id)
            options.append(
                discord.SelectOption(
                    label=limits.truncate(
                        f"{n}. {_plain(engine, item.paper_id)}", limits.OPTION_LABEL
                    ),
                    value=ref,
                    description="✅ read" if item.read else "🔵 unread",
                    default=picked in (ref, item.paper_id),
                )
            )
        cid = limits.custom_id("pb", "lpick", user_id, view.page if view else page)
        super().__init__(cid, options, "Pick a paper to mark read or remove…")
        self.user_id = user_id
        self.page = view.page if view else page

    @classmethod
    def restore(
        cls, interaction: discord.Interaction[PaperBot], item: discord.ui.Item[Any], match: Match
    ) -> PickMenu:
        menu = cls.kept(item)
        menu.user_id, menu.page = int(match["user"]), int(match["page"])
        return menu

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        _own(interaction, self.user_id)
        await show_library(interaction, self.page, edit=True, picked=self.chosen(interaction))


class ReadButton(
    BotButton,
    template=r"pb:lread:(?P<user>\d{1,20}):(?P<page>\d{1,5}):(?P<read>[01]):(?P<ref>.+)",
):
    """Mark the picked paper read (or unread again)."""

    STYLE = discord.ButtonStyle.success

    def __init__(self, user_id: int, page: int, read: bool, ref: str) -> None:
        cid = limits.custom_id("pb", "lread", user_id, page, int(read), ref)
        super().__init__(cid, label="✅ Mark read" if read else "🔵 Mark unread", row=1)
        self.user_id, self.page, self.read, self.ref = user_id, page, read, ref

    @classmethod
    def from_match(cls, match: Match) -> ReadButton:
        return cls(int(match["user"]), int(match["page"]), match["read"] == "1", match["ref"])

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        _own(interaction, self.user_id)
        store = library.library_of(interaction.client.storage)
        paper_id = await _saved_id(store, self.user_id, self.ref)
        await store.mark_read(self.user_id, paper_id, library.now(), self.read)
        state = "read ✅" if self.read else "unread 🔵"
        note = f"Marked **{title_of(interaction.client.engine, paper_id)}** as {state}."
        await show_library(interaction, self.page, edit=True, picked=self.ref, note=note)


class RemoveButton(BotButton, template=r"pb:lrm:(?P<user>\d{1,20}):(?P<page>\d{1,5}):(?P<ref>.+)"):
    """Remove the picked paper from the library."""

    LABEL = "Remove"
    STYLE = discord.ButtonStyle.danger
    EMOJI = "🗑️"

    def __init__(self, user_id: int, page: int, ref: str) -> None:
        super().__init__(limits.custom_id("pb", "lrm", user_id, page, ref), row=1)
        self.user_id, self.page, self.ref = user_id, page, ref

    @classmethod
    def from_match(cls, match: Match) -> RemoveButton:
        return cls(int(match["user"]), int(match["page"]), match["ref"])

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        _own(interaction, self.user_id)
        store = library.library_of(interaction.client.storage)
        paper_id = await _saved_id(store, self.user_id, self.ref)
        await store.remove(self.user_id, paper_id)
        note = f"Removed **{title_of(interaction.client.engine, paper_id)}** from your library."
        await show_library(interaction, self.page, edit=True, note=note)


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


ITEMS: tuple[type[BotItem[Any]], ...] = (
    LibraryPageButton,
    PickMenu,
    ReadButton,
    RemoveButton,
    ForgetButton,
)

"""The Save button under every paper view (a search hit opened, /paper, /random, /today, the
daily post): adds the paper to the presser's library; the answer only they see.

    pb:save:{paper}           the id, or its key when too long (`bot.app.refs`)
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import discord

from bot.app import limits, markdown, refs, render, respond
from bot.app.items import PaperButton
from bot.config import LibrarySettings
from bot.library.actions import Refused, library_of, now
from bot.library.store import Library
from bot.papers.records import Paper

if TYPE_CHECKING:
    from bot.app.client import PaperBot
    from bot.search.engine import SearchEngine


def save_button(paper_id: str) -> SaveButton | None:
    """The Save button for a paper (a long id travels as its key, so every paper has one)."""
    return SaveButton(paper_id)


class SaveButton(PaperButton, template=re.compile(r"pb:save:(?P<ref>.+)", re.S)):
    """Save under a paper: adds it to the clicker's library; the answer only they see."""

    HEAD = "save"
    LABEL = "Save"
    EMOJI = "📚"

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        bot = interaction.client
        store = library_of(bot.storage)
        paper, new = await save(
            store,
            bot.engine,
            interaction.user.id,
            self.paper_ref,
            interaction.guild_id,
            max_saved=bot.settings.library.max_saved,
        )
        await respond.send(interaction, content=saved_text(paper, new), ephemeral=True)


async def save(
    library: Library,
    engine: SearchEngine,
    user_id: int,
    ref: str,
    guild_id: int | None = None,
    *,
    max_saved: int = LibrarySettings().max_saved,
) -> tuple[Paper, bool]:
    """Save a paper (by id, key or title); (paper, newly saved). Saving twice changes nothing.
    `max_saved` is [library] max_saved."""
    paper = refs.find_paper(engine, ref)
    for alias in paper.aliases:  # saved before under another id of this (merged) paper
        if await library.get(user_id, alias) is not None:
            return paper, False
    if await library.get(user_id, paper.id) is None and await library.count(user_id) >= max_saved:
        raise Refused(
            f"Your library is full ({max_saved} papers). Remove some with /library remove "
            "or export and clear it."
        )
    return paper, await library.save(user_id, paper.id, now(), guild_id)


def saved_text(paper: Paper, new: bool) -> str:
    title = limits.truncate(render.title_text(paper), 200)
    if new:
        return f"📚 Saved **{markdown.escape(title)}** to your library (`/library show`)."
    return f"📚 **{markdown.escape(title)}** is already in your library."


ITEMS = (SaveButton,)

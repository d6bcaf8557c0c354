"""👍 / 👎 under every paper card: "more like this" and "not for me", the member's ratings that
For you learns from (`bot.foryou`). A 👎 paper is never shown to that member again; pressing
the same one again takes the rating back. The answer only the presser sees; nobody else (no
other member, no server) can read a member's ratings.

    pb:up:{paper}             the id, or its key when too long (`bot.app.refs`)
    pb:down:{paper}

Other views add these with `rating_buttons(paper_id)`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar

import discord

from bot.app import limits, markdown, refs, render, respond
from bot.app.items import PaperButton
from bot.foryou import DOWN, UP, Ratings, ratings_of
from bot.library import now
from bot.papers.records import Paper

if TYPE_CHECKING:
    from bot.app.client import PaperBot


def rating_buttons(paper_id: str) -> list[discord.ui.Item[Any]]:
    """👍 and 👎 for one paper, to append to a paper's view."""
    return [MoreLikeThis(paper_id), NotForMe(paper_id)]


class _RateButton(PaperButton, template=r"(?!)"):
    RATING: ClassVar[int]

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        bot = interaction.client
        paper = refs.find_paper(bot.engine, self.paper_ref)
        stored = await ratings_of(bot.storage).rate(
            interaction.user.id, paper.id, self.RATING, now()
        )
        await respond.send(interaction, content=rated_text(paper, stored), ephemeral=True)


class MoreLikeThis(_RateButton, template=re.compile(r"pb:up:(?P<ref>.+)", re.S)):
    """👍: more papers like this one in the presser's For you."""

    HEAD = "up"
    RATING = UP
    EMOJI = "👍"


class NotForMe(_RateButton, template=re.compile(r"pb:down:(?P<ref>.+)", re.S)):
    """👎: this paper never comes back to the presser, and fewer like it."""

    HEAD = "down"
    RATING = DOWN
    EMOJI = "👎"


def rated_text(paper: Paper, stored: int | None) -> str:
    shown = markdown.escape(limits.truncate(render.title_text(paper), 200))
    if stored == UP:
        return f"👍 Noted: more like **{shown}** in `/foryou`."
    if stored == DOWN:
        return f"👎 Noted: **{shown}** will not be shown to you again."
    return f"Your rating of **{shown}** is taken back."


async def hidden_from(interaction: discord.Interaction[PaperBot]) -> set[str]:
    """The papers the asking member said 👎 to, left out of what they are shown (`/new`);
    nothing without a database."""
    storage = interaction.client.storage
    return set() if storage is None else await Ratings(storage).rejected(interaction.user.id)


async def remember_shown(
    interaction: discord.Interaction[PaperBot], paper_ids: list[str], via: str
) -> None:
    """Record papers a member was shown (`/new`), so no feed pushes them to them again."""
    storage = interaction.client.storage
    if storage is not None and paper_ids:
        await Ratings(storage).mark_shown(interaction.user.id, paper_ids, via, now())


ITEMS = (MoreLikeThis, NotForMe)

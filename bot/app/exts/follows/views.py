"""Persistent buttons of follow notices: the pages of one batch of new papers.

pb:fb:{batch}:{page}[:{cap}]  a page of a follow notification (◀ ▶): the batch's papers
                          are in storage (`deliveries`), in the order the notice listed them;
                          a page reads only its own papers (a batch can hold 10,000); `cap`
                          is the feed's papers per message (absent: NOTICE_PAGE)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import discord

from bot.app import limits, respond
from bot.app.exts.follows.embeds import NOTICE_TITLE, notice_embed
from bot.app.items import BotButton, BotItem, Match, pager
from bot.follows.notices import notice_marker
from bot.follows.store import Follows
from bot.library import Refused, find

if TYPE_CHECKING:
    from bot.app.client import PaperBot


NOTICE_PAGE = 10  # papers per follow notification page


def notice_view(
    batch: str, page: int, pages: int, cap: int = NOTICE_PAGE
) -> discord.ui.View | None:
    if pages <= 1:
        return None
    view = discord.ui.View(timeout=None)
    for button in pager(lambda p, label: NoticePageButton(batch, p, label, cap), page, pages):
        view.add_item(button)
    return view


class NoticePageButton(
    BotButton,
    template=r"pb:fb:(?P<batch>[0-9a-f]{1,32}):(?P<page>\d{1,7})(?::(?P<cap>[1-9]\d?))?",
):
    """◀ ▶ under a follow notification: the other papers of the same batch."""

    def __init__(self, batch: str, page: int, label: str = "▶", cap: int = NOTICE_PAGE) -> None:
        parts: tuple[str | int, ...] = (batch, page) if cap == NOTICE_PAGE else (batch, page, cap)
        super().__init__(limits.custom_id("pb", "fb", *parts), label=label)
        self.batch = batch
        self.page = page
        self.cap = max(1, min(cap, NOTICE_PAGE))

    @classmethod
    def from_match(cls, match: Match) -> NoticePageButton:
        return cls(match["batch"], int(match["page"]), cap=int(match["cap"] or NOTICE_PAGE))

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        bot = interaction.client
        if bot.storage is None:
            raise Refused("This notice can no longer be paged (no database).")
        follows = Follows(bot.storage)
        total = await follows.batch_size(self.batch)
        cap = self.cap
        pages = max(1, -(-total // cap))
        page = max(1, min(self.page, pages))
        ids = await follows.batch_page(self.batch, (page - 1) * cap, cap)
        papers = [p for p in (find(bot.engine, pid) for pid in ids) if p is not None]
        if not papers:
            raise Refused("These papers are no longer in the corpus.")
        query = notice_query(interaction.message)
        embed = notice_embed(query, papers, page, total, cap, notice_marker(self.batch))
        await respond.send(
            interaction, embed=embed, view=notice_view(self.batch, page, pages, cap), edit=True
        )


def notice_query(message: discord.Message | None) -> str:
    """The follow's query, read back from the notice's title."""
    if message is not None and message.embeds:
        match = NOTICE_TITLE.match(message.embeds[0].title or "")
        if match:
            return match.group(1)
    return "your follow"


ITEMS: tuple[type[BotItem[Any]], ...] = (NoticePageButton,)

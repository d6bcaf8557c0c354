"""Persistent components of follow notices: act on a paper where it is announced.

Each holds what it needs in its custom_id, so it works after any number of restarts:

    pb:fb:{batch}:{page}[:{cap}]  a page of the notice (◀ ▶): the batch's papers are in
                               storage (`deliveries`), in the order the notice listed them; a
                               page reads only its own papers (a batch can hold 10,000); `cap`
                               is the feed's papers per message (absent: NOTICE_PAGE)
    pb:fsave                   "Save a paper…": the page's papers (a value is a paper id or
                               its key); one paper alone gets the plain Save button instead
    pb:fstop:{follow}:{batch}  stop following: only the follower (a channel follow: a member
                               with Manage Server there); the batch marks the message as this
                               notice's, so a resend after a crash finds it (`notify`) without
                               a token in the footer

Under each page: row 0 the Save menu (or button), rows 1-2 one "Open N" link per paper, row 3
◀ ▶ and Stop following. At `NOTICE_PAGE` papers that is 1 + 10 + 3 components in 4 rows,
within Discord's 5 buttons a row, 5 rows and 25 options a menu.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import discord

from bot.app import limits, markdown, refs, render, respond
from bot.app.exts.follows.embeds import NOTICE_TITLE, notice_embed
from bot.app.items import BotButton, BotItem, Button, Match, PaperMenu, pager
from bot.app.results.saving import SaveButton, save, saved_text
from bot.follows.store import Follow, Follows
from bot.library import Refused, find, library_of
from bot.papers.records import Paper

if TYPE_CHECKING:
    from bot.app.client import PaperBot


NOTICE_PAGE = 10  # papers per follow notification page
OPEN_ROWS = (1, 2)  # the "Open N" links, 5 a row


def notice_view(
    batch: str,
    page: int,
    pages: int,
    papers: Sequence[Paper],
    follow_id: str,
    cap: int = NOTICE_PAGE,
) -> discord.ui.View:
    """Save (a menu of the page's papers, or a button for one), an "Open N" link per paper
    numbered as the notice lists it, ◀ ▶ when there are more pages, and Stop following."""
    view = discord.ui.View(timeout=None)
    cap = max(1, min(cap, NOTICE_PAGE))
    shown = list(papers[:cap])
    if len(shown) == 1:
        save_button = SaveButton(shown[0].id)
        save_button.row = 0
        view.add_item(save_button)
    elif shown:
        view.add_item(NoticeSaveMenu(shown, (page - 1) * cap + 1))
    for item in open_links(shown, (page - 1) * cap + 1):
        view.add_item(item)
    if pages > 1:
        pages_of = pager(
            lambda p, label: NoticePageButton(batch, p, label, cap), page, pages, row=3
        )
        for button in pages_of:
            view.add_item(button)
    view.add_item(StopFollowButton(follow_id, batch))
    return view


def open_links(papers: Sequence[Paper], first: int) -> list[Button]:
    """ "Open N" link buttons (N as the notice numbers the paper), for papers with a page."""
    links: list[Button] = []
    for number, paper in enumerate(papers, first):
        url = paper.link("page") or paper.link("pdf")
        if url and len(url) <= limits.LINK_URL and len(links) < 5 * len(OPEN_ROWS):
            row = OPEN_ROWS[len(links) // 5]
            links.append(discord.ui.Button(label=f"Open {number}", url=url, row=row))
    return links


def carries_batch(custom_ids: Sequence[str], batch: str) -> bool:
    """Whether a message's components mark it as the notice of `batch`."""
    return any(cid.startswith("pb:fstop:") and cid.endswith(f":{batch}") for cid in custom_ids)


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
        follows = follows_of(bot, "This notice can no longer be paged (no database).")
        total = await follows.batch_size(self.batch)
        cap = self.cap
        pages = max(1, -(-total // cap))
        page = max(1, min(self.page, pages))
        ids = await follows.batch_page(self.batch, (page - 1) * cap, cap)
        papers = [p for p in (find(bot.engine, pid) for pid in ids) if p is not None]
        if not papers:
            raise Refused("These papers are no longer in the corpus.")
        record = await follows.outbox.notice(self.batch)
        follow_id = record.follow_id if record is not None else stop_id(interaction.message)
        embed = notice_embed(notice_query(interaction.message), papers, page, total, cap)
        view = notice_view(self.batch, page, pages, papers, follow_id, cap)
        await respond.send(interaction, embed=embed, view=view, edit=True)


class NoticeSaveMenu(PaperMenu, template=r"pb:fsave"):
    """ "Save a paper…" under a notice: the chosen paper goes to the clicker's library."""

    def __init__(self, papers: Sequence[Paper] = (), first: int = 1) -> None:
        options = [
            discord.SelectOption(
                label=limits.truncate(f"{n}. {render.title_text(p)}", limits.OPTION_LABEL),
                value=refs.ref_for(p.id, limits.OPTION_VALUE),
                emoji="📚",
            )
            for n, p in enumerate(papers[: limits.SELECT_OPTIONS], first)
        ]
        super().__init__(limits.custom_id("pb", "fsave"), options, "📚 Save a paper…")

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        bot = interaction.client
        paper, new = await save(
            library_of(bot.storage),
            bot.engine,
            interaction.user.id,
            self.chosen(interaction),
            interaction.guild_id,
            max_saved=bot.settings.library.max_saved,
        )
        await respond.send(interaction, content=saved_text(paper, new), ephemeral=True)


class StopFollowButton(
    BotButton, template=r"pb:fstop:(?P<follow>[A-Za-z0-9_-]{1,20}):(?P<batch>[0-9a-f]{1,32})"
):
    """Stop following, under the follow's own notices: only its follower may press it."""

    LABEL = "Stop following"
    EMOJI = "🔕"

    def __init__(self, follow_id: str, batch: str) -> None:
        super().__init__(limits.custom_id("pb", "fstop", follow_id, batch), row=3)
        self.follow_id = follow_id

    @classmethod
    def from_match(cls, match: Match) -> StopFollowButton:
        return cls(match["follow"], match["batch"])

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        follows = follows_of(interaction.client, "Follows are unavailable (no database).")
        follow = await follows.get(self.follow_id)
        if follow is None:
            raise Refused("This follow was already stopped. `/follow list` shows yours.")
        if not may_stop(interaction, follow):
            raise Refused(
                "Only who follows this can stop it"
                + (" (a channel follow: members with Manage Server)." if follow.channel_id else ".")
            )
        await follows.remove(follow.follow_id)
        text = f"Stopped following **{markdown.escape(follow.query)}**. No more notices for it."
        await respond.send(interaction, embed=render.note_embed(text), ephemeral=True)


def follows_of(bot: PaperBot, without: str) -> Follows:
    """The bot's follows, or `without` as the answer when it runs with no database."""
    if bot.storage is None:
        raise Refused(without)
    return Follows(bot.storage)


def may_stop(interaction: discord.Interaction[PaperBot], follow: Follow) -> bool:
    """The follower of a personal follow; for a channel follow, a member of its server with
    Manage Server (as `/follow remove` asks)."""
    if follow.channel_id is None:
        return interaction.user.id == follow.user_id
    return interaction.guild_id == follow.guild_id and interaction.permissions.manage_guild


STOP_ID = re.compile(r"pb:fstop:([A-Za-z0-9_-]{1,20}):")


def stop_id(message: discord.Message | None) -> str:
    """The follow id back from a notice's Stop following button (its record may be gone)."""
    for row in message.components if message is not None else []:
        for child in getattr(row, "children", []):
            found = STOP_ID.match(getattr(child, "custom_id", None) or "")
            if found:
                return found.group(1)
    return "-"


def notice_query(message: discord.Message | None) -> str:
    """The follow's query, read back from the notice's title."""
    if message is not None and message.embeds:
        match = NOTICE_TITLE.match(message.embeds[0].title or "")
        if match:
            return match.group(1)
    return "your follow"


ITEMS: tuple[type[BotItem[Any]], ...] = (NoticePageButton, NoticeSaveMenu, StopFollowButton)

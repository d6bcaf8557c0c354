"""Buttons and menus whose whole state lives in their custom_id, so they survive restarts.

Each class is a `discord.ui.DynamicItem` registered once in `setup_hook`; Discord sends the
custom_id back with every click, and the item rebuilds what it needs from it. Every custom_id
is built by `limits.custom_id`:

    pb:s:…, pb:l:…, pb:n:…                 a page of results (◀ ▶): `pages.PageState`
    pb:open                                the menu opening one hit (the value is the paper)
    pb:more:{paper}                        "More like this" on a paper's detail
    pb:share                               post this ephemeral reply to the channel
    pb:save:…, pb:cite:…                   Save (`saving`), Cite (`citing`); each feature's
                                           own buttons are in its package
                                           (bot/app/exts/<feature>/views.py)
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import discord

from bot.app import limits, refs, render, respond
from bot.app.items import BotButton, Button, Match, PaperButton, PaperMenu
from bot.app.results import citing, rating, saving
from bot.app.results.embeds import PageText, page_of, page_texts
from bot.app.results.pages import (
    QUERY_IN_MESSAGE,
    PageKind,
    PageState,
    page_limit,
    query_from_message,
)
from bot.papers.records import Paper
from bot.search.results import SearchResult

if TYPE_CHECKING:
    from bot.app.client import PaperBot
    from bot.search.engine import SearchEngine


def engine_of(interaction: discord.Interaction[PaperBot]) -> SearchEngine:
    return interaction.client.engine


def ephemeral_default(interaction: discord.Interaction[PaperBot]) -> bool:
    return interaction.client.settings.discord.ephemeral


def results_layout(
    result: SearchResult, state: PageState, texts: PageText, *, share: bool
) -> discord.ui.LayoutView:
    """The page as Discord's Components v2, phone first: the heading, then the controls (◀ ▶,
    Share, the menu opening a hit), then the hits, each a section with its own Save button
    (no container: its padding narrows every line on a phone). The first screen at 420 px
    shows the controls and the first hits whatever the page size (docs/layout.md); saving a
    hit is one tap. 10 hits use 38 of Discord's 40 components."""
    view = discord.ui.LayoutView(timeout=None)
    view.add_item(discord.ui.TextDisplay(texts.heading))
    controls = page_controls(result, state, share=share)
    if controls:
        view.add_item(discord.ui.ActionRow(*controls))
    if result.hits:
        view.add_item(discord.ui.ActionRow(OpenMenu(result)))
        for hit, text in zip(result.hits, texts.hits, strict=True):
            save = saving.save_button(hit.paper.id)
            shown = discord.ui.TextDisplay[discord.ui.LayoutView](text)
            view.add_item(shown if save is None else discord.ui.Section(shown, accessory=save))
    return view


def page_controls(
    result: SearchResult, state: PageState, *, share: bool
) -> list[discord.ui.Item[Any]]:
    """◀ ▶ when there is more than one page (disabled at the ends), "Search “fix”" for a
    misspelt query, and Share when the page shows at least two papers: no dead buttons."""
    items: list[discord.ui.Item[Any]] = []
    page, pages = page_of(result)
    for target, label in ((page - 1, "◀"), (page + 1, "▶")):
        if pages <= 1 or state.custom_id(max(0, target)) is None:
            continue
        button = PageButton(replace(state, page=max(0, target)), label=label)
        button.item.disabled = not 1 <= target <= pages
        items.append(button)
    if result.suggestion and state.kind == "s":
        # Did you mean: one click runs the corrected query in place (a page-1 PageButton).
        fixed = replace(state, ref=result.suggestion, page=1)
        cid = fixed.custom_id(1)
        if cid is not None and not cid.endswith(":" + QUERY_IN_MESSAGE):
            label = limits.truncate(f"Search “{result.suggestion}”", limits.BUTTON_LABEL)
            items.append(PageButton(fixed, label=label))
    if share and len(result.hits) >= 2:
        items.append(ShareButton())
    return items


# Links shown as buttons under a paper, best first: the title already opens its page.
LINK_ORDER = ("PDF", "Code", "Paper page", "Proceedings", "Project page")
PAPER_LINKS = 3  # link buttons under a paper (row 1)


def link_buttons(links: list[tuple[str, str]], limit: int = PAPER_LINKS) -> list[Button]:
    """Up to `limit` link buttons, PDF and Code first (URLs from `render.found_links`, already
    well formed; one too long for a button is left to the embed's Links field)."""
    usable = [(label, url) for label, url in links if len(url) <= limits.LINK_URL]
    usable.sort(key=lambda pair: LINK_ORDER.index(pair[0]) if pair[0] in LINK_ORDER else 9)
    return [
        discord.ui.Button(label=label[: limits.BUTTON_LABEL], url=url, row=1)
        for label, url in usable[:limit]
    ]


def paper_items(
    paper_id: str, links: list[tuple[str, str]], *, share: bool, marker: str | None = None
) -> list[discord.ui.Item[Any]]:
    """What goes under one paper (a hit opened, /paper, /random, /today, the daily post): row 0
    More like this, Save, Cite and (ephemeral answers) Share; row 1 its links; row 2 👍 / 👎
    (`rating.rating_buttons`, For you's signals). `marker`: the daily post's, carried
    by its Cite button (`citing.PostCiteButton`) instead of a visible footer."""
    cite = (
        citing.CiteButton(paper_id) if marker is None else citing.PostCiteButton(paper_id, marker)
    )
    items: list[discord.ui.Item[Any]] = [
        MoreLikeButton(paper_id),
        saving.SaveButton(paper_id),
        cite,
    ]
    if share:
        items.append(ShareButton())
    for item in items:
        item.row = 0
    rates = rating.rating_buttons(paper_id)
    for item in rates:
        item.row = 2
    return [*items, *link_buttons(links), *rates]


def paper_view(
    paper_id: str, links: list[tuple[str, str]], *, share: bool, marker: str | None = None
) -> discord.ui.View:
    """A view holding `paper_items`."""
    view = discord.ui.View(timeout=None)
    for item in paper_items(paper_id, links, share=share, marker=marker):
        view.add_item(item)
    return view


async def show_page(
    interaction: discord.Interaction[PaperBot], state: PageState, *, edit: bool, ephemeral: bool
) -> None:
    """Run the page's query and render it (in a worker, deferring if slow), then show it, as
    a new message or in place."""
    engine = engine_of(interaction)
    # /new is personal: without the member's 👎 papers, and remembered as shown to them.
    hidden = await rating.hidden_from(interaction) if state.kind == "n" else set()

    def work() -> tuple[PageState, SearchResult, PageText]:
        done = state.resolved(engine)
        result = done.run(engine, hidden)
        venue = done.venue or None
        texts = page_texts(
            result, heading=done.heading(engine), venue=venue, empty=done.empty_text()
        )
        return replace(done, page=page_of(result)[0]), result, texts

    shown, result, texts = await respond.compute(interaction, work, ephemeral=ephemeral, edit=edit)
    share = ephemeral and not (
        edit and interaction.message is not None and not interaction.message.flags.ephemeral
    )
    view = results_layout(result, shown, texts, share=share)
    # A v2 message has no content or embeds: both are sent empty, which also turns a page an
    # older version sent as an embed into this one when its ◀ ▶ are clicked.
    await respond.send(interaction, view=view, ephemeral=ephemeral, edit=edit)
    if state.kind == "n":
        await rating.remember_shown(interaction, [h.paper.id for h in result.hits], "new")


async def show_paper(
    interaction: discord.Interaction[PaperBot], ref: str, *, ephemeral: bool
) -> None:
    """One paper in full; `ref` is an id, a key or a title. Rendered in a worker thread."""
    engine = engine_of(interaction)

    def work() -> tuple[Paper, discord.Embed, list[tuple[str, str]]]:
        paper = refs.find_paper(engine, ref)
        return paper, render.paper_embed(paper), render.found_links(paper)

    paper, embed, links = await respond.compute(interaction, work, ephemeral=ephemeral)
    await respond.send(
        interaction,
        embed=embed,
        ephemeral=ephemeral,
        view=paper_view(paper.id, links, share=ephemeral),
    )


class PageButton(
    BotButton,
    template=re.compile(
        r"pb:(?P<kind>[sln]):(?P<page>\d{1,4}):(?P<limit>\d{1,2}):"
        r"(?:(?P<venue>[^:]*):)?(?P<ref>.+)",
        re.S,
    ),
):
    """◀ or ▶: re-runs the query for another page and edits the message in place."""

    def __init__(self, state: PageState, *, label: str = "▶") -> None:
        cid = state.custom_id(state.page)
        if cid is None:
            raise ValueError("page state does not fit a custom_id")
        super().__init__(cid, label=label)
        self.state = state

    @classmethod
    def restore(
        cls, interaction: discord.Interaction[PaperBot], item: discord.ui.Item[Any], match: Match
    ) -> PageButton:
        raw = match["kind"]
        kind: PageKind = "l" if raw == "l" else "n" if raw == "n" else "s"
        if kind == "l" and match["venue"] is not None:  # a paper id holding ":" parsed as venue
            ref = match["venue"] + ":" + match["ref"]
        else:
            ref = match["ref"]
        if kind == "s" and ref == QUERY_IN_MESSAGE:
            ref = query_from_message(interaction.message) or ref
        button = cls.kept(item)  # keep the clicked custom_id as is
        button.state = PageState(
            kind=kind,
            ref=ref,
            page=max(1, int(match["page"])),
            limit=page_limit(int(match["limit"])),
            venue=(match["venue"] or "") if kind in ("s", "n") else "",
        )
        return button

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        await show_page(
            interaction, self.state, edit=True, ephemeral=ephemeral_default(interaction)
        )


class OpenMenu(PaperMenu, template=r"pb:open"):
    """The menu listing the hits on screen; picking one opens its detail."""

    def __init__(self, result: SearchResult | None = None) -> None:
        options = []
        for hit in (result.hits if result else [])[: limits.SELECT_OPTIONS]:
            meta = " · ".join(
                x
                for x in (
                    render.venue_line(hit.paper),
                    ", ".join(hit.matched_authors) or render.authors_short(hit.paper, 2),
                )
                if x
            )
            options.append(
                discord.SelectOption(
                    label=limits.truncate(
                        f"{hit.rank}. {render.title_text(hit.paper)}", limits.OPTION_LABEL
                    ),
                    value=refs.ref_for(hit.paper.id, limits.OPTION_VALUE),
                    description=limits.truncate(meta, limits.OPTION_DESCRIPTION) or None,
                )
            )
        super().__init__(limits.custom_id("pb", "open"), options, "Open a paper…")

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        ref = self.chosen(interaction)
        await show_paper(interaction, ref, ephemeral=ephemeral_default(interaction))


class MoreLikeButton(PaperButton, template=re.compile(r"pb:more:(?P<ref>.+)", re.S)):
    """ "More like this" under a paper: the first page of papers similar to it."""

    HEAD = "more"
    LABEL = "More like this"
    STYLE = discord.ButtonStyle.primary
    EMOJI = "🔁"

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        limit = page_limit(interaction.client.settings.search.page_size)
        state = PageState(kind="l", ref=self.paper_ref, limit=limit)
        await show_page(interaction, state, edit=False, ephemeral=ephemeral_default(interaction))


class ShareButton(BotButton, template=r"pb:share"):
    """Posts the embeds of an ephemeral reply to the channel, credited to who shared it."""

    LABEL = "Share"
    STYLE = discord.ButtonStyle.success
    EMOJI = "📣"

    def __init__(self) -> None:
        super().__init__(limits.custom_id("pb", "share"))

    @classmethod
    def from_match(cls, match: Match) -> ShareButton:
        return cls()

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        message = interaction.message
        if message is not None and message.flags.components_v2:
            await interaction.response.send_message(
                view=shared_copy(message, f"Shared by {interaction.user.mention}"),
                allowed_mentions=discord.AllowedMentions.none(),
                ephemeral=False,
            )
            return
        embeds = message.embeds if message else []
        if not embeds:
            raise discord.ClientException("nothing to share on this message")
        await interaction.response.send_message(
            content=f"Shared by {interaction.user.mention}",
            # Within the one message's budget even if the original was built by an older
            # version with other limits.
            embeds=[
                discord.Embed.from_dict(e)
                for e in limits.fit_embeds(embed.to_dict() for embed in embeds)
            ],
            allowed_mentions=discord.AllowedMentions.none(),
            ephemeral=False,
        )


def shared_copy(message: discord.Message, credit: str) -> discord.ui.LayoutView:
    """A v2 page as the channel sees it when shared: `credit` first, then its texts and hits
    with their Save buttons (anyone may save), without the asker's ◀ ▶, menu and Share (the
    page keeps its state; the public copy stays as it was shared)."""
    view = discord.ui.LayoutView(timeout=None)
    view.add_item(discord.ui.TextDisplay(credit))
    for component in message.components:
        copied = _copied(component)
        if copied is not None:
            view.add_item(copied)
    return view


def _copied(component: discord.Component) -> discord.ui.Item[Any] | None:
    """A text, a section with a button, or a container of them, rebuilt as an item (the same
    custom_ids: a copied Save still saves); action rows are left out."""
    if isinstance(component, discord.components.TextDisplay):
        return discord.ui.TextDisplay(component.content)
    if isinstance(component, discord.components.SectionComponent):
        accessory = component.accessory
        texts = [c.content for c in component.children]
        if not isinstance(accessory, discord.components.Button) or not texts:
            return None
        button: Button = discord.ui.Button(
            label=accessory.label,
            custom_id=accessory.custom_id,
            url=accessory.url,
            style=accessory.style,
            emoji=accessory.emoji,
        )
        return discord.ui.Section(*texts, accessory=button)
    if isinstance(component, discord.components.Container):
        items = [item for item in map(_copied, component.children) if item is not None]
        if not items:
            return None
        return discord.ui.Container(*items, accent_colour=component.accent_colour)
    return None


ITEMS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (
    PageButton,
    OpenMenu,
    MoreLikeButton,
    ShareButton,
    *saving.ITEMS,
    *citing.ITEMS,
)

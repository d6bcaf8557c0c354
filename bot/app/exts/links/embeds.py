"""What "Find papers" and the link replies show: one card per paper (as `/paper` shows it,
shorter when several share the message), what was not found, and a Save button per paper."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import discord

import bot.library as library
import bot.links as links
from bot.app import limits, markdown, render, respond
from bot.app.items import PaperButton
from bot.app.results import rating, saving

if TYPE_CHECKING:
    from bot.app.client import PaperBot

NOTHING = (
    "I found no paper in that message: no arXiv id or URL (2401.01234, hep-th/9901001), "
    "OpenReview forum link, DOI, or title in quotes."
)
FULL_EXCERPT = 1200  # one paper: most of its abstract
SHORT_EXCERPT = 300  # several: each a glance, all within one message
COMPACT_EXCERPT = 160  # a link reply under someone's message


def cards(finding: links.Finding, *, compact: bool = False) -> list[discord.Embed]:
    """One embed per paper found, then one listing what was not (each within Discord's
    10-embed, 6,000-character message)."""
    papers = finding.papers[: limits.EMBEDS_PER_MESSAGE - 1]
    excerpt = COMPACT_EXCERPT if compact else FULL_EXCERPT if len(papers) == 1 else SHORT_EXCERPT
    embeds = []
    for number, found in enumerate(papers, start=1):
        assert found.paper is not None
        note = (
            f"{found.mention.label} · in the bot's corpus"
            if found.in_corpus
            else f"{found.mention.label} · fetched from {found.source} now (not in the corpus)"
        )
        heading = f"{number}. {found.mention.label}" if len(papers) > 1 else None
        embeds.append(
            render.paper_embed(found.paper, heading=heading, excerpt=excerpt, footer=[note])
        )
    lines = [_missing_line(f) for f in finding.missing]
    lines += [f"⚠️ {markdown.escape(p)}" for p in finding.problems]
    if lines:
        text = limits.join_limited(lines, limits.EMBED_DESCRIPTION, sep="\n")
        title = "Not found" if finding.missing else "Note"
        embeds.append(discord.Embed(title=title, description=text, colour=render.COLOR))
    fitted = limits.fit_embeds(e.to_dict() for e in embeds)
    return [discord.Embed.from_dict(e) for e in fitted]


def _missing_line(found: links.Found) -> str:
    mention = found.mention
    what = markdown.escape(limits.truncate(mention.label, 200))
    where = "not in the corpus" + (
        "" if mention.kind == "title" else ", and not found at its source"
    )
    if mention.kind == "doi":
        where = "not in the corpus (only arXiv and OpenReview papers are fetched)"
    url = mention.url
    return f"• {markdown.masked_link(what, url) if url else what}: {where}"


def view(finding: links.Finding) -> discord.ui.View | None:
    """A Save button per paper (numbered when there are several), within 5 rows of 5."""
    papers = finding.papers[: limits.EMBEDS_PER_MESSAGE - 1]
    if not papers:
        return None
    out = discord.ui.View(timeout=None)
    for number, found in enumerate(papers, start=1):
        assert found.paper is not None
        button: PaperButton | None = (
            saving.save_button(found.paper.id) if found.in_corpus else FetchedSave(found.paper.id)
        )
        if button is None:
            continue
        if len(papers) > 1:
            button.item.label = f"Save {number}"
        out.add_item(button)
    only = papers[0]
    if len(papers) == 1 and only.in_corpus and only.paper is not None:
        # One paper of the corpus: its card also takes 👍 / 👎 (For you's signals); several
        # would not fit Discord's 25 components beside their Save buttons.
        for item in rating.rating_buttons(only.paper.id):
            out.add_item(item)
    return out


class FetchedSave(PaperButton, template=re.compile(r"pb:fsave:(?P<ref>.+)", re.S)):
    """Save a paper fetched on demand (not in the corpus): the library keeps its id, and
    shows it in full once the corpus has it."""

    HEAD = "fsave"
    LABEL = "Save"
    EMOJI = "📚"

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        bot = interaction.client
        cog: Any = bot.get_cog("Links")
        paper = cog.fetcher.known(self.paper_ref) if cog is not None else None
        if paper is None:
            raise library.Refused(
                "That paper is no longer at hand: use Find papers on the message again."
            )
        store = library.library_of(bot.storage)
        user = interaction.user.id
        limit = bot.settings.library.max_saved
        if await store.get(user, paper.id) is None and await store.count(user) >= limit:
            raise library.Refused(
                f"Your library is full ({limit} papers). Remove some with /library remove."
            )
        new = await store.save(user, paper.id, library.now(), interaction.guild_id)
        text = saving.saved_text(paper, new)
        if new:
            text += " It is not in the bot's corpus yet, so the library lists it by its id."
        await respond.send(interaction, content=text, ephemeral=True)


ITEMS = (FetchedSave,)

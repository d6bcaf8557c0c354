"""Cite under every paper view: the paper's BibTeX, only the clicker sees it, written by the
library export itself (`bot.library.citation`), so a citation copied here is the entry
`/library export format:bibtex` gives.

    pb:cite:{paper}               the id, or its key when too long (`bot.app.refs`)
    pb:cite~{mark}:{paper}        the same on the daily post, carrying the post's marker: after a
                                  crash between sending and recording, the scheduler finds the
                                  post by it (`bot.app.exts.daily.poster`), and no footer
                                  shows an internal token
"""

from __future__ import annotations

import hashlib
import io
import re
from typing import TYPE_CHECKING

import discord

from bot.app import limits, markdown, refs, render, respond
from bot.app.items import PaperButton
from bot.library import citation
from bot.papers.records import Paper

if TYPE_CHECKING:
    from bot.app.client import PaperBot

FENCE = "```"
MARK = re.compile(r"[A-Za-z0-9-]{1,40}")


def cite_message(paper: Paper) -> tuple[str, discord.File | None]:
    """The answer to Cite: the entry in a code block when it fits one message, else a short
    line and the entry as a `.bib` file (a long abstract makes entries of many KB)."""
    entry = citation(paper)
    title = markdown.escape(limits.truncate(render.title_text(paper), 200))
    block = f"{FENCE}bibtex\n{entry}{FENCE}"
    if FENCE not in entry and len(block) <= limits.CONTENT:
        return block, None
    key = re.sub(r"[^A-Za-z0-9_-]+", "", entry.split("{", 1)[1].split(",", 1)[0]) or "paper"
    text = f"BibTeX of **{title}**, as `/library export` writes it (attached: too long to show)."
    return text, discord.File(io.BytesIO(entry.encode()), filename=f"{key[:60]}.bib")


def marker_tag(marker: str) -> str:
    """The post's marker as it travels in a custom_id: itself when it is short and plain (the
    scheduler's `potd-DATE-DIGEST`), else a digest of it."""
    if MARK.fullmatch(marker):
        return marker
    return hashlib.blake2b(marker.encode(), digest_size=10).hexdigest()


def carries_marker(custom_id: str, marker: str) -> bool:
    """Whether a component's custom_id is the Cite button of the post with `marker`."""
    return custom_id.startswith(f"pb:cite~{marker_tag(marker)}:")


class CiteButton(PaperButton, template=re.compile(r"pb:cite:(?P<ref>.+)", re.S)):
    """Cite under a paper: its BibTeX, ephemeral."""

    HEAD = "cite"
    LABEL = "Cite"
    EMOJI = "📑"

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        paper = refs.find_paper(interaction.client.engine, self.paper_ref)
        text, file = await respond.compute(interaction, cite_message, paper, ephemeral=True)
        if file is None:
            await respond.send(interaction, content=text, ephemeral=True)
        elif interaction.response.is_done():
            await interaction.edit_original_response(content=text, attachments=[file])
        else:
            await interaction.response.send_message(content=text, file=file, ephemeral=True)


class PostCiteButton(
    CiteButton, template=re.compile(r"pb:cite~(?P<mark>[A-Za-z0-9-]{1,40}):(?P<ref>.+)", re.S)
):
    """Cite on the daily post: the same answer; its custom_id also carries the post's marker."""

    def __init__(self, paper_id: str, marker: str) -> None:
        head = ("pb", f"cite~{marker_tag(marker)}")
        ref = refs.ref_for(paper_id, limits.custom_id_room(*head))
        super(PaperButton, self).__init__(limits.custom_id(*head, ref))
        self.paper_ref = paper_id


ITEMS = (CiteButton, PostCiteButton)

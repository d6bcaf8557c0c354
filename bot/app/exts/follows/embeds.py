"""Follows as members see them: `/follow list` and a notice of new papers. The notice's title
is written and read back (`notice_query`) through one pattern, `NOTICE_TITLE`."""

from __future__ import annotations

import re
from collections.abc import Sequence

import discord

from bot.app import limits, markdown, render
from bot.follows.store import Follow
from bot.papers.records import Paper

NOTICE_HEAD, NOTICE_TAIL = "🆕 New papers for “", "”"
# The query back from a notice's title (the pages of a notice keep only the batch id).
NOTICE_TITLE = re.compile(f"^{re.escape(NOTICE_HEAD)}(.*){re.escape(NOTICE_TAIL)}$", re.S)


def follows_embed(
    follows: Sequence[Follow], heading: str, personal: str = "your DMs"
) -> discord.Embed:
    """`/follow list`: each follow with where it goes and, when it stopped, why."""
    embed = discord.Embed(title=heading, colour=render.COLOR)
    lines = []
    for f in follows:
        where = f"<#{f.channel_id}>" if f.channel_id is not None else personal
        state = f" · ⚠️ stopped: {f.disabled_reason}" if f.disabled_reason else ""
        lines.append(f"`{f.follow_id}` **{markdown.escape(f.query)}** → {where}{state}")
    embed.description = (
        "\n".join(lines)
        if lines
        else "No follows. `/follow add query` tells you about new papers matching a query."
    )
    return render.finish(embed)


def notice_embed(
    query: str, papers: Sequence[Paper], page: int, total: int, per_page: int
) -> discord.Embed:
    """A follow's notification: up to `per_page` new papers, then "and N more"."""
    start = (page - 1) * per_page
    shown = papers[start : start + per_page]
    lines = []
    for i, paper in enumerate(shown, start + 1):
        title = limits.truncate(render.title_text(paper), 150)
        meta = " · ".join(x for x in (render.venue_line(paper), render.authors_short(paper)) if x)
        link = markdown.masked_link(title, paper.link("page"))
        lines.append(f"{i}. {link}" + (f"\n{markdown.escape(meta)}" if meta else ""))
    more = total - start - len(shown)
    if more > 0:
        lines.append(f"…and {more} more (▶)")
    embed = discord.Embed(
        title=limits.truncate(f"{NOTICE_HEAD}{query}{NOTICE_TAIL}", limits.EMBED_TITLE),
        colour=render.COLOR,
        description=limits.truncate("\n".join(lines), limits.EMBED_DESCRIPTION, markdown=True),
    )
    pages = max(1, -(-total // per_page))
    embed.set_footer(text=f"{total} new · page {page}/{pages} · /follow list to manage")
    return render.finish(embed)

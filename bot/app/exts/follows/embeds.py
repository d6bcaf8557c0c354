"""Follows as members see them: `/follow list` and a notice of new papers. The notice's title
is written and read back (`notice_query`) through one pattern, `NOTICE_TITLE`."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import discord

from bot.app import limits, markdown, render
from bot.follows.store import FOR_YOU, Follow
from bot.papers.records import Paper

NOTICE_HEAD, NOTICE_TAIL = "🆕 New papers for “", "”"
# The query back from a notice's title (the pages of a notice keep only the batch id).
NOTICE_TITLE = re.compile(f"^{re.escape(NOTICE_HEAD)}(.*){re.escape(NOTICE_TAIL)}$", re.S)


def follows_embed(
    follows: Sequence[Follow],
    heading: str,
    personal: str = "your DMs",
    waiting: Mapping[str, tuple[int, str]] | None = None,
) -> discord.Embed:
    """`/follow list`: each follow with where it goes, its notices Discord has not taken yet
    (`waiting`: follow id -> (count, latest failure)) and, when it stopped, why."""
    embed = discord.Embed(title=heading, colour=render.COLOR)
    lines = []
    for f in follows:
        where = f"<#{f.channel_id}>" if f.channel_id is not None else personal
        state = f" · ⚠️ stopped: {f.disabled_reason}" if f.disabled_reason else ""
        count, error = (waiting or {}).get(f.follow_id, (0, ""))
        if count and not state:
            state = (
                f" · ⚠️ {count} notice{'s' if count != 1 else ''} waiting: "
                f"{limits.truncate(error, 120)}, retrying"
            )
        lines.append(f"`{f.follow_id}` **{markdown.escape(notice_title(f))}** → {where}{state}")
    embed.description = (
        limits.truncate("\n".join(lines), limits.EMBED_DESCRIPTION, markdown=True)
        if lines
        else "No follows. `/follow add query` tells you about new papers matching a query."
    )
    return render.finish(embed)


def notice_title(follow: Follow) -> str:
    """What a notice is for: the follow's query, or "For you" for the For you feed."""
    return "For you" if follow.query == FOR_YOU else follow.query


def notice_embed(
    query: str, shown: Sequence[Paper], page: int, total: int, per_page: int
) -> discord.Embed:
    """A follow's notification: page `page` of a batch of `total` new papers (`shown` are that
    page's papers still in the corpus), numbered as the Save menu and the Open links under it
    number them, then "and N more". The footer holds no internal token: the components mark
    the message as this notice's (`views.carries_batch`)."""
    start = (page - 1) * per_page
    lines = []
    for i, paper in enumerate(shown[:per_page], start + 1):
        title = limits.truncate(render.title_text(paper), 150)
        meta = " · ".join(x for x in (render.venue_line(paper), render.authors_short(paper)) if x)
        link = markdown.masked_link(title, paper.link("page"))
        lines.append(f"{i}. {link}" + (f"\n{markdown.escape(meta)}" if meta else ""))
    more = total - start - per_page
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

"""The library as members see it: the Save answer and a page of `/library show`."""

from __future__ import annotations

import discord

from bot.app import limits, markdown, render
from bot.library.actions import PAGE_SIZE, LibraryPage, find
from bot.search.engine import SearchEngine


def library_embed(view: LibraryPage, engine: SearchEngine) -> discord.Embed:
    """One page of the library, newest first, each paper marked read (✅) or unread (🔵); titles
    only (the menu under the page picks a paper to mark read or remove: no id to retype)."""
    embed = discord.Embed(title="📚 Your library", colour=render.COLOR)
    if not view.items:
        embed.description = (
            "Nothing saved yet. Press **Save** under any paper (search results, /paper, "
            "/random, the paper of the day) to keep it here."
        )
    else:
        blocks = []
        budget = (limits.EMBED_DESCRIPTION - 2 * len(view.items)) // len(view.items)
        for i, item in enumerate(view.items, start=(view.page - 1) * PAGE_SIZE + 1):
            paper = find(engine, item.paper_id)
            mark = "✅ read" if item.read else "🔵 unread"
            if paper is None:
                head = f"**{i}. {markdown.escape(item.paper_id)}** (no longer in the corpus)"
                meta = f"{mark} · saved {item.saved_at:%Y-%m-%d}"
            else:
                title = limits.truncate(render.title_text(paper), 200)
                head = f"**{i}. {markdown.masked_link(title, paper.link('page'))}**"
                meta = " · ".join(
                    x
                    for x in (mark, render.venue_line(paper), f"saved {item.saved_at:%Y-%m-%d}")
                    if x
                )
            blocks.append(limits.truncate(f"{head}\n{meta}", budget, markdown=True))
        embed.description = "\n\n".join(blocks)
    embed.set_footer(
        text=f"page {view.page}/{view.pages} · {view.total} saved · {view.unread} unread"
    )
    return render.finish(embed)

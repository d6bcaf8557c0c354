"""For you as a member sees it: a page of `/foryou` (shared with the console)."""

from __future__ import annotations

import discord

from bot.app import limits, markdown, render
from bot.foryou import MIN_SIGNALS, PAGE, ForYouPage

TITLE = "✨ For you"


def foryou_embed(view: ForYouPage, has_follows: bool) -> discord.Embed:
    """One page: each paper with how strongly it matches the member; the fallback says why."""
    embed = discord.Embed(title=TITLE, colour=render.COLOR)
    intro = ""
    liked = len(view.signals.liked)
    if view.fallback:
        intro = (
            f"I learn what you like from papers you save (📚) or 👍; I need at least "
            f"{MIN_SIGNALS} and have {liked}. "
        )
        intro += (
            "Meanwhile, the newest matches of your follows:"
            if has_follows
            else "Meanwhile, `/follow add` a topic and its new papers show here."
        )
    lines = []
    for i, item in enumerate(view.items, start=(view.page - 1) * PAGE + 1):
        paper = item.paper
        title = limits.truncate(render.title_text(paper), 180)
        head = f"**{i}. {markdown.masked_link(title, paper.link('page'))}**"
        meta = [render.venue_line(paper), render.authors_short(paper)]
        if not view.fallback:
            meta.append(f"{round(item.strength * 100)}% match")
        lines.append(f"{head}\n{markdown.escape(' · '.join(x for x in meta if x))}")
    if not lines and not (view.fallback and not has_follows):
        lines.append("No new papers for you right now; they show here as the corpus grows.")
    body = "\n\n".join(x for x in (intro, *lines) if x)
    embed.description = limits.truncate(body, limits.EMBED_DESCRIPTION, markdown=True)
    footer = f"page {view.page}/{view.pages} · {view.total} papers"
    if not view.fallback:
        footer += f" · from {liked} saved or 👍, {len(view.signals.disliked)} 👎"
        if view.learned:
            footer += " · " + ", ".join(view.learned[:6])
    footer += " · 👍 more like this · 👎 not for me"
    embed.set_footer(text=limits.truncate(footer, limits.EMBED_FOOTER))
    return render.finish(embed)

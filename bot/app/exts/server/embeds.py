"""`/top` as an embed: the server's most saved and most reacted-to papers."""

from __future__ import annotations

from collections.abc import Sequence

import discord

from bot.app import limits, markdown, render
from bot.library import TopEntry, find
from bot.search.engine import SearchEngine


def top_embed(
    saved: Sequence[TopEntry], reacted: Sequence[TopEntry], engine: SearchEngine, period: str
) -> discord.Embed:
    label = {"week": "this week", "month": "this month", "all": "of all time"}[period]
    embed = discord.Embed(title=f"🏆 This server's top papers {label}", colour=render.COLOR)
    for name, rows, unit in (
        ("Most saved", saved, "save"),
        ("Most reacted-to daily posts", reacted, "reader"),
    ):
        lines = []
        for i, row in enumerate(rows, 1):
            paper = find(engine, row.paper_id)
            title = (
                markdown.masked_link(
                    limits.truncate(render.title_text(paper), 90), paper.link("page")
                )
                if paper
                else f"`{row.paper_id}`"
            )
            lines.append(f"{i}. {title} · {row.count} {unit}{'s' if row.count != 1 else ''}")
        embed.add_field(
            name=name,
            inline=False,
            value=limits.join_limited(lines, limits.FIELD_VALUE, sep="\n") or "nothing yet",
        )
    return render.finish(embed)

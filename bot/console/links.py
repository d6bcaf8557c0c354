"""`python -m bot find "message text"` and the console's `/find`: the papers a message names.

The same lookup as Discord's "Find papers" (`bot.links.find_papers`) and the same cards
(`bot.app.exts.links.embeds`), printed as text. Papers not in the corpus are fetched from
arXiv or OpenReview unless `--no-fetch` (the console's `/find` fetches when it has settings).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import TextIO

from bot.app import render
from bot.app.exts.links.embeds import NOTHING, cards
from bot.config import Settings
from bot.console.text import embed_text
from bot.links import Finding, OnDemand, find_papers
from bot.search.engine import SearchEngine

FIND_HELP = '  /find TEXT         the papers a message names (arXiv, OpenReview, DOI, "title")\n'


def finding_for(engine: SearchEngine, text: str, settings: Settings | None) -> Finding:
    """The lookup, fetching through the polite client when `settings` is given."""
    fetcher = OnDemand(settings) if settings is not None else None
    return asyncio.run(find_papers(text, engine, fetcher))


def finding_text(finding: Finding) -> str:
    """The answer as the terminal shows it: the cards, or the "found nothing" note."""
    if not finding.found:
        return embed_text(render.note_embed(NOTHING))
    return "".join(embed_text(embed) for embed in cards(finding))


def run_find(
    args: argparse.Namespace, engine: SearchEngine, settings: Settings, out: TextIO
) -> int:
    finding = finding_for(engine, " ".join(args.text), None if args.no_fetch else settings)
    if args.json:
        rows = [
            {
                "mention": f.mention.label,
                "source": f.source or None,
                "paper": f.paper.to_json() if f.paper else None,
            }
            for f in finding.found
        ]
        out.write(
            json.dumps({"found": rows, "problems": finding.problems}, ensure_ascii=False, indent=2)
            + "\n"
        )
    else:
        out.write(finding_text(finding))
    return 0 if finding.papers else 1

"""A reading list as CSL-JSON (Zotero, Better BibTeX, pandoc, citeproc): a JSON array with one
object per paper in the Citation Style Language's data schema (`id`, `type`, `title`, `author`
as `family`/`given`, `issued.date-parts`, `container-title`, `abstract`, `keyword`, `URL`,
`DOI`, `number` for an arXiv id as Zotero writes it, `note` with the bot's paper id).

Items are written one per line so a large list can be cut between papers into several
complete files.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bot.library.export.fields import Citation
from bot.library.export.layout import Entry, Layout


def csl_item(entry: Entry) -> dict[str, Any]:
    c = Citation.of(entry.paper)
    item: dict[str, Any] = {
        "id": c.paper_id,
        "type": "article" if c.preprint or not c.venue else "paper-conference",
        "title": c.title,
        "author": [
            {"family": family, "given": given} if given else {"family": family}
            for family, given in c.authors
        ],
    }
    if c.year:
        item["issued"] = {"date-parts": [[c.year]]}
    if c.venue:
        item["container-title" if not c.preprint else "publisher"] = c.venue
    for key, value in (("abstract", c.abstract), ("URL", c.url), ("DOI", c.doi)):
        if value:
            item[key] = value
    if c.keywords:
        item["keyword"] = ", ".join(c.keywords)
    if c.arxiv:
        item["number"] = f"arXiv:{c.arxiv}"
    item["note"] = f"paper id: {c.paper_id}"
    return item


def layout(entries: Sequence[Entry]) -> Layout:
    items = [json.dumps(csl_item(e), ensure_ascii=False) for e in entries]
    return Layout("[\n", items, sep=",\n", tail="\n]\n")

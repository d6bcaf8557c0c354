"""A reading list as RIS (Zotero, EndNote, Mendeley): one `TY  - ` ... `ER  - ` block per paper.

Tags: `TY` CONF for a venue's paper, `UNPB` for an arXiv preprint (Zotero reads it as a
preprint/manuscript); `TI`, one `AU` per author as `Family, Given`, `PY`, `T2` the venue, `AB`,
one `KW` per keyword, `UR`, `DO`, and `N1` with the bot's paper id (what `/library import`
matches first). A value is one line: RIS has no continuation a reader agrees on, so line
breaks become spaces. Read back by `rispy` in the tests, and by `/library import`.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.library.export.fields import Citation
from bot.library.export.layout import Entry, Layout


def _line(tag: str, value: object) -> str:
    return f"{tag}  - {' '.join(str(value).split())}\r\n"


def ris_entry(entry: Entry) -> str:
    c = Citation.of(entry.paper)
    lines = [_line("TY", "UNPB" if c.preprint or not c.venue else "CONF"), _line("TI", c.title)]
    lines += [_line("AU", f"{family}, {given}" if given else family) for family, given in c.authors]
    if c.year:
        lines.append(_line("PY", c.year))
    if c.venue and not c.preprint:
        lines.append(_line("T2", c.venue))
    if c.abstract:
        lines.append(_line("AB", c.abstract))
    lines += [_line("KW", k) for k in c.keywords if k.strip()]
    if c.url:
        lines.append(_line("UR", c.url))
    if c.doi:
        lines.append(_line("DO", c.doi))
    if c.arxiv:
        lines.append(_line("AN", f"arXiv:{c.arxiv}"))
    lines.append(_line("N1", f"paper id: {c.paper_id}"))
    return "".join(lines) + "ER  - \r\n"


def layout(entries: Sequence[Entry]) -> Layout:
    return Layout("", [ris_entry(e) for e in entries], sep="\r\n")

"""A reading list as Markdown (a checklist) or CSV (spreadsheets).

CSV: a cell starting with `= + - @`, tab or CR is a formula to spreadsheets (OWASP "CSV
injection"): it gets a leading `'` and keeps its text. Rows end in CRLF (RFC 4180), so a CR in
a cell is quoted, not read as the end of a row.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence

from bot.library.export.layout import Entry, Layout
from bot.papers.latex import latex_to_unicode


def _md(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", " ".join(text.split()))


def markdown_layout(entries: Sequence[Entry]) -> Layout:
    items: list[str] = []
    for e in entries:
        p = e.paper
        title = _md(latex_to_unicode(p.title))
        url = p.link("page") or p.link("pdf")
        head = f"[{title}]({url})" if url else title
        box = "x" if e.read else " "
        meta = " · ".join(
            x for x in (", ".join(p.authors), p.venue, f"saved {e.saved_at:%Y-%m-%d}") if x
        )
        items.append(f"- [{box}] {head}  \n  {_md(meta)} · `{p.id}`\n")
    return Layout("# Reading list\n\n", items)


def to_markdown(entries: Sequence[Entry]) -> str:
    return markdown_layout(entries).text()


CSV_COLUMNS = ("id", "title", "authors", "venue", "year", "url", "saved_at", "read")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: str) -> str:
    """`value`, with a leading `'` when a spreadsheet would read it as a formula (OWASP)."""
    return "'" + value if value.startswith(_FORMULA_START) else value


def csv_layout(entries: Sequence[Entry]) -> Layout:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")

    def row(cells: Iterable[str]) -> str:
        out.seek(0)
        out.truncate()
        writer.writerow([csv_cell(c) for c in cells])
        return out.getvalue()

    items = []
    for e in entries:
        p = e.paper
        url = p.link("page") or p.link("pdf") or ""
        cells = (p.id, latex_to_unicode(p.title), "; ".join(p.authors), p.venue, str(p.year or ""))
        items.append(row((*cells, url, e.saved_at.isoformat(), "yes" if e.read else "no")))
    return Layout(row(CSV_COLUMNS), items)


def to_csv(entries: Sequence[Entry]) -> str:
    return csv_layout(entries).text()

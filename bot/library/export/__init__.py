"""A reading list as a file, from plain `Paper` records: BibTeX (`bibtex`), Markdown and CSV
(`tables`), RIS (`ris`) and CSL-JSON (`csljson`), the formats reference managers (Zotero,
Better BibTeX, EndNote, Mendeley) read. Exports are opened elsewhere (LaTeX, a spreadsheet),
so nothing in them may act there.

A list too large for one upload is cut between papers into several complete files
(`export_parts`; BibTeX keys unique over all of them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.library.export import bibtex, csljson, ris, tables
from bot.library.export.bibtex import base_key, defuse, escape_text, keys_for, to_bibtex
from bot.library.export.layout import Entry, Layout, TooLarge, cut
from bot.library.export.tables import CSV_COLUMNS, csv_cell, to_csv, to_markdown

LAYOUTS: dict[str, Callable[[Sequence[Entry]], Layout]] = {
    "bibtex": bibtex.layout,
    "markdown": tables.markdown_layout,
    "csv": tables.csv_layout,
    "ris": ris.layout,
    "csljson": csljson.layout,
}
FORMATS = tuple(LAYOUTS)
EXTENSIONS = {"bibtex": "bib", "markdown": "md", "csv": "csv", "ris": "ris", "csljson": "json"}


def _layout(entries: Sequence[Entry], fmt: str) -> Layout:
    if fmt not in LAYOUTS:
        raise ValueError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
    return LAYOUTS[fmt](entries)


def export(entries: Sequence[Entry], fmt: str) -> str:
    """The reading list in `fmt` (one of FORMATS)."""
    return _layout(entries, fmt).text()


def export_parts(entries: Sequence[Entry], fmt: str, max_bytes: int, max_parts: int) -> list[bytes]:
    """The reading list in `fmt` as UTF-8 files of at most `max_bytes` each, cut between
    papers, each a complete file; TooLarge when it needs more than `max_parts` of them."""
    return cut(_layout(entries, fmt), max_bytes, max_parts)


__all__ = [
    "CSV_COLUMNS",
    "EXTENSIONS",
    "FORMATS",
    "Entry",
    "TooLarge",
    "base_key",
    "csv_cell",
    "defuse",
    "escape_text",
    "export",
    "export_parts",
    "keys_for",
    "to_bibtex",
    "to_csv",
    "to_markdown",
]

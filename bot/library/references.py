"""Reference-manager files to plain references: BibTeX (`.bib`), RIS (`.ris`) and CSL-JSON
(`.json`), what Zotero, Better BibTeX, Mendeley and EndNote export.

Parsed by maintained parsers, never by hand: pybtex for BibTeX (already what the export uses
to read sources' entries; strict, so a broken entry stops the file with its line instead of
passing half of it), rispy for RIS (checked against the file's own `TY` count, because rispy
drops a record without its `ER` line silently), the standard library for JSON.

A file that does not parse as its format is refused whole (`UnreadableFile`, with the reason),
so an import never saves part of a file it could not read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bot.papers.latex import latex_to_unicode

# The largest file read: a 5,000-item Zotero library with abstracts is ~4 MB of BibTeX.
IMPORT_MAX_BYTES = 8 * 1024 * 1024
FORMAT_NAMES = {"bibtex": "BibTeX", "ris": "RIS", "csljson": "CSL-JSON"}
_EXTENSIONS = {".bib": "bibtex", ".bibtex": "bibtex", ".ris": "ris", ".json": "csljson"}
_PAPER_ID = re.compile(r"paper id:\s*(\S+)")
_ARXIV = re.compile(
    r"(?:arxiv\.org/(?:abs|pdf)/|arxiv[:\s]\s*|10\.48550/arxiv\.)"
    r"(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?",
    re.IGNORECASE,
)
_BARE_ARXIV = re.compile(r"^(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?$", re.I)
_DOI = re.compile(r"(10\.\d{4,9}/\S+)")
_RIS_START = re.compile(r"^TY  - ", re.MULTILINE)


class UnreadableFile(ValueError):
    """The file is not what it says it is (or too large); the message says why, for the reader."""


@dataclass(frozen=True, slots=True)
class Reference:
    """One entry of an imported file, as far as matching needs it."""

    title: str
    doi: str = ""
    arxiv: str = ""
    paper_id: str = ""  # the bot's own id, from an export's note (`paper id: ...`)

    @property
    def label(self) -> str:
        return self.title or self.doi or self.arxiv or "(an entry without a title)"


def detect(filename: str, data: bytes) -> str:
    """The format from the extension, else from the first characters."""
    name = filename.lower()
    for ext, fmt in _EXTENSIONS.items():
        if name.endswith(ext):
            return fmt
    head = data.lstrip()[:200]
    if head[:1] in (b"[", b"{"):
        return "csljson"
    if head.startswith(b"TY  -"):
        return "ris"
    if b"@" in head:
        return "bibtex"
    raise UnreadableFile(
        f"{filename!r} is not a reference file the bot reads: use a .bib (BibTeX), .ris or "
        ".json (CSL-JSON) export from Zotero, Mendeley or EndNote."
    )


def _text(data: bytes, filename: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableFile(
            f"{filename!r} is not UTF-8 text (byte {exc.start}): export it again as UTF-8."
        ) from exc


def _arxiv_in(values: Iterable[str]) -> str:
    for value in values:
        match = _ARXIV.search(value) or _BARE_ARXIV.match(value.strip())
        if match:
            return match.group(1)
    return ""


def _doi(value: str) -> str:
    match = _DOI.search(value)
    return match.group(1).rstrip(".").lower() if match else ""


def _paper_id(values: Iterable[str]) -> str:
    for value in values:
        if match := _PAPER_ID.search(value):
            return match.group(1)
    return ""


def _clean_title(title: str) -> str:
    return " ".join(latex_to_unicode(title.replace("{", "").replace("}", "")).split())


def _bibtex(text: str) -> list[Reference]:
    # pybtex is imported on first use, not with the bot (it costs ~40 ms).
    from pybtex.database.input.bibtex import Parser  # type: ignore[import-untyped]
    from pybtex.exceptions import PybtexError  # type: ignore[import-untyped]

    try:
        entries = Parser().parse_string(text).entries
    except PybtexError as exc:
        raise UnreadableFile(f"the BibTeX does not parse: {exc}") from exc
    refs = []
    for entry in entries.values():
        fields = {name.lower(): str(value) for name, value in entry.fields.items()}
        arxiv = ""
        if fields.get("archiveprefix", "").lower() == "arxiv" or "eprint" in fields:
            arxiv = _arxiv_in([fields.get("eprint", "")])
        urls = [fields.get(k, "") for k in ("url", "journal", "note", "howpublished", "doi")]
        refs.append(
            Reference(
                title=_clean_title(fields.get("title", "")),
                doi=_doi(fields.get("doi", "")),
                arxiv=arxiv or _arxiv_in(urls),
                paper_id=_paper_id([fields.get("note", "")]),
            )
        )
    return refs


def _ris(text: str) -> list[Reference]:
    import rispy

    text = text.replace("\r\n", "\n")
    records: list[dict[str, Any]] = rispy.loads(text)
    expected = len(_RIS_START.findall(text))
    if expected != len(records) or not records:
        found = f"{len(records)} complete record(s) of {expected}"
        raise UnreadableFile(
            f"the RIS does not parse: {found} (each starts with `TY  - ` and ends with `ER  - `)."
        )
    refs = []
    for record in records:
        notes = [str(n) for n in record.get("notes") or []]
        urls = [str(u) for u in record.get("urls") or []]
        extra = [str(record.get(k) or "") for k in ("accession_number", "number", "doi")]
        title = record.get("title") or record.get("primary_title") or ""
        refs.append(
            Reference(
                title=_clean_title(str(title)),
                doi=_doi(str(record.get("doi") or "")),
                arxiv=_arxiv_in([*extra, *urls, *notes]),
                paper_id=_paper_id(notes),
            )
        )
    return refs


def _csljson(text: str) -> list[Reference]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UnreadableFile(
            f"the CSL-JSON does not parse: {exc.msg} at line {exc.lineno}, column {exc.colno}."
        ) from exc
    except RecursionError as exc:
        raise UnreadableFile("the CSL-JSON is nested too deeply to read.") from exc
    items = [data] if isinstance(data, dict) else data
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise UnreadableFile("the CSL-JSON must be an array of items (objects).")
    refs = []
    for item in items:
        strings = {k: v for k, v in item.items() if isinstance(v, str)}
        fields = [strings.get(k, "") for k in ("number", "URL", "DOI", "archive_location", "note")]
        refs.append(
            Reference(
                title=_clean_title(strings.get("title", "")),
                doi=_doi(strings.get("DOI", "")),
                arxiv=_arxiv_in(fields),
                paper_id=_paper_id([strings.get("note", "")]),
            )
        )
    return refs


PARSERS = {"bibtex": _bibtex, "ris": _ris, "csljson": _csljson}


def too_large(filename: str, size: int) -> UnreadableFile:
    """The refusal of a file over IMPORT_MAX_BYTES (checked before a download when the size
    is announced, as Discord does for attachments)."""
    return UnreadableFile(
        f"`{filename}` is {size / 2**20:.1f} MiB; the bot reads files of up to "
        f"{IMPORT_MAX_BYTES // 2**20} MiB. Export a smaller collection and import it in parts."
    )


def read_references(filename: str, data: bytes) -> tuple[str, list[Reference]]:
    """(format, references) of a reference file; UnreadableFile for a file too large, of an
    unknown kind, not UTF-8, that does not parse, or with no entry at all."""
    if len(data) > IMPORT_MAX_BYTES:
        raise too_large(filename, len(data))
    fmt = detect(filename, data)
    refs = PARSERS[fmt](_text(data, filename))
    if not refs:
        raise UnreadableFile(f"{filename!r} holds no {FORMAT_NAMES[fmt]} entry.")
    return fmt, refs

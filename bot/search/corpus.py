"""Corpus files to `Paper` records, with every problem reported as `file:line: reason`.

Three formats, detected per file:
- the project's JSON Lines (`id`, `venue`, `year`, `title`, `authors`, `abstract`, `links`, ...);
- a Paper Copilot conference list (`colm2025.json`: a JSON array; `author` and `keywords` are
  `;`-separated strings; `status` may be Reject/Withdraw, left out by default);
- a BEIR `corpus.jsonl` (`_id`, `title`, `text`).

A bad record never stops a load and never vanishes silently: it is reported and skipped.
Only a corpus with no usable paper at all is fatal.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.search.models import Link, Paper

log = logging.getLogger(__name__)

# Longest line we parse; a multi-megabyte line is a broken file, not a paper.
MAX_LINE_BYTES = 1_000_000

VENUE_NAMES = {
    "aistats": "AISTATS",
    "colm": "COLM",
    "corl": "CoRL",
    "iclr": "ICLR",
    "icml": "ICML",
    "nips": "NeurIPS",
    "neurips": "NeurIPS",
    "cvpr": "CVPR",
    "iccv": "ICCV",
    "eccv": "ECCV",
    "acl": "ACL",
    "emnlp": "EMNLP",
    "naacl": "NAACL",
    "aaai": "AAAI",
    "ijcai": "IJCAI",
    "uai": "UAI",
    "kdd": "KDD",
    "www": "WWW",
    "sigir": "SIGIR",
    "colt": "COLT",
    "tmlr": "TMLR",
}
_VENUE_FILE = re.compile(r"^([a-z]+)[-_]?(\d{4})(?:[-_.].*)?$", re.IGNORECASE)
_SOFT_BREAK = re.compile(r"-\n\s*")
_SPACES = re.compile(r"\s+")


class CorpusError(Exception):
    """No usable paper could be loaded; the message names the files and the first problems."""


@dataclass
class LoadReport:
    papers: list[Paper] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    skipped: int = 0
    files: list[Path] = field(default_factory=list)

    def summary(self) -> str:
        names = ", ".join(p.name for p in self.files)
        return (
            f"loaded {len(self.papers)} papers from {len(self.files)} file(s) ({names}); "
            f"skipped {self.skipped}"
        )


class RecordError(ValueError):
    """One record cannot become a paper; the message is the reason shown after `file:line:`."""


def tidy(text: str) -> str:
    """One line of text: soft line-break hyphens rejoined (`bidi-\\nrected`), spaces collapsed."""
    return _SPACES.sub(" ", _SOFT_BREAK.sub("-", text)).strip()


def venue_from_filename(path: Path) -> tuple[str, int | None]:
    """`colm2025.json` -> ("COLM 2025", 2025); unknown names keep their stem."""
    match = _VENUE_FILE.match(path.stem)
    if not match:
        return path.stem, None
    name, year = match.group(1).lower(), int(match.group(2))
    return f"{VENUE_NAMES.get(name, name.upper())} {year}", year


def _text(value: Any, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RecordError(f"{name} must be a string, got {type(value).__name__}")
    return value.replace("\x00", "")


def _split_list(value: Any, name: str) -> tuple[str, ...]:
    if value is None or value == "None":
        return ()
    if isinstance(value, str):
        return tuple(p.strip() for p in value.split(";") if p.strip())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    raise RecordError(f"{name} must be a string or a list of strings")


def _year(value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise RecordError("year must be a number")
    try:
        year = int(value)
    except ValueError as exc:
        raise RecordError(f"year must be a number, got {value!r}") from exc
    if not 1900 <= year <= 2200:
        raise RecordError(f"year {year} is out of range")
    return year


def _url(value: Any) -> str | None:
    if isinstance(value, str) and value.startswith(("http://", "https://")):
        return value.strip()
    return None


def _require_text(paper_id: str, title: str, abstract: str) -> None:
    if not paper_id:
        raise RecordError("missing id")
    if not title and not abstract:
        raise RecordError(f"paper {paper_id!r} has neither title nor abstract")


# --- the three record shapes ---------------------------------------------------------------


def paper_from_project(record: dict[str, Any], default_venue: str) -> Paper:
    paper_id = _text(record.get("id"), "id").strip()
    title = tidy(_text(record.get("title"), "title"))
    abstract = _text(record.get("abstract"), "abstract").strip()
    _require_text(paper_id, title, abstract)
    links = []
    raw_links = record.get("links") or []
    if not isinstance(raw_links, list):
        raise RecordError("links must be a list")
    for item in raw_links:
        if not isinstance(item, dict) or not _url(item.get("url")):
            raise RecordError("each link needs a kind and an http(s) url")
        links.append(Link(str(item.get("kind") or "other"), item["url"]))
    status = record.get("status")
    return Paper(
        id=paper_id,
        title=title or _headline_fallback(abstract),
        abstract=abstract,
        venue=_text(record.get("venue"), "venue").strip() or default_venue,
        year=_year(record.get("year")),
        authors=_split_list(record.get("authors"), "authors"),
        links=tuple(links),
        status=status if isinstance(status, str) and status else None,
        keywords=_split_list(record.get("keywords"), "keywords"),
        title_derived=bool(record.get("title_derived")) or not title,
    )


def paper_from_paperlist(record: dict[str, Any], venue: str, year: int | None, slug: str) -> Paper:
    raw_id = record.get("id")
    if isinstance(raw_id, int) and not isinstance(raw_id, bool):
        raw_id = str(raw_id)
    paper_id = _text(raw_id, "id").strip()
    title = tidy(_text(record.get("title"), "title"))
    abstract = tidy(_text(record.get("abstract"), "abstract"))
    _require_text(paper_id, title, abstract)
    links = [
        Link(kind, url)
        for kind, url in (
            ("page", _url(record.get("site"))),
            ("pdf", _url(record.get("pdf"))),
            ("proceedings", _url(record.get("oa"))),
        )
        if url
    ]
    status = record.get("status")
    return Paper(
        id=f"{slug}/{paper_id}",
        title=title or _headline_fallback(abstract),
        abstract=abstract,
        venue=venue,
        year=year,
        authors=_split_list(record.get("author"), "author"),
        links=tuple(links),
        status=status if isinstance(status, str) and status else None,
        keywords=_split_list(record.get("keywords"), "keywords"),
        title_derived=not title,
    )


def paper_from_beir(record: dict[str, Any], venue: str) -> Paper:
    raw_id = record.get("_id")
    if isinstance(raw_id, int) and not isinstance(raw_id, bool):
        raw_id = str(raw_id)
    paper_id = _text(raw_id, "_id").strip()
    title = tidy(_text(record.get("title"), "title"))
    abstract = tidy(_text(record.get("text"), "text"))
    _require_text(paper_id, title, abstract)
    return Paper(
        id=paper_id,
        title=title or _headline_fallback(abstract),
        abstract=abstract,
        venue=venue,
        title_derived=not title,
    )


def _headline_fallback(abstract: str, words: int = 12) -> str:
    first = re.split(r"(?<=[.!?])\s", abstract, maxsplit=1)[0]
    parts = first.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


# --- reading files -------------------------------------------------------------------------


def _jsonl_records(path: Path, report: LoadReport) -> Iterator[tuple[int, dict[str, Any]]]:
    def skip(reason: str) -> None:
        report.problems.append(reason)
        report.skipped += 1

    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if len(raw) > MAX_LINE_BYTES:
                skip(f"{path}:{number}: line of {len(raw):,} bytes is too long")
                continue
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                skip(f"{path}:{number}: not valid UTF-8 ({exc.reason})")
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                skip(f"{path}:{number}: malformed JSON ({exc.msg})")
                continue
            if not isinstance(record, dict):
                skip(f"{path}:{number}: expected an object, got {type(record).__name__}")
                continue
            yield number, record


def _json_array_records(path: Path, report: LoadReport) -> Iterator[tuple[int, dict[str, Any]]]:
    """Records of a JSON array with their line numbers; a broken record is skipped, not fatal."""
    problems = report.problems
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        problems.append(
            f"{path}:{line}: not valid UTF-8 ({exc.reason}); the file was "
            f"read with replacement characters"
        )
        text = data.decode("utf-8", errors="replace")
    decoder = json.JSONDecoder()
    pos = len(text) - len(text.lstrip())
    if not text[pos : pos + 1] == "[":
        problems.append(f"{path}:1: expected a JSON array of paper records")
        return
    pos += 1
    length = len(text)
    closing = len(text.rstrip()) - 1  # where the array's own `]` must be
    while pos < length:
        while pos < length and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= length:
            problems.append(
                f"{path}:{text.count(chr(10), 0, pos) + 1}: file ends before the closing ]"
            )
            return
        if text[pos] == "]" and pos == closing:
            return  # any other `]` is a nested one met while skipping a broken record
        line = text.count("\n", 0, pos) + 1
        try:
            record, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{line}: malformed JSON ({exc.msg})")
            report.skipped += 1
            nxt = text.find("\n", pos)
            if nxt < 0:
                break
            pos = nxt + 1
            continue
        pos = end
        if not isinstance(record, dict):
            problems.append(f"{path}:{line}: expected an object, got {type(record).__name__}")
            report.skipped += 1
            continue
        yield line, record
    # Text ended right after a record (or the `[`): the array was cut short all the same.
    problems.append(f"{path}:{text.count(chr(10)) + 1}: file ends before the closing ]")


def detect_format(path: Path) -> str:
    """'paperlist' for a .json array; for JSON Lines, 'beir' when records use `_id`."""
    if path.suffix.lower() == ".json":
        return "paperlist"
    with path.open("rb") as handle:
        for raw in handle:
            if raw.strip():
                head = raw[:MAX_LINE_BYTES]
                return "beir" if b'"_id"' in head else "jsonl"
    return "jsonl"


def load_file(
    path: Path,
    *,
    exclude_status: Iterable[str] = ("Reject", "Withdraw"),
    report: LoadReport | None = None,
    progress: Callable[[int], None] | None = None,
) -> LoadReport:
    """Append the papers of one file to `report` (a new one by default)."""
    report = report or LoadReport()
    report.files.append(path)
    if not path.is_file():
        report.problems.append(f"{path}: no such file")
        return report
    fmt = detect_format(path)
    excluded = {s.casefold() for s in exclude_status}
    venue, year = venue_from_filename(path)
    slug = path.stem.lower()
    if fmt == "beir":
        venue = path.parent.name if path.stem == "corpus" else path.stem
        venue = {"scifact": "SciFact"}.get(venue.lower(), venue)
    records = (
        _json_array_records(path, report) if fmt == "paperlist" else _jsonl_records(path, report)
    )
    seen = {p.id for p in report.papers}
    for line, record in records:
        if progress:
            progress(line)
        try:
            if fmt == "paperlist":
                paper = paper_from_paperlist(record, venue, year, slug)
            elif fmt == "beir":
                paper = paper_from_beir(record, venue)
            else:
                paper = paper_from_project(record, venue)
        except RecordError as exc:
            report.problems.append(f"{path}:{line}: {exc}")
            report.skipped += 1
            continue
        if paper.status and paper.status.casefold() in excluded:
            report.skipped += 1
            continue
        if paper.id in seen:
            report.problems.append(f"{path}:{line}: duplicate id {paper.id!r} dropped")
            report.skipped += 1
            continue
        seen.add(paper.id)
        report.papers.append(paper)
    return report


def load_corpus(
    paths: Iterable[Path], *, exclude_status: Iterable[str] = ("Reject", "Withdraw")
) -> LoadReport:
    """Load every file; raise `CorpusError` only when nothing usable came out of all of them."""
    report = LoadReport()
    exclude = tuple(exclude_status)
    for path in paths:
        load_file(Path(path), exclude_status=exclude, report=report)
    for problem in report.problems:
        log.warning("%s", problem)
    if not report.papers:
        names = ", ".join(str(p) for p in report.files) or "(no files configured)"
        first = "; ".join(report.problems[:3])
        raise CorpusError(f"no usable paper in {names}" + (f": {first}" if first else ""))
    log.info("%s", report.summary())
    return report

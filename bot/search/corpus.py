"""Corpus files to `Paper` records, with every problem reported as `file:line: reason`.

Three formats, detected per file:
- the project's JSON Lines (`id`, `venue`, `year`, `title`, `authors`, `abstract`, `links`, ...);
- a Paper Copilot conference list (`colm2025.json`: a JSON array; `author` and `keywords` are
  `;`-separated strings; papers whose `status` is in `EXCLUDED_STATUSES` are left out);
- a BEIR `corpus.jsonl` (`_id`, `title`, `text`).

A bad record never stops a load and never vanishes silently: it is reported and skipped.
Only a corpus with no usable paper at all is fatal.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from bot.config import EXCLUDED_STATUSES
from bot.search.models import Link, Paper

log = logging.getLogger(__name__)

# Longest line we parse; a multi-megabyte line is a broken file, not a paper.
MAX_LINE_BYTES = 1_000_000
# Longest title and abstract kept: beyond is a broken record, cut with a warning, so that one
# paper cannot make indexing, snippets and every reply showing it slow.
MAX_TITLE = 1_000
MAX_ABSTRACT = 20_000

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
TOO_DEEP = "too deeply nested"


class CorpusError(Exception):
    """No usable paper could be loaded; the message names the files and the first problems."""


class ProblemKind(StrEnum):
    """What went wrong, so callers decide by kind instead of matching English messages."""

    MISSING = "missing"  # the file is not there (or is not a file)
    NOT_ARRAY = "not-array"  # a .json file that is not a JSON array
    TRUNCATED = "truncated"  # a JSON array cut before its closing ]
    MALFORMED = "malformed"  # a line that is not JSON: broken, not UTF-8, too long, too deep
    INVALID = "invalid"  # valid JSON that is not a usable paper record
    DUPLICATE = "duplicate"  # a paper id seen before
    CUT = "cut"  # an absurd title or abstract cut to MAX_TITLE / MAX_ABSTRACT (paper kept)


FILE_LEVEL = frozenset({ProblemKind.MISSING, ProblemKind.NOT_ARRAY, ProblemKind.TRUNCATED})
DAMAGE = FILE_LEVEL | {ProblemKind.MALFORMED}


@dataclass(frozen=True, slots=True)
class LoadProblem:
    """One problem met while loading: where (`path`, `line` or None for the file) and what."""

    path: Path
    line: int | None
    kind: ProblemKind
    text: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else str(self.path)
        return f"{where}: {self.text}"

    @property
    def damage(self) -> bool:
        """The file itself is broken (cut, garbled, missing), not just one odd record."""
        return self.kind in DAMAGE

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "line": self.line,
            "kind": str(self.kind),
            "text": self.text,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LoadProblem:
        return cls(Path(data["path"]), data.get("line"), ProblemKind(data["kind"]), data["text"])


@dataclass
class LoadReport:
    # A list while files are read; a saved PaperStore when the engine loaded one instead.
    papers: Sequence[Paper] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)
    skipped: int = 0
    files: list[Path] = field(default_factory=list)

    def problem(
        self, path: Path, line: int | None, kind: ProblemKind, text: str, *, skip: bool = True
    ) -> None:
        """Record a problem; every kind but a missing or cut file also skips one record."""
        self.problems.append(LoadProblem(path, line, kind, text))
        if skip and kind not in FILE_LEVEL:
            self.skipped += 1

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


def added_stamp(value: Any) -> str | None:
    """An `added` value as `YYYY-MM-DDTHH:MM:SSZ` (UTC), the one spelling /new compares."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise RecordError("added must be an ISO-8601 date-time string")
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise RecordError(f"added is not an ISO-8601 date-time: {value!r}") from exc
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _require_text(paper_id: str, title: str, abstract: str) -> None:
    if not paper_id:
        raise RecordError("missing id")
    if not title and not abstract:
        raise RecordError(f"paper {paper_id!r} has neither title nor abstract")


def _paper(
    record: dict[str, Any],
    paper_id: str,
    title: str,
    abstract: str,
    venue: str,
    year: int | None,
    authors_key: str,
    links: list[Link],
    derived: bool = False,
    added: str | None = None,
) -> Paper:
    """A paper from what each record shape reads its own way (id, title, abstract, venue, year,
    links) and the fields project files and conference lists spell alike."""
    status = record.get("status")
    return Paper(
        id=paper_id,
        title=title or _headline_fallback(abstract),
        abstract=abstract,
        venue=venue,
        year=year,
        authors=_split_list(record.get(authors_key), authors_key),
        links=tuple(links),
        status=status if isinstance(status, str) and status else None,
        keywords=_split_list(record.get("keywords"), "keywords"),
        tldr=tidy(_text(record.get("tldr"), "tldr")),
        bibtex=_text(record.get("bibtex"), "bibtex").strip(),
        title_derived=derived or not title,
        added=added,
    )


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
    venue = _text(record.get("venue"), "venue").strip() or default_venue
    year, added = _year(record.get("year")), added_stamp(record.get("added"))
    derived = bool(record.get("title_derived"))
    return _paper(record, paper_id, title, abstract, venue, year, "authors", links, derived, added)


def _listed_core(record: dict[str, Any], id_key: str, abstract_key: str) -> tuple[str, str, str]:
    """Id, title and abstract of a conference-list or BEIR record (numeric ids accepted)."""
    raw_id = record.get(id_key)
    if isinstance(raw_id, int) and not isinstance(raw_id, bool):
        raw_id = str(raw_id)
    paper_id = _text(raw_id, id_key).strip()
    title = tidy(_text(record.get("title"), "title"))
    abstract = tidy(_text(record.get(abstract_key), abstract_key))
    _require_text(paper_id, title, abstract)
    return paper_id, title, abstract


def paper_from_paperlist(record: dict[str, Any], venue: str, year: int | None, slug: str) -> Paper:
    paper_id, title, abstract = _listed_core(record, "id", "abstract")
    links = [
        Link(kind, url)
        for kind, url in (
            ("page", _url(record.get("site"))),
            ("pdf", _url(record.get("pdf"))),
            ("proceedings", _url(record.get("oa"))),
        )
        if url
    ]
    return _paper(record, f"{slug}/{paper_id}", title, abstract, venue, year, "author", links)


def paper_from_beir(record: dict[str, Any], venue: str) -> Paper:
    paper_id, title, abstract = _listed_core(record, "_id", "text")
    return Paper(
        id=paper_id,
        title=title or _headline_fallback(abstract),
        abstract=abstract,
        venue=venue,
        title_derived=not title,
    )


def _cut(text: str, limit: int) -> str:
    """`text`, or when longer than `limit` its start cut at a word and marked "…"."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    return (head[:space] if space > limit * 0.9 else head).rstrip() + "…"


def capped(paper: Paper) -> tuple[Paper, list[str]]:
    """`paper` with an absurd title or abstract cut at a word near the limit, and a note each."""
    notes = [
        f"{name} of {len(text):,} characters cut to {limit:,}"
        for name, text, limit in (
            ("title", paper.title, MAX_TITLE),
            ("abstract", paper.abstract, MAX_ABSTRACT),
        )
        if len(text) > limit
    ]
    if not notes:
        return paper, notes
    title, abstract = _cut(paper.title, MAX_TITLE), _cut(paper.abstract, MAX_ABSTRACT)
    return replace(paper, title=title, abstract=abstract), notes


def _headline_fallback(abstract: str, words: int = 12) -> str:
    first = re.split(r"(?<=[.!?])\s", abstract, maxsplit=1)[0]
    parts = first.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


# --- reading files -------------------------------------------------------------------------


def _jsonl_records(path: Path, report: LoadReport) -> Iterator[tuple[int, dict[str, Any]]]:
    bad = ProblemKind.MALFORMED
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if len(raw) > MAX_LINE_BYTES:
                report.problem(path, number, bad, f"line of {len(raw):,} bytes is too long")
                continue
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                report.problem(path, number, bad, f"not valid UTF-8 ({exc.reason})")
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                report.problem(path, number, bad, f"malformed JSON ({exc.msg})")
                continue
            except RecursionError:  # `[[[[…` deeper than the parser's stack
                report.problem(path, number, bad, TOO_DEEP)
                continue
            if not isinstance(record, dict):
                report.problem(
                    path,
                    number,
                    ProblemKind.INVALID,
                    f"expected an object, got {type(record).__name__}",
                )
                continue
            yield number, record


def _json_array_records(path: Path, report: LoadReport) -> Iterator[tuple[int, dict[str, Any]]]:
    """Records of a JSON array with their line numbers; a broken record is skipped, not fatal."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        report.problem(
            path,
            line,
            ProblemKind.MALFORMED,
            f"not valid UTF-8 ({exc.reason}); the file was read with replacement characters",
            skip=False,
        )
        text = data.decode("utf-8", errors="replace")
    decoder = json.JSONDecoder()
    pos = len(text) - len(text.lstrip())
    if text[pos : pos + 1] != "[":
        report.problem(path, 1, ProblemKind.NOT_ARRAY, "expected a JSON array of paper records")
        return
    pos += 1
    length = len(text)
    closing = len(text.rstrip()) - 1  # where the array's own `]` must be
    cut = "file ends before the closing ]"
    while pos < length:
        while pos < length and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= length:
            report.problem(path, text.count("\n", 0, pos) + 1, ProblemKind.TRUNCATED, cut)
            return
        if text[pos] == "]" and pos == closing:
            return  # any other `]` is a nested one met while skipping a broken record
        line = text.count("\n", 0, pos) + 1
        try:
            record, end = decoder.raw_decode(text, pos)
        except (json.JSONDecodeError, RecursionError) as exc:
            reason = (
                f"malformed JSON ({exc.msg})" if isinstance(exc, json.JSONDecodeError) else TOO_DEEP
            )
            report.problem(path, line, ProblemKind.MALFORMED, reason)
            nxt = text.find("\n", pos)
            if nxt < 0:
                break
            pos = nxt + 1
            continue
        pos = end
        if not isinstance(record, dict):
            report.problem(
                path, line, ProblemKind.INVALID, f"expected an object, got {type(record).__name__}"
            )
            continue
        yield line, record
    # Text ended right after a record (or the `[`): the array was cut short all the same.
    report.problem(path, text.count("\n") + 1, ProblemKind.TRUNCATED, cut)


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
    exclude_status: Iterable[str] = EXCLUDED_STATUSES,
    report: LoadReport | None = None,
    progress: Callable[[int], None] | None = None,
) -> LoadReport:
    """Append the papers of one file to `report` (a new one by default)."""
    report = report or LoadReport()
    report.files.append(path)
    if not path.is_file():
        what = "is a directory, not a corpus file" if path.is_dir() else "no such file"
        report.problem(path, None, ProblemKind.MISSING, what)
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
    added: list[Paper] = []
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
            report.problem(path, line, ProblemKind.INVALID, str(exc))
            continue
        paper, notes = capped(paper)
        for note in notes:
            report.problem(path, line, ProblemKind.CUT, note, skip=False)
        if paper.status and paper.status.casefold() in excluded:
            report.skipped += 1
            continue
        if paper.id in seen:
            report.problem(path, line, ProblemKind.DUPLICATE, f"duplicate id {paper.id!r} dropped")
            continue
        seen.add(paper.id)
        added.append(paper)
    report.papers = [*report.papers, *added]
    return report


def load_corpus(
    paths: Iterable[Path], *, exclude_status: Iterable[str] = EXCLUDED_STATUSES
) -> LoadReport:
    """Load every file; raise `CorpusError` when a configured file is missing (a mistyped path
    must not pass as a warning) or when nothing usable came out of all of them."""
    report = LoadReport()
    exclude = tuple(exclude_status)
    for path in paths:
        load_file(Path(path), exclude_status=exclude, report=report)
    missing = [p for p in report.problems if p.kind is ProblemKind.MISSING]
    if missing:
        raise CorpusError("; ".join(map(str, missing)))
    for problem in report.problems:
        log.warning("%s", problem)
    if not report.papers:
        names = ", ".join(str(p) for p in report.files) or "(no files configured)"
        first = "; ".join(map(str, report.problems[:3]))
        raise CorpusError(f"no usable paper in {names}" + (f": {first}" if first else ""))
    log.info("%s", report.summary())
    return report

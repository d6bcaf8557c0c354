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
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import chain
from pathlib import Path
from typing import Any

from bot.config import EXCLUDED_STATUSES
from bot.papers.formats import (
    RecordError,
    capped,
    paper_from_beir,
    paper_from_paperlist,
    paper_from_project,
)
from bot.papers.grouping import Merge, Plan, merge_lists, merged_stream
from bot.papers.records import Paper

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

    def summary(self, count: int | None = None) -> str:
        """One line for the log; `count` papers when they are not in `papers` (streamed)."""
        names = ", ".join(p.name for p in self.files)
        count = len(self.papers) if count is None else count
        return (
            f"loaded {count} papers from {len(self.files)} file(s) ({names}); "
            f"skipped {self.skipped}"
        )


def venue_from_filename(path: Path) -> tuple[str, int | None]:
    """`colm2025.json` -> ("COLM 2025", 2025); unknown names keep their stem."""
    match = _VENUE_FILE.match(path.stem)
    if not match:
        return path.stem, None
    name, year = match.group(1).lower(), int(match.group(2))
    return f"{VENUE_NAMES.get(name, name.upper())} {year}", year


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
    # Line numbers counted on from the last record, not from the start each time: counting
    # from 0 made reading a 2 MB list quadratic (3 s of the 4 s the six paper lists took).
    line, counted = 1, 0
    while pos < length:
        while pos < length and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= length:
            report.problem(path, text.count("\n", 0, pos) + 1, ProblemKind.TRUNCATED, cut)
            return
        if text[pos] == "]" and pos == closing:
            return  # any other `]` is a nested one met while skipping a broken record
        line += text.count("\n", counted, pos)
        counted = pos
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
    seen = {p.id for p in report.papers}
    added = list(iter_file(path, exclude_status, report, seen, progress))
    report.papers = [*report.papers, *added]
    return report


def iter_file(
    path: Path,
    exclude_status: Iterable[str],
    report: LoadReport,
    seen: set[str],
    progress: Callable[[int], None] | None = None,
) -> Iterator[Paper]:
    """The papers of one file, one at a time, problems recorded in `report` as they are met;
    `seen` holds the ids already loaded (duplicates are reported and dropped) and grows.

    A streamed index build (`bot.search.index.streamed`) never holds every paper at once."""
    report.files.append(path)
    if not path.is_file():
        what = "is a directory, not a corpus file" if path.is_dir() else "no such file"
        report.problem(path, None, ProblemKind.MISSING, what)
        return
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
        yield paper


def check_loaded(report: LoadReport, count: int) -> None:
    """What `load_corpus` does once every file is read (`count` papers): a missing file or
    no usable paper at all is a `CorpusError`; the problems are logged, then a summary."""
    missing = [p for p in report.problems if p.kind is ProblemKind.MISSING]
    if missing:
        raise CorpusError("; ".join(map(str, missing)))
    for problem in report.problems:
        log.warning("%s", problem)
    if not count:
        names = ", ".join(str(p) for p in report.files) or "(no files configured)"
        first = "; ".join(map(str, report.problems[:3]))
        raise CorpusError(f"no usable paper in {names}" + (f": {first}" if first else ""))


def iter_corpus(
    paths: Iterable[Path],
    exclude_status: Iterable[str],
    report: LoadReport,
    seen: set[str],
    merges: list[Merge] | None = None,
) -> Iterator[Paper]:
    """The papers of every file, versions of one work merged into one paper
    (`bot.papers.versions`; the merges made are appended to `merges`). One file is read once;
    several are read twice: a first pass hashes each paper's matching keys, the second holds
    back only the papers that may have a version in another file."""
    files = [Path(p) for p in paths]
    exclude = tuple(exclude_status)
    if len(files) < 2:
        for path in files:
            yield from iter_file(path, exclude, report, seen)
        return
    plan = Plan()
    first = set(seen)  # the first pass sees exactly the papers the second keeps
    for source, path in enumerate(files):
        for paper in iter_file(path, exclude, LoadReport(), first):
            plan.add(paper, source)
    plan.finish()
    yield from merged_stream((iter_file(p, exclude, report, seen) for p in files), plan, merges)


def load_corpus(
    paths: Iterable[Path], *, exclude_status: Iterable[str] = EXCLUDED_STATUSES
) -> LoadReport:
    """Load every file, versions of one work merged (`iter_corpus`); raise `CorpusError` when
    a configured file is missing (a mistyped path must not pass as a warning) or when nothing
    usable came out of all of them."""
    report = LoadReport()
    exclude, seen = tuple(exclude_status), set[str]()
    per_file = [list(iter_file(Path(path), exclude, report, seen)) for path in paths]
    # Read once: the plan is made from the papers in memory, the order is `iter_corpus`'s.
    report.papers = merge_lists(per_file) if len(per_file) > 1 else [*chain(*per_file)]
    check_loaded(report, len(report.papers))
    log.info("%s", report.summary())
    return report

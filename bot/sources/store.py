"""A fetched corpus file (`--out`): its records by stable id, merged page by page, saved atomically,
with a small resume file so an interrupted fetch goes on where it stopped.

Merge rules, in order:
- a record whose id (or `source_id`, for a seed paper that met its real record) is known updates
  it in place: `added` is kept, an older arXiv version never replaces a newer one;
- else a record whose abstract matches an existing record without a source (the seed) gives that
  paper its real title, authors and links: it keeps its id, records `source_id`, loses
  `title_derived`;
- else it is appended with `added` = the time of this fetch (first seen by this corpus).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.papers.files import atomic_file, write_jsonl

log = logging.getLogger(__name__)

_NOT_WORD = re.compile(r"[\W_]+")


def abstract_key(text: str) -> str:
    """The abstract reduced to lower-case letters and digits: spacing, markup and line breaks
    differ between a seed file and the source, the words do not."""
    return _NOT_WORD.sub("", text.casefold())


@dataclass(slots=True)
class MergeCounts:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    seed_matched: int = 0
    added_ids: list[str] = field(default_factory=list)

    def text(self) -> str:
        parts = [f"{self.added} new", f"{self.updated} updated", f"{self.unchanged} unchanged"]
        if self.seed_matched:
            parts.append(f"{self.seed_matched} seed paper(s) matched")
        return ", ".join(parts)


class CorpusFile:
    """The records of one project JSONL file, keyed by id, in file order."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: dict[str, dict[str, Any]] = {}
        self.aliases: dict[str, str] = {}  # source id -> the id the paper keeps (seed papers)
        self.unmatched: dict[str, str] = {}  # abstract key -> id, for records with no source
        self.problems: list[str] = []
        if path.is_file():
            self._read()

    def _read(self) -> None:
        with self.path.open(encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    self.problems.append(
                        f"{self.path}:{number}: malformed JSON ({exc.msg}), kept out"
                    )
                    continue
                if not isinstance(record, dict) or not isinstance(record.get("id"), str):
                    self.problems.append(f"{self.path}:{number}: a record without an id, kept out")
                    continue
                self._index(record)

    def _index(self, record: dict[str, Any]) -> None:
        paper_id = record["id"]
        self.records[paper_id] = record
        source = record.get("source_id")
        if isinstance(source, str):
            self.aliases[source] = paper_id
        elif ":" not in paper_id and isinstance(record.get("abstract"), str):
            self.unmatched.setdefault(abstract_key(record["abstract"]), paper_id)

    def merge(self, record: dict[str, Any], now: str, counts: MergeCounts) -> None:
        source_id = record["id"]
        target = self.aliases.get(source_id, source_id)
        old = self.records.get(target)
        if old is None:
            seed = self.unmatched.pop(abstract_key(record.get("abstract", "")), None)
            if seed is not None:
                self.records[seed] = self._adopt(self.records[seed], record)
                self.aliases[source_id] = seed
                counts.seed_matched += 1
                counts.updated += 1
                return
            self.records[source_id] = {**record, "added": now}
            counts.added += 1
            counts.added_ids.append(source_id)
            return
        if _version(record) < _version(old):
            counts.unchanged += 1
            return
        new = {**old, **record, "id": target, "added": old.get("added")}
        if target != source_id:
            new["source_id"] = source_id
        if new == old:
            counts.unchanged += 1
        else:
            self.records[target] = new
            counts.updated += 1

    @staticmethod
    def _adopt(seed: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
        """The seed paper with the real record's fields; its id, its added time and the links
        it had that the source lacks (code URLs quoted in the abstract) stay."""
        urls = {link.get("url") for link in record.get("links", [])}
        links = list(record.get("links", [])) + [
            link for link in seed.get("links", []) if link.get("url") not in urls
        ]
        merged = {**seed, **record, "id": seed["id"], "source_id": record["id"], "links": links}
        merged["added"] = seed.get("added")
        merged.pop("title_derived", None)
        return merged

    def save(self) -> None:
        write_jsonl(self.path, self.records.values())


def _version(record: dict[str, Any]) -> int:
    version = record.get("version")
    return version if isinstance(version, int) and not isinstance(version, bool) else 0


@dataclass(slots=True)
class Resume:
    """Where an interrupted fetch stopped: the query it ran, the next offset, its start time."""

    query: str
    next: int
    started: str

    @staticmethod
    def path_for(out: Path) -> Path:
        return out.with_name(out.name + ".fetch.json")

    @classmethod
    def load(cls, out: Path, query: str) -> Resume | None:
        """The saved position when it belongs to the same query, else None (start over)."""
        path = cls.path_for(out)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("query") != query:
            return None
        nxt, started = data.get("next"), data.get("started")
        if not isinstance(nxt, int) or nxt < 0 or not isinstance(started, str):
            return None
        return cls(query, nxt, started)

    def save(self, out: Path) -> None:
        with atomic_file(self.path_for(out)) as handle:
            json.dump({"query": self.query, "next": self.next, "started": self.started}, handle)

    @classmethod
    def clear(cls, out: Path) -> None:
        cls.path_for(out).unlink(missing_ok=True)

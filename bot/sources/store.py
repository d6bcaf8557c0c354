"""A fetched corpus file (`--out`): its records by stable id, merged page by page, saved atomically,
with a small resume file so an interrupted fetch goes on where it stopped.

Merge rules, in order:
- a record whose id (or `source_id`, for a seed paper that met its real record) is known updates
  it in place: `added` is kept, an older arXiv version never replaces a newer one;
- else a record whose abstract matches an existing record without a source (the seed) gives that
  paper its real title, authors and links: it keeps its id, records `source_id`, loses
  `title_derived`;
- else it is appended with `added` = the time of this fetch (first seen by this corpus).

Several writers may update one file at once (a CLI fetch beside the bot's scheduled refresh,
two sources into one `--out`). Each page is committed under the file's lock (`commit`): the
file is read again if another writer changed it, the page merged into what is there, written,
and the lock released, so no writer's papers are lost and each counts only what it added.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.papers.corpus import MAX_LINE_BYTES
from bot.papers.files import atomic_file, file_lock, write_jsonl
from bot.papers.formats import MAX_ABSTRACT, MAX_TITLE

log = logging.getLogger(__name__)

_NOT_WORD = re.compile(r"[\W_]+")
# The largest fetched record written, as JSON: half the longest line the corpus reader takes
# (MAX_LINE_BYTES), leaving room for what a merge adds. A real paper (even one of a few
# thousand authors) is tens of KB; a record beyond this is a broken or hostile answer.
MAX_RECORD_BYTES = MAX_LINE_BYTES // 2


def oversize(record: dict[str, Any]) -> str | None:
    """Why `record` is too large to be a paper (its title, abstract or whole JSON), else None.

    The limits are the corpus reader's own (`MAX_TITLE`, `MAX_ABSTRACT`): a fetch must not
    write what a load would have to cut or refuse.
    """
    for name, limit in (("title", MAX_TITLE), ("abstract", MAX_ABSTRACT)):
        text = record.get(name)
        if isinstance(text, str) and len(text) > limit:
            return f"{name} of {len(text):,} characters, more than {limit:,}"
    size = len(json.dumps(record, ensure_ascii=False).encode("utf-8"))
    if size > MAX_RECORD_BYTES:
        return f"record of {size:,} bytes, more than {MAX_RECORD_BYTES:,}"
    return None


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
    """The records of one project JSONL file, keyed by id, in file order.

    `stamp` is the file as last read or written (device, inode, size, mtime): when the file on
    disk differs, another writer replaced it and `refresh` reads it again. `dirty` says that
    merges changed something not yet saved.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: dict[str, dict[str, Any]] = {}
        self.aliases: dict[str, str] = {}  # source id -> the id the paper keeps (seed papers)
        self.unmatched: dict[str, str] = {}  # abstract key -> id, for records with no source
        self.problems: list[str] = []
        self.stamp: tuple[int, int, int, int] | None = None
        self.dirty = False
        if path.is_file():
            self._read()

    def _read(self) -> None:
        self.records, self.aliases, self.unmatched, self.problems = {}, {}, {}, []
        self.dirty = False
        with self.path.open(encoding="utf-8", errors="replace") as handle:
            self.stamp = _stamp(os.fstat(handle.fileno()))
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
                except RecursionError:
                    self.problems.append(f"{self.path}:{number}: too deeply nested, kept out")
                    continue
                if not isinstance(record, dict) or not isinstance(record.get("id"), str):
                    self.problems.append(f"{self.path}:{number}: a record without an id, kept out")
                    continue
                self._index(record)

    def refresh(self) -> bool:
        """Read the file again if another writer replaced it since this one last read or wrote
        it (call under `file_lock`); True when it did. A file that vanished is not re-read:
        what this writer holds is written back rather than lost."""
        try:
            now = _stamp(self.path.stat())
        except FileNotFoundError:
            return False
        if now == self.stamp:
            return False
        self._read()
        return True

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
                self.dirty = True
                return
            self.records[source_id] = {**record, "added": now}
            counts.added += 1
            counts.added_ids.append(source_id)
            self.dirty = True
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
            self.dirty = True

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
        self.stamp = _stamp(self.path.stat())
        self.dirty = False


def _stamp(info: os.stat_result) -> tuple[int, int, int, int]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def commit(
    store: CorpusFile,
    records: Iterable[dict[str, Any]],
    now: str,
    counts: MergeCounts,
    query: str,
    resume: Resume | None,
) -> None:
    """One page into the file, under its lock: read the file again if another writer changed
    it, merge `records` into what is there (counting against it), write it when anything
    changed, then save this query's resume point (None: the query is done, drop it).

    Blocking (flock, file I/O): the fetcher runs it in a thread.
    """
    with file_lock(store.path):
        store.refresh()
        for record in records:
            store.merge(record, now, counts)
        if store.dirty:
            store.save()
        if resume is None:
            Resume.clear(store.path, query)
        else:
            resume.save(store.path)


def _version(record: dict[str, Any]) -> int:
    version = record.get("version")
    return version if isinstance(version, int) and not isinstance(version, bool) else 0


@dataclass(slots=True)
class Resume:
    """Where an interrupted fetch stopped: the query it ran, the next offset, its start time.

    One file per corpus file (`<out>.fetch.json`) holds a point per query, so fetches of
    several sources into one file keep each other's; it goes when the last point is dropped.
    Saving and clearing read and rewrite that file: callers hold the corpus file's lock.
    """

    query: str
    next: int
    started: str

    @staticmethod
    def path_for(out: Path) -> Path:
        return out.with_name(out.name + ".fetch.json")

    @classmethod
    def _points(cls, out: Path) -> dict[str, dict[str, Any]]:
        """Every saved point by query; a file of the older one-query form reads as one."""
        try:
            data = json.loads(cls.path_for(out).read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return {}
        if not isinstance(data, dict):
            return {}
        if isinstance(data.get("query"), str):
            return {data["query"]: data}
        points = data.get("queries")
        if not isinstance(points, dict):
            return {}
        return {q: p for q, p in points.items() if isinstance(p, dict)}

    @classmethod
    def load(cls, out: Path, query: str) -> Resume | None:
        """The saved position when it belongs to the same query, else None (start over)."""
        point = cls._points(out).get(query)
        if point is None:
            return None
        nxt, started = point.get("next"), point.get("started")
        if not isinstance(nxt, int) or nxt < 0 or not isinstance(started, str):
            return None
        return cls(query, nxt, started)

    def save(self, out: Path) -> None:
        points = self._points(out)
        points[self.query] = {"next": self.next, "started": self.started}
        self._write(out, points)

    @classmethod
    def clear(cls, out: Path, query: str) -> None:
        points = cls._points(out)
        if query in points:
            del points[query]
            cls._write(out, points)
        elif not points:  # no file, or one with no readable point: nothing worth keeping
            cls.path_for(out).unlink(missing_ok=True)

    @classmethod
    def _write(cls, out: Path, points: dict[str, dict[str, Any]]) -> None:
        if not points:
            cls.path_for(out).unlink(missing_ok=True)
            return
        with atomic_file(cls.path_for(out)) as handle:
            json.dump({"queries": points}, handle)

"""The paper store written one paper at a time, so a build never holds the whole corpus.

`StoreWriter` appends each paper's record (compressed a block at a time,
`bot.search.files.blocks`), id, title, first-seen stamp and authors to their files as the
corpus is read (`bot.search.index.streamed` streams a million papers through it); `finish`
adds what needs every paper (the records' block index, venue and year columns, id orders, the
title index) from the files just written, then meta.json with every file's size and digest.
The files are byte for byte what `PaperStore` reads; `save_store` is the same writer over a
list.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bot.papers.files import atomic_folder, file_digest
from bot.papers.records import Paper
from bot.search.files.blocks import BlockWriter
from bot.search.files.columns import id_orders, line_starts
from bot.search.files.paperstore import FILES, STORE_FORMAT, one_shot, record_bytes
from bot.search.suggest.titles import TitleIndex

_LINES = ("ids", "titles", "added", "authors")  # one line per paper, "\n" between them


# One for every line (see paperstore._RECORD).
_AUTHORS = one_shot(json.JSONEncoder(ensure_ascii=False))


class NotStorable(ValueError):
    """A paper id or title holds a line break: the store keeps them one per line."""


def storable(papers: Iterable[Paper]) -> bool:
    """Ids and titles are saved one per line: a line break in one rules the store out."""
    return not any(_broken(p) for p in papers)


def _broken(paper: Paper) -> bool:
    return "\n" in paper.id or "\n" in paper.title or "\r" in paper.id or "\r" in paper.title


def save_store(folder: Path, papers: Sequence[Paper], meta: dict[str, Any]) -> None:
    with atomic_folder(folder) as tmp:
        writer = StoreWriter(tmp)
        for paper in papers:
            writer.add(paper)
        writer.finish(meta)


class StoreWriter:
    """Papers appended to a store's files in `folder` (a temporary folder the caller renames)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.n = 0
        self._records = BlockWriter(folder)
        self._lines = {
            name: (folder / (f"{name}.txt" if name != "authors" else "authors.jsonl")).open(
                "w", encoding="utf-8", newline="\n"
            )
            for name in _LINES
        }
        self._venues: dict[str, int] = {}
        self._venue_codes = array("i")
        self._years = array("i")
        self._aliases: dict[str, str] = {}  # merged papers' other ids (meta.json)

    def add(self, paper: Paper) -> None:
        """Append one paper; `NotStorable` (and nothing written) when its id or title has a
        line break."""
        if _broken(paper):
            raise NotStorable(f"paper id or title with a line break: {paper.id!r}")
        sep = "\n" if self.n else ""
        self._records.add(record_bytes(paper))
        values = (paper.id, paper.title, paper.added or "")
        for name, value in zip(_LINES, values, strict=False):
            self._lines[name].write(sep + value)
        self._lines["authors"].write(sep + _AUTHORS(list(paper.authors)))
        self._venue_codes.append(self._venues.setdefault(paper.venue, len(self._venues)))
        self._years.append(paper.year or 0)
        self._aliases.update(dict.fromkeys(paper.aliases, paper.id))
        self.n += 1

    def close(self) -> None:
        self._records.close()
        for handle in self._lines.values():
            handle.close()

    def finish(self, meta: dict[str, Any]) -> None:
        """Close the files and write the rest of the store, meta.json last."""
        self.close()
        tmp, n = self.folder, self.n
        records_bytes = self._records.finish(tmp)
        venues = sorted(self._venues)
        recode = np.array([venues.index(v) for v in self._venues], dtype=np.int32)
        codes = np.frombuffer(self._venue_codes, dtype=np.int32)
        np.save(tmp / "venue_of.npy", recode[codes] if n else np.zeros(0, np.int32))
        np.save(tmp / "year_of.npy", np.frombuffer(self._years, dtype=np.int32).copy())
        for name in ("ids", "titles", "added"):
            data = (tmp / f"{name}.txt").read_bytes()
            np.save(tmp / f"{name}_at.npy", line_starts(data, n))
        forward, backward = id_orders(self._column("ids"))
        np.save(tmp / "id_order.npy", forward)
        np.save(tmp / "id_backward.npy", backward)
        TitleIndex.of(self._column("titles")).save(tmp)
        full = dict(
            meta,
            format=STORE_FORMAT,
            n_papers=n,
            venues=venues,
            records_bytes=records_bytes,
            aliases=self._aliases,
            files={
                name: {"bytes": (tmp / name).stat().st_size, "digest": file_digest(tmp / name)}
                for name in FILES
            },
        )
        (tmp / "meta.json").write_text(json.dumps(full, indent=1), encoding="utf-8")

    def _column(self, name: str) -> list[str]:
        text = (self.folder / f"{name}.txt").read_text(encoding="utf-8")
        return text.split("\n") if self.n else []

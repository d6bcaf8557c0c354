"""The parsed corpus saved next to the index, so a restart neither re-parses JSON nor keeps
every abstract in memory.

`PaperStore` is a `Sequence[Paper]` over compact JSON records (one per paper, compressed
in blocks: `bot.search.files.blocks`): `store[i]` decodes paper i when it is asked for (its
block decompressed on a miss of the block cache, ~0.1 ms), so the process holds only what
every request needs — ids, titles, venues and years — and the abstracts stay on disk (in the
page cache) until a hit shows them. Recently built papers are
kept (`RECENT` of them), so `store[i] is store[i]` while i is in use.

Trusted as far as it is cheap to: opening checks sizes and the meta, `check` the files that
decide a lookup by id and a sample of records (every start), the digest thread everything after
start-up, and every record read must decode to the paper its row names (else `DamagedFile`).

Written atomically (a temporary folder renamed into place; `bot.search.files.storewriter`), keyed
like the index it sits in.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from bot.papers.files import check_sizes, read_meta
from bot.papers.records import Link, Paper
from bot.search.caches import LRU
from bot.search.files.blocks import FILES as BLOCK_FILES
from bot.search.files.blocks import BlockReader
from bot.search.files.columns import (
    DamagedFile,
    IdLookup,
    OptionalColumn,
    Rows,
    StringColumn,
    map_file,
)
from bot.search.files.integrity import first_damage, identity
from bot.search.suggest.titles import FILES as TITLE_FILES
from bot.search.suggest.titles import TitleIndex

# 2: every file's size and digest in meta.json, checked at load; 3: `added` (first-seen)
# column; 4: TL;DR, BibTeX, authors.jsonl; 5: memory-mapped columns (line starts of ids,
# titles and stamps, id orders) and the title index; digests checked off the start-up path;
# 6: the inner words of titles (autocomplete inside a word); 7: records compressed in blocks
# (`bot.search.files.blocks`)
STORE_FORMAT = 7
_COLUMNS = ("ids", "titles", "added")
FILES = (
    *BLOCK_FILES,
    "ids.txt",
    "titles.txt",
    "authors.jsonl",
    "venue_of.npy",
    "year_of.npy",
    "added.txt",
    "ids_at.npy",
    "titles_at.npy",
    "added_at.npy",
    "id_order.npy",
    "id_backward.npy",
    *TITLE_FILES,
)
# Papers kept decoded: a page of hits is read two or three times (rank, snippet, render), and a
# few pages are open at once. Which papers comes from what users ask: bounded (~3 KB each).
RECENT = 512
# What `check` hashes at every start: everything a lookup by id reads (~2.8 MB at 100k papers).
QUICK_FILES = ("ids.txt", "ids_at.npy", "id_order.npy", "id_backward.npy")
SAMPLE = 16  # records `check` decodes, spread over the store


class StoreError(Exception):
    """A saved paper store is missing, stale or damaged; the caller re-reads the corpus."""


def one_shot(encoder: json.JSONEncoder) -> Callable[[Any], str]:
    """`encoder.encode`, without the C encoder it builds at every call (half the cost of
    encoding a paper's authors; a build encodes two lists per paper). Same text: the C
    encoder `JSONEncoder.iterencode` makes for a one-shot call, made once; plain
    `encoder.encode` where the C accelerator is missing."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None or encoder.indent is not None:
        return encoder.encode
    strings = json.encoder.encode_basestring_ascii if encoder.ensure_ascii else None
    try:  # CPython's private constructor (as `iterencode` calls it): if it ever changes, plain
        run = make(
            None,  # no circularity markers: records are fresh lists of strings and numbers
            encoder.default,
            strings or json.encoder.encode_basestring,
            encoder.indent,
            encoder.key_separator,
            encoder.item_separator,
            encoder.sort_keys,
            encoder.skipkeys,
            encoder.allow_nan,
        )
    except TypeError:
        return encoder.encode

    def encode(value: Any) -> str:
        if isinstance(value, str):  # as `encode`: the C encoder wants a container or number
            return encoder.encode(value)
        return "".join(run(value, 0))

    return encode


# One encoder for every record: `json.dumps` with options builds a new one per call, a
# measurable share of a million-paper build.
_RECORD = one_shot(json.JSONEncoder(ensure_ascii=False, separators=(",", ":")))


def record_bytes(paper: Paper) -> bytes:
    """One paper as the store saves it (`_paper` reads it back)."""
    return _RECORD(
        [
            paper.id,
            paper.title,
            paper.abstract,
            paper.venue,
            paper.year,
            list(paper.authors),
            [[link.kind, link.url] for link in paper.links],
            paper.status,
            list(paper.keywords),
            paper.title_derived,
            paper.added,
            paper.tldr,
            paper.bibtex,
            # Only a merged paper's record is longer: other records stay as they were.
            *([list(paper.aliases)] if paper.aliases else []),
        ]
    ).encode("utf-8")


def _paper(raw: bytes) -> Paper:
    (
        pid,
        title,
        abstract,
        venue,
        year,
        authors,
        links,
        status,
        keywords,
        derived,
        added,
        tldr,
        bibtex,
        *aliases,
    ) = json.loads(raw)
    return Paper(
        id=pid,
        title=title,
        abstract=abstract,
        venue=venue,
        year=year,
        authors=tuple(authors),
        links=tuple(Link(k, u) for k, u in links),
        status=status,
        keywords=tuple(keywords),
        title_derived=derived,
        added=added,
        tldr=tldr,
        bibtex=bibtex,
        aliases=tuple(aliases[0]) if aliases else (),
    )


def sample_positions(n: int) -> list[int]:
    """The records `PaperStore.check` decodes: `SAMPLE` of them, first and last included."""
    if n <= 0:
        return []
    return sorted({round(k * (n - 1) / (SAMPLE - 1)) for k in range(SAMPLE)})


def digests(meta: dict[str, Any]) -> dict[str, str]:
    """Every file's saved digest, for the check that runs after start-up (`integrity`)."""
    saved = meta.get("files")
    if not isinstance(saved, dict):
        return {}
    return {name: str((saved.get(name) or {}).get("digest")) for name in FILES}


class PaperStore(Rows[Paper]):
    """Papers of a saved store, built on access; columns for search kept in memory."""

    ROW = "paper"

    def __init__(self, folder: Path, expect: dict[str, Any]) -> None:
        """Open a saved store: sizes and meta are checked here, every file's digest after
        start-up (`digests`, `bot.search.files.integrity`), so a million papers open in
        milliseconds; nothing is parsed and the columns are memory-mapped."""
        meta = read_meta(folder, "paper store", STORE_FORMAT, expect, StoreError)
        check_sizes(folder, meta.get("files"), FILES, StoreError)
        n = meta.get("n_papers")
        if not isinstance(n, int):
            raise StoreError(f"{folder}: meta.json gives no paper count")
        try:
            self.records = BlockReader(folder)
            cols = {}
            for name in _COLUMNS:
                starts = np.load(folder / f"{name}_at.npy", mmap_mode="r", allow_pickle=False)
                path = folder / f"{name}.txt"
                cols[name] = StringColumn(map_file(path), starts, str(path))
            self.ids = cols["ids"]
            self.titles = cols["titles"]
            self.added = OptionalColumn(cols["added"])
            order, backward = (
                np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False)
                for name in ("id_order", "id_backward")
            )
            self.lookup = IdLookup(self.ids, order, backward)
            self.title_index = TitleIndex.open(folder, n)
            self.venue_of = np.load(folder / "venue_of.npy", mmap_mode="r", allow_pickle=False)
            self.year_of = np.load(folder / "year_of.npy", mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise StoreError(f"{folder}: cannot read paper store ({exc})") from exc
        self.venues: list[str] = meta.get("venues", [])
        # Other ids of merged papers -> the merged paper's id (`bot.papers.versions`).
        self.aliases: dict[str, str] = meta.get("aliases") or {}
        size = meta.get("records_bytes")
        if not (
            len(self.ids)
            == len(self.titles)
            == self.venue_of.shape[0]
            == self.year_of.shape[0]
            == len(self.added)
            == n
        ) or not self.records.fits(n, size):
            raise StoreError(f"{folder}: store files do not fit together")
        self.meta = meta
        self.folder = folder
        self.inode = identity(folder)  # which folder to mark damaged (`integrity.invalidate`)
        self._recent: LRU[int, Paper] = LRU(RECENT)

    def check(self) -> None:
        """StoreError unless the store passes the checks every start can afford (a few ms at
        100k papers): the digests of `QUICK_FILES`, since a damaged id column answers "No
        such paper" with no error at all; and `SAMPLE` records spread over the file, each
        decoding to the paper its row's id and title name (a records file overwritten
        whole). Every file is hashed after start-up (`bot.search.files.integrity`), and a
        damaged record is found when it is read (`row`)."""
        saved = digests(self.meta)
        problem = first_damage([(self.folder, {n: saved[n] for n in QUICK_FILES})])
        if problem is not None:
            raise StoreError(problem)
        try:
            for i in sample_positions(len(self)):
                if self._decoded(i).title != self.titles[i]:
                    raise DamagedFile(f"{self.folder}: titles.txt: title {i + 1} is another's")
        except DamagedFile as exc:
            raise StoreError(str(exc)) from exc

    def __len__(self) -> int:
        return len(self.ids)

    def author_lists(self) -> list[list[str]]:
        """Every paper's authors, in corpus order, without decoding the papers."""
        try:
            text = (self.folder / "authors.jsonl").read_text(encoding="utf-8")
            lists = [json.loads(line) for line in text.split("\n")] if self.ids else []
        except (OSError, ValueError) as exc:
            raise StoreError(f"{self.folder}: cannot read authors ({exc})") from exc
        if len(lists) != len(self.ids):
            raise StoreError(f"{self.folder}: authors.jsonl does not fit the store")
        return lists

    def row(self, i: int) -> Paper:
        paper = self._recent.get(i)
        if paper is None:
            paper = self._recent.put(i, self._decoded(i))
        return paper

    def __iter__(self) -> Iterator[Paper]:
        for i, raw in enumerate(self.records):
            yield self._checked(i, raw)

    def _decoded(self, i: int) -> Paper:
        return self._checked(i, self.records.record(i))

    def _checked(self, i: int, raw: bytes) -> Paper:
        """Paper i from its record; DamagedFile unless it decodes to a paper with the id the
        ids column gives row i (bytes overwritten, records or their index moved)."""
        where = f"{self.folder}: records.bin: paper {i + 1}"
        try:
            paper = _paper(raw)
        except (ValueError, TypeError) as exc:  # bad UTF-8 and bad JSON are ValueErrors
            raise DamagedFile(f"{where} does not decode ({type(exc).__name__})") from exc
        if paper.id != self.ids[i]:
            raise DamagedFile(f"{where} is not {self.ids[i]!r}")
        return paper

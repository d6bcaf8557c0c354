"""Phrase checks from a positional index: where each term occurs in each document.

Why positions: re-analysing every candidate's text cost ~15 s of CPU for `"learning model"` on
100k papers, and scanning every document's term sequence (index format 3) still touched every
token of every candidate (~20-60 ms at 100k, ten times that at 1M). With positions a phrase
touches only the occurrences of its own terms, in the documents that hold all of them, as
Lucene and Tantivy do.

Layout (saved with the index, memory-mapped): term t's occurrences are
`positions[pos_indptr[t]:pos_indptr[t + 1]]`, one run per posting in postings order (documents
ascending), each run the term's offsets in that document, ascending. A posting's run is as long
as its saved tf, which is capped at `MAX_TF`: a document repeating one word more than 65,535
times has its first 65,535 occurrences recorded (no paper comes near: abstracts are cut at
20,000 characters). Offsets are uint16 when every document is shorter than 65,537 tokens
(always, for papers), else uint32: 2 bytes per token, half of a term-id sequence.

Offsets count analysed tokens, so stopwords are not positions: "learning a model" holds the
phrase "learning model", as the analyzer sees both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np


def offset_dtype(longest: int) -> type[np.unsignedinteger]:
    """The narrowest dtype that holds every offset of documents of at most `longest` tokens."""
    return np.uint16 if longest <= 1 << 16 else np.uint32


def chunk_positions(
    sequence: np.ndarray, lengths: np.ndarray, cap: int, order: np.ndarray | None = None
) -> np.ndarray:
    """The offsets of a run of documents' tokens, in that run's postings order.

    `sequence` holds every token's term id, documents end to end (`lengths` tokens each). The
    result is grouped by term id, then document, then offset, which is the order of the run's
    postings (sorted by term, stable in corpus order), at most `cap` per (term, document).
    `order` is `np.argsort(sequence, kind="stable")` when the caller has it already (the
    sort is most of this function's time).
    """
    n = int(sequence.shape[0])
    longest = int(lengths.max()) if lengths.shape[0] else 0
    ends = np.cumsum(lengths, dtype=np.int64)
    offsets = np.arange(n, dtype=np.int64) - np.repeat(ends - lengths, lengths)
    if order is None:  # ties keep token order: doc, then offset
        order = np.argsort(sequence, kind="stable")
    out = offsets[order]
    if longest > cap:  # only then can one term occur more than `cap` times in a document
        term = sequence[order]
        doc = np.repeat(np.arange(lengths.shape[0]), lengths)[order]
        first = np.ones(n, dtype=bool)
        first[1:] = (term[1:] != term[:-1]) | (doc[1:] != doc[:-1])
        group_start = np.maximum.accumulate(np.where(first, np.arange(n), 0))
        out = out[np.arange(n) - group_start < cap]
    return np.asarray(out, dtype=offset_dtype(longest))


def run_destinations(cursor: np.ndarray, gmap: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Where a partial index's runs land in a merged array: local term i's `counts[i]` items go
    from `cursor[gmap[i]]` on (the caller then advances `cursor[gmap] += counts`)."""
    within = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(
        np.cumsum(counts) - counts, counts
    )
    dest: np.ndarray = cursor[np.repeat(gmap, counts)] + within
    return dest


def merge_positions(
    parts: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], n_terms: int
) -> tuple[np.ndarray, np.ndarray]:
    """(pos_indptr, positions) of partial indexes of consecutive documents, in corpus order.

    Each part is (its local-to-global term map, positions per local term, its positions from
    `chunk_positions`); a term's runs from later parts follow earlier ones, as its postings do.
    """
    per_term = np.zeros(n_terms, dtype=np.int64)
    for gmap, counts, _pos in parts:
        per_term[gmap] += counts  # a part's terms are distinct: no lost updates
    pos_indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(per_term, out=pos_indptr[1:])
    wide = any(pos.dtype != np.uint16 for _g, _c, pos in parts)
    positions = np.empty(int(pos_indptr[-1]), dtype=np.uint32 if wide else np.uint16)
    cursor = pos_indptr[:-1].copy()
    for gmap, counts, pos in parts:
        positions[run_destinations(cursor, gmap, counts)] = pos
        cursor[gmap] += counts
    return pos_indptr, positions


def positions_per_term(indptr: np.ndarray, tfs: np.ndarray) -> np.ndarray:
    """How many positions each term of a partial index has: the sum of its postings' tfs."""
    if not tfs.shape[0]:
        return np.zeros(indptr.shape[0] - 1, dtype=np.int64)
    return np.add.reduceat(tfs.astype(np.int64), indptr[:-1])


class Runs(NamedTuple):
    """Positional postings: per id (a term, or an adjacent pair of terms in
    `bot.search.index.pairs`), its documents ascending, its count in each, and its offsets in each.

    Run `g` covers postings `indptr[g]:indptr[g + 1]` and offsets
    `positions[pos_indptr[g]:pos_indptr[g + 1]]`, one run per posting in postings order.
    """

    indptr: np.ndarray
    doc_ids: np.ndarray
    tfs: np.ndarray
    pos_indptr: np.ndarray
    positions: np.ndarray

    def size(self, gid: int) -> int:
        """How many documents hold `gid`."""
        return int(self.indptr[gid + 1] - self.indptr[gid])

    def block(self, gid: int) -> np.ndarray:
        """The documents holding `gid`, ascending."""
        return np.asarray(self.doc_ids[self.indptr[gid] : self.indptr[gid + 1]])

    def occurrence_count(self, gid: int, sel: np.ndarray) -> int:
        """How many occurrences `gid` has in its postings `sel`."""
        return int(np.asarray(self.tfs[self.indptr[gid] + sel], dtype=np.int64).sum())

    def occurrences(self, gid: int, sel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(document, offset) of every occurrence of `gid` in its postings `sel` (ascending
        indices into its block), in order."""
        a = int(self.indptr[gid])
        if not sel.shape[0]:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        # Where each chosen posting's run starts in `positions`: the id's start plus the
        # tfs of its earlier postings (only up to the last chosen one are summed).
        tf = np.asarray(self.tfs[a : a + int(sel[-1]) + 1], dtype=np.int64)
        counts = tf[sel]
        first = int(self.pos_indptr[gid]) + np.cumsum(tf)[sel] - counts
        total = int(counts.sum())
        flat = np.repeat(first - (np.cumsum(counts) - counts), counts) + np.arange(total)
        offsets = np.asarray(self.positions)[flat].astype(np.int64)
        docs = np.repeat(np.asarray(self.doc_ids[a + sel], dtype=np.int64), counts)
        return docs, offsets


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of a sorted array (`np.unique` hashes or sorts again: slower)."""
    if not values.shape[0]:
        return values
    first = np.ones(values.shape[0], dtype=bool)
    np.not_equal(values[1:], values[:-1], out=first[1:])
    return values[first]

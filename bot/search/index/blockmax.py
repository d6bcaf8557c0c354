"""Per-term and per-block upper bounds of BM25 scores, computed once at build time and saved
with the index: what lets a top-k traversal (`bot.search.ranking.pruning`,
`bot/search/ranking/csrc/topk.c`) skip the blocks of documents that cannot reach the k-th
best score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np


class Postings(Protocol):
    """What the build reads postings from: a slice of positions gives an array."""

    def __getitem__(self, key: slice, /) -> np.ndarray: ...


BLOCK_SHIFT = 5  # 32 documents per block
# A term gets a stored row of block maxima (one byte per block) when its postings reach a
# quarter of the blocks; shorter lists have theirs computed at query time from the postings.
ROW_MIN_SHARE = 4
QUANT = 255  # block maxima are stored as ceil(255 * block max / term max) in one byte
# Relative slack on every bound: float64 sums of a few terms round by ~1e-16 relative.
SLACK = 1e-9


@dataclass(frozen=True, slots=True)
class BlockMax:
    """Per-term and per-block upper bounds of the BM25 saturation `tf*(k1+1)/(tf+norm)`.

    `term_max[t]` is term t's largest saturation; `rows[t]` is its row in `maxima` (or -1
    when its postings are short, see ROW_MIN_SHARE), where `maxima[row, b]` is the quantised
    bound of block b (0 where the term is absent). The bounds are of saturation, not score:
    idf is derived from the postings at load, and query weights vary.
    """

    shift: int
    term_max: np.ndarray
    rows: np.ndarray
    maxima: np.ndarray

    NAMES = ("term_max", "block_rows", "block_max")

    @classmethod
    def build(
        cls,
        indptr: np.ndarray,
        doc_ids: Postings,
        sat: Postings,
        n_docs: int,
        term_max: np.ndarray | None = None,
    ) -> BlockMax:
        """From the postings (`doc_ids`, `sat`: arrays, or anything sliced the same way, as
        the streamed build's files read by ranges) and each term's largest saturation
        (`term_maxima`, computed here when not given)."""
        shift = BLOCK_SHIFT
        n_blocks = (n_docs >> shift) + 1
        df = np.diff(indptr)
        if term_max is None:
            term_max = term_maxima(indptr, sat[0 : int(indptr[-1])])
        long_terms = np.flatnonzero(df >= max(1, n_blocks // ROW_MIN_SHARE))
        rows = np.full(df.shape[0], -1, dtype=np.int32)
        rows[long_terms] = np.arange(long_terms.shape[0], dtype=np.int32)
        maxima = np.zeros((long_terms.shape[0], n_blocks), dtype=np.uint8)
        for row, tid in enumerate(long_terms.tolist()):
            start, end = int(indptr[tid]), int(indptr[tid + 1])
            blocks, block_max = _block_maxima(doc_ids[start:end], sat[start:end], shift)
            ratio = block_max / term_max[tid] * (QUANT * (1 + 1e-6))
            maxima[row, blocks] = np.minimum(np.ceil(ratio), QUANT).astype(np.uint8)
        return cls(shift, term_max, rows, maxima)

    def arrays(self) -> dict[str, np.ndarray]:
        """What `BM25Index.save` writes (the block size is implied by the row length)."""
        return dict(zip(self.NAMES, (self.term_max, self.rows, self.maxima), strict=True))

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], n_docs: int) -> BlockMax | None:
        """The saved bounds, or None when they do not fit an index of `n_docs` documents."""
        term_max, rows, maxima = (arrays[name] for name in cls.NAMES)
        n_blocks = (n_docs >> BLOCK_SHIFT) + 1
        if maxima.ndim != 2 or maxima.shape[1] != n_blocks or rows.shape != term_max.shape:
            return None
        return cls(BLOCK_SHIFT, term_max, rows, maxima)


def term_maxima(indptr: np.ndarray, sat: np.ndarray, first: int = 0) -> np.ndarray:
    """Each term's largest saturation among `sat`, the postings from position `first` on
    (0 for a term with none there). By parts: `np.maximum` over the parts' results is the
    whole's, exactly."""
    out = np.zeros(indptr.shape[0] - 1, dtype=np.float64)
    end = first + sat.shape[0]
    lo = int(np.searchsorted(indptr, first, side="right")) - 1
    hi = int(np.searchsorted(indptr, end, side="left"))
    terms = np.arange(lo, hi)
    terms = terms[(indptr[terms + 1] > first) & (indptr[terms + 1] > indptr[terms])]
    if terms.size:
        starts = np.maximum(indptr[terms], first) - first
        out[terms] = np.maximum.reduceat(np.asarray(sat), starts)
    return out


def _block_maxima(docs: np.ndarray, sat: np.ndarray, shift: int) -> tuple[np.ndarray, np.ndarray]:
    """(blocks, largest saturation in each) of one postings list (doc ids ascending)."""
    block = np.asarray(docs) >> shift
    first = np.flatnonzero(np.diff(block)) + 1
    first = np.concatenate([np.zeros(1, dtype=first.dtype), first])
    return block[first], np.maximum.reduceat(np.asarray(sat), first)

"""Word order: papers that hold the query's words next to each other, as typed, rank higher.

BM25 scores a bag of words. People looking for a paper they half remember type its words in
its order — a title, a phrase of its abstract, a method name in two words — and another paper
can hold the same words scattered (or in its title, which counts double) and outrank it. The
sequential dependence model (Metzler & Croft, 2005) adds evidence from adjacent query-term
pairs; this is its lean form for BM25: for each pair of consecutive query terms, a paper
holding the pair as a run gains `weight` x the pair's idf (the mean of its two terms') x a
saturated count (c (k1 + 1) / (c + k1), like BM25's term frequency).

Only the best `RESCORE_DEPTH` matches are rescored (as Elasticsearch's rescore window): the
pairs are found from the index's term positions (`bot.search.index.positions`), only the occurrences
of the query's own terms in those papers, never by reading text; counted by the compiled
kernel (`bot.search.ranking.kernel`) where the install built it, else by numpy (`occurrences`). The
set of matches does not change (daily topic pools, totals and the weak-match cut stay those
of BM25), only their order.
Measured on SciFact train and the known-item training sets (docs/search-quality.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from weakref import WeakKeyDictionary

import numpy as np

from bot.search.caches import LRU
from bot.search.index.postings import BM25Index
from bot.search.ranking import kernel

RESCORE_DEPTH = 100  # matches rescored; the rest keep their BM25 order below them
_SHIFT = 32  # an occurrence's key: doc << 32 | offset (offsets are uint16 or uint32)
CHECKPOINT = 64  # postings between two remembered run starts of a term (`_run_starts`)
# Per index, per term: where every CHECKPOINT-th posting's run of offsets starts. The terms
# are those of the queries asked: up to 1/8 byte per posting of the whole index (16 MB at a
# million papers) if never dropped, so bounded by bytes (an array, plus its ~100 bytes).
RUN_STARTS_BYTES = 2 << 20
_RUN_STARTS: WeakKeyDictionary[BM25Index, LRU[int, np.ndarray]] = WeakKeyDictionary()


def run_starts_cache(index: BM25Index) -> LRU[int, np.ndarray]:
    """The run starts remembered for `index`'s terms."""
    found = _RUN_STARTS.get(index)
    if found is None:
        found = _RUN_STARTS.setdefault(index, LRU(RUN_STARTS_BYTES, lambda a: a.nbytes + 112))
    return found


def pair_bonus(
    index: BM25Index, terms: Sequence[str], docs: np.ndarray, k1: float = 1.2
) -> np.ndarray:
    """Per document of `docs`: the summed, idf-weighted, saturated counts of the query's
    consecutive term pairs that the document holds as runs (0.0 where it holds none)."""
    bonus = np.zeros(docs.shape[0], dtype=np.float64)
    if docs.shape[0] == 0 or index.positions.shape[0] != int(index.pos_indptr[-1]):
        return bonus  # no positions stored (an index without them)
    weights = _pairs(index, terms)
    if not weights:
        return bonus
    order = np.argsort(docs, kind="stable")
    ranked = docs[order]
    # Pairs of frequent words are indexed (`bot.search.index.pairs`): their counts are looked up.
    indexed = {pair: index.phrases.pair_counts(*pair, ranked) for pair in weights}
    for pair, counted in indexed.items():
        if counted is None:  # from the terms' positions, by the compiled kernel if built
            indexed[pair] = kernel.pair_counts(
                index, _term(index, pair[0]), _term(index, pair[1]), CHECKPOINT, ranked
            )
    keys: dict[int, np.ndarray] = {}  # per term: doc << 32 | offset, ascending
    for tid in {t for pair, counted in indexed.items() if counted is None for t in pair}:
        owner, offsets = occurrences(index, tid, ranked)
        keys[tid] = (owner.astype(np.int64) << _SHIFT) | offsets.astype(np.int64)
    for (a, b), idf in weights.items():
        counts = np.zeros(docs.shape[0], dtype=np.float64)
        counted = indexed[(a, b)]
        if counted is not None:
            counts[order] = counted
        elif keys[a].shape[0] and keys[b].shape[0]:
            first, second = keys[a], keys[b]
            # b right after a: offsets stay far below 2^32, so a run never spans two papers.
            at = np.minimum(np.searchsorted(second, first + 1), second.shape[0] - 1)
            found = first[second[at] == first + 1] >> _SHIFT
            rows = order[np.searchsorted(ranked, found)]
            counts = np.bincount(rows, minlength=docs.shape[0]).astype(np.float64)
        bonus += idf * counts * (k1 + 1) / (counts + k1)
    return bonus


def _term(index: BM25Index, tid: int) -> tuple[int, int, int, np.ndarray]:
    """Term `tid` as the compiled pair counter reads it: its postings' range, where its
    positions start, its run starts every CHECKPOINT postings."""
    a, b = int(index.indptr[tid]), int(index.indptr[tid + 1])
    return a, b, int(index.pos_indptr[tid]), _run_starts(index, tid, a, b)


def _pairs(index: BM25Index, terms: Sequence[str]) -> dict[tuple[int, int], float]:
    """The query's consecutive pairs of distinct known terms, each with its idf."""
    ids = [index.vocab.get(t) for t in terms]
    weights: dict[tuple[int, int], float] = {}
    for a, b in pairwise(ids):
        if a is not None and b is not None and a != b:
            weights[(a, b)] = (float(index.idf[a]) + float(index.idf[b])) / 2
    return weights


def bonus_bound(index: BM25Index, terms: Sequence[str], weight: float, k1: float = 1.2) -> float:
    """More than any document's bonus from `rescore` can be: every pair's saturated count
    stays below k1 + 1."""
    return weight * (k1 + 1) * sum(_pairs(index, terms).values())


def rescore(
    index: BM25Index,
    terms: Sequence[str],
    docs: np.ndarray,
    scores: np.ndarray,
    weight: float,
    depth: int = RESCORE_DEPTH,
) -> np.ndarray:
    """`scores` with the best `depth` documents' pair bonus (x `weight`) added. The best are
    chosen as `top_k` ranks (equal scores in corpus order), so a page computed from the best
    few hundred matches alone (`bot.search.ranking.pages`) rescores the same documents."""
    if weight <= 0 or len(terms) < 2 or scores.shape[0] == 0:
        return scores
    top = best_rows(docs, scores, depth)
    out = scores.copy()
    out[top] += weight * pair_bonus(index, terms, docs[top])
    return out


def best_rows(docs: np.ndarray, scores: np.ndarray, n: int) -> np.ndarray:
    """Positions of the n best (score descending, then document id ascending), in no order."""
    if scores.shape[0] <= n:
        return np.arange(scores.shape[0])
    threshold = np.partition(scores, scores.shape[0] - n)[scores.shape[0] - n]
    above = np.flatnonzero(scores > threshold)
    ties = np.flatnonzero(scores == threshold)
    ties = ties[np.argsort(docs[ties], kind="stable")][: n - above.shape[0]]
    return np.concatenate([above, ties])


def occurrences(index: BM25Index, tid: int, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(document, offset) of every occurrence of term `tid` in the ascending `docs`, documents
    ascending, offsets ascending in each: `index.phrases.occurrences_in` for a few documents.

    That one reads the term's whole postings (a mask gather and a prefix sum of its tfs, ~df
    operations: ~20 ms a query for common words at a million papers). Here each document is
    found by binary search, and its run of offsets from the run start remembered for every
    CHECKPOINT-th posting plus the tfs of at most CHECKPOINT - 1 postings before it.
    """
    a, b = int(index.indptr[tid]), int(index.indptr[tid + 1])
    block = np.asarray(index.doc_ids[a:b])
    empty = np.empty(0, np.int64)
    if a == b or not docs.shape[0]:
        return empty, empty
    at = np.minimum(np.searchsorted(block, docs), b - a - 1)
    sel = at[block[at] == docs].astype(np.int64)
    if not sel.shape[0]:
        return empty, empty
    tfs = np.asarray(index.tfs)
    counts = tfs[a + sel].astype(np.int64)
    base = sel // CHECKPOINT
    start = _run_starts(index, tid, a, b)[base]
    gap = sel - base * CHECKPOINT  # postings between the checkpoint and the chosen one
    if gap.any():
        step = np.arange(CHECKPOINT - 1)
        at_tf = np.minimum((a + base * CHECKPOINT)[:, None] + step, tfs.shape[0] - 1)
        start = start + (tfs[at_tf].astype(np.int64) * (step < gap[:, None])).sum(axis=1)
    first = int(index.pos_indptr[tid]) + start
    total = int(counts.sum())
    flat = np.repeat(first - (np.cumsum(counts) - counts), counts) + np.arange(total)
    return np.repeat(block[sel], counts), np.asarray(index.positions)[flat].astype(np.int64)


def _run_starts(index: BM25Index, tid: int, a: int, b: int) -> np.ndarray:
    """Where the runs of term `tid`'s postings 0, CHECKPOINT, 2 x CHECKPOINT ... start in its
    positions: one pass over its tfs, remembered per term while `RUN_STARTS_BYTES` allow."""
    per_term = run_starts_cache(index)
    found = per_term.get(tid)
    if found is None:
        ends = np.cumsum(np.asarray(index.tfs[a:b]), dtype=np.int64)
        found = np.concatenate([np.zeros(1, np.int64), ends[: b - a - 1]])[::CHECKPOINT].copy()
        per_term.put(tid, found)
    return found

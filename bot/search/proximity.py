"""Word order: papers that hold the query's words next to each other, as typed, rank higher.

BM25 scores a bag of words. People looking for a paper they half remember type its words in
its order — a title, a phrase of its abstract, a method name in two words — and another paper
can hold the same words scattered (or in its title, which counts double) and outrank it. The
sequential dependence model (Metzler & Croft, 2005) adds evidence from adjacent query-term
pairs; this is its lean form for BM25: for each pair of consecutive query terms, a paper
holding the pair as a run gains `weight` x the pair's idf (the mean of its two terms') x a
saturated count (c (k1 + 1) / (c + k1), like BM25's term frequency).

Only the best `RESCORE_DEPTH` matches are rescored (as Elasticsearch's rescore window): the
pairs are found in the index's stored term sequences (`BM25Index.forward`), never by reading
text, so a query costs one pass over those papers' terms. The set of matches does not change
(daily topic pools, totals and the weak-match cut stay those of BM25), only their order.
Measured on SciFact train and the known-item training sets (docs/search-quality.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from bot.search.index import BM25Index

RESCORE_DEPTH = 100  # matches rescored; the rest keep their BM25 order below them


def pair_bonus(
    index: BM25Index, terms: Sequence[str], docs: np.ndarray, k1: float = 1.2
) -> np.ndarray:
    """Per document of `docs`: the summed, idf-weighted, saturated counts of the query's
    consecutive term pairs that the document holds as runs (0.0 where it holds none)."""
    bonus = np.zeros(docs.shape[0], dtype=np.float64)
    forward, starts = index.forward, index.starts
    if docs.shape[0] == 0 or forward.shape[0] != int(starts[-1]):
        return bonus  # no term sequences stored (an index without positions)
    ids = [index.vocab.get(t) for t in terms]
    weights: dict[tuple[int, int], float] = {}
    for a, b in pairwise(ids):
        if a is not None and b is not None and a != b:
            weights[(a, b)] = (float(index.idf[a]) + float(index.idf[b])) / 2
    if not weights:
        return bonus
    vocab = np.int64(max(len(index.vocab), 1))
    keys = np.array([a * int(vocab) + b for a, b in weights], dtype=np.int64)
    order = np.argsort(keys)
    keys = keys[order]
    pair_idf = np.array(list(weights.values()), dtype=np.float64)[order]
    first, last = starts[docs], starts[docs + 1]
    lengths = (last - first).astype(np.int64)
    total = int(lengths.sum())
    if total < 2:
        return bonus
    # Every chosen document's terms end to end, and which document each one belongs to.
    owner = np.repeat(np.arange(docs.shape[0]), lengths)
    at = np.arange(total, dtype=np.int64) + np.repeat(
        first - (np.cumsum(lengths) - lengths), lengths
    )
    seq = np.asarray(forward)[at].astype(np.int64)
    codes = seq[:-1] * vocab + seq[1:]
    slot = np.minimum(np.searchsorted(keys, codes), keys.shape[0] - 1)
    hit = (keys[slot] == codes) & (owner[:-1] == owner[1:])  # a run never spans two papers
    counts = np.zeros((docs.shape[0], keys.shape[0]), dtype=np.float64)
    np.add.at(counts, (owner[:-1][hit], slot[hit]), 1.0)
    saturated = counts * (k1 + 1) / (counts + k1)
    return np.asarray(saturated @ pair_idf, dtype=np.float64)


def rescore(
    index: BM25Index,
    terms: Sequence[str],
    docs: np.ndarray,
    scores: np.ndarray,
    weight: float,
    depth: int = RESCORE_DEPTH,
) -> np.ndarray:
    """`scores` with the best `depth` documents' pair bonus (x `weight`) added."""
    if weight <= 0 or len(terms) < 2 or scores.shape[0] == 0:
        return scores
    n = min(depth, scores.shape[0])
    top = np.argpartition(-scores, n - 1)[:n] if scores.shape[0] > n else np.arange(n)
    out = scores.copy()
    out[top] += weight * pair_bonus(index, terms, docs[top])
    return out

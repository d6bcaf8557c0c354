"""A page of `/search` without scoring every match: the exact best hits, and a total that says
whether it is exact or a lower bound.

Scoring every posting of every query term costs ~16 ms at a million papers, and the best ten
need only a fraction of that (`bot.search.pruning`: block-max + MaxScore, exact). What pruning
cannot give is the number of matches (every paper at or above the weak-match cut,
`min_score_ratio` x the best score): counting them needs every score. So, as Lucene's TotalHits
(relation EQUAL_TO or GREATER_THAN_OR_EQUAL_TO) and Elasticsearch's "10000+ hits", the total is
exact when that is cheap to know and otherwise a true lower bound, flagged (`SearchResult.
total_exact`) and shown as "N+ matches". The bound is proven, never estimated:

- the best k are all matches, so there are at least k (k is one more than the page needs, so a
  lower bound always promises a next page);
- a term whose smallest possible contribution (tf 1 in the longest paper, x idf x its weight)
  reaches the cut makes every paper holding it a match: its document frequency (of the allowed
  papers) is a lower bound too;
- a query of one term is counted exactly: its scores are its postings' contributions alone.

Hits are the exhaustive path's to the bit: the same scores, the same cut (the best score is the
pruned one's first), ties in corpus order (`top_k`), and enough of them (`RESCORE_DEPTH` at
least) for the word-order bonus to rescore the same best 100 (`bot.search.proximity`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bot.search.index import BM25Index
from bot.search.pruning import MAX_SHARE, MIN_POSTINGS, prune

# Relative slack on the smallest contribution: the saved saturations round differently from
# the closed form by ~1e-16 relative.
SLACK = 1e-9


@dataclass(frozen=True, slots=True)
class PruneLimits:
    """When the engine tries pruning (`bot.search.pruning.prune`'s thresholds): below
    `min_postings` postings, or above `max_share` of them left to score, every match is
    scored instead. Tests lower them to force pruning on small corpora."""

    min_postings: int = MIN_POSTINGS
    max_share: float = MAX_SHARE


@dataclass(frozen=True, slots=True)
class Strongest:
    """The best matches (at most k, best first, ties in corpus order), all at or above the
    cut, and how many papers match in all (`exact`) or at least (not `exact`)."""

    ids: np.ndarray
    scores: np.ndarray
    total: int
    exact: bool


def saturation_floor(index: BM25Index) -> float:
    """The smallest saturation any posting can have: tf 1 in the longest paper."""
    if not index.n_docs:
        return 0.0
    k1 = index.params.k1
    return float((k1 + 1) / (1 + float(np.max(index.norm))))


def strongest(
    index: BM25Index,
    terms: Sequence[str],
    weights: Sequence[float] | None,
    k: int,
    allowed: np.ndarray | None,
    ratio: float,
    *,
    floor: float,
    limits: PruneLimits,
) -> Strongest | None:
    """The best k matches among the `allowed` papers (a bool per paper, None: all), cut at
    `ratio` x the best score as `SearchEngine._narrow` cuts, and their total; None where
    pruning cannot give the best k exactly (then every match is scored). `floor` is
    `saturation_floor(index)`, kept by the caller."""
    found = prune(
        index,
        terms,
        k,
        weights,
        allowed,
        min_postings=limits.min_postings,
        max_share=limits.max_share,
    )
    if found is None:
        return None
    ids, scores = found
    cut = 0.0
    if ratio > 0 and scores.shape[0]:
        cut = ratio * float(scores.max())
        strong = scores >= cut
        ids, scores = ids[strong], scores[strong]
    if ids.shape[0] < k:
        # Fewer than k at or above the cut among the k best: they are all the matches.
        return Strongest(ids, scores, int(ids.shape[0]), True)
    total, exact = _count(index, terms, weights, allowed, cut, floor, k)
    return Strongest(ids, scores, total, exact)


def _count(
    index: BM25Index,
    terms: Sequence[str],
    weights: Sequence[float] | None,
    allowed: np.ndarray | None,
    cut: float,
    floor: float,
    known: int,
) -> tuple[int, bool]:
    """(the number of matches, True) for a one-term query; else (a lower bound, False): the
    `known` matches found, or more where one term alone proves more (see the module)."""
    found = [(i, tid) for i, term in enumerate(terms) if (tid := index.vocab.get(term)) is not None]
    if len(terms) == 1 and found:
        tid = found[0][1]
        start, end = int(index.indptr[tid]), int(index.indptr[tid + 1])
        # `BM25Index.score`'s operations for one term: the same floats, so the same cut.
        contrib = index.sat[start:end] * index.idf[tid]
        if weights is not None and weights[0] != 1.0:
            contrib *= weights[0]
        match = (contrib > 0) & (contrib >= cut)
        if allowed is not None:
            match &= allowed[index.doc_ids[start:end]]
        return int(np.count_nonzero(match)), True
    best = known
    for i, tid in found:
        weight = 1.0 if weights is None else float(weights[i])
        least = float(index.idf[tid]) * weight * floor * (1 - SLACK)
        if least <= 0 or least < cut:
            continue
        start, end = int(index.indptr[tid]), int(index.indptr[tid + 1])
        if end - start <= best:
            continue
        if allowed is None:
            best = end - start
        else:
            best = max(best, int(np.count_nonzero(allowed[index.doc_ids[start:end]])))
    return best, False

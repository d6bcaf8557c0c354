"""A page of `/search` without scoring every match: the exact best hits, and a total that says
whether it is exact or a lower bound.

Scoring every posting of every query term costs ~16 ms at a million papers, and the best ten
need only a fraction of that (`bot.search.ranking.pruning`: block-max + MaxScore, exact).
What pruning cannot give is the number of matches (every paper at or above the weak-match cut,
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

A query with fewer postings than pruning starts at (`pruning.MIN_POSTINGS`) is scored whole,
with its exact total: that costs no more. The best k come from `pruning.search_top_k` (the
compiled or the numpy traversal, or its own exhaustive fallback: the same k either way).

Hits are the exhaustive path's to the bit: the same scores, the same cut (the best score is the
pruned one's first), ties in corpus order (`top_k`). The word-order bonus (`bot.search.
proximity`) reorders the best 100 by BM25: the best `FIRST_WINDOW` are taken first, and when
no paper below them could climb into the page even with the largest bonus, they settle it
(`settled_bonus`); else the whole window of 100 is ranked, as the exhaustive path does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from weakref import WeakKeyDictionary

import numpy as np

from bot.config import SearchSettings
from bot.search.index.postings import BM25Index
from bot.search.query.proximity import RESCORE_DEPTH, bonus_bound, rescore
from bot.search.ranking.pruning import MIN_POSTINGS, search_top_k
from bot.search.ranking.topk import top_k
from bot.search.results import Plan

# Relative slack on the smallest contribution: the saved saturations round differently from
# the closed form by ~1e-16 relative.
SLACK = 1e-9
# Matches taken first for the word-order bonus (at least 2k + 11). The more are taken, the
# lower the last one's score and the likelier they settle the page (`settled_bonus`); a page
# they do not settle costs a second traversal for the whole window. Measured on the 1M
# benchmark's 1,000 title queries: 21 settled 337 of them, 40 settled 585, and the /search
# p50 fell by a fifth to a quarter (6.19 -> 4.77, 6.66 -> 5.39 ms in alternating runs).
FIRST_WINDOW = 40
_FLOORS: WeakKeyDictionary[BM25Index, float] = WeakKeyDictionary()


@dataclass(frozen=True, slots=True)
class Strongest:
    """The best matches (at most k, in BM25 order, ties in corpus order), all at or above the
    cut, their scores (BM25, or with the word-order bonus from `pruned_page`), and how many
    papers match in all (`exact`) or at least (not `exact`)."""

    ids: np.ndarray
    scores: np.ndarray
    total: int
    exact: bool
    complete: bool  # fewer than k matches: every match is among `ids`


def pruned_page(
    index: BM25Index,
    plan: Plan,
    k: int,
    allowed: np.ndarray | None,
    settings: SearchSettings,
) -> Strongest | None:
    """The best k matches of `plan` (a plan with words, no phrases) among the `allowed`
    papers, their scores with the word-order bonus, as `SearchEngine._select` + `rescore` +
    `top_k` would rank them; None where pruning cannot stay exact (score every match).

    The bonus reorders the best `RESCORE_DEPTH` by BM25, so those are needed, all of them in
    the worst case; the best few usually settle the page (`settled_bonus`) for less."""
    weight = settings.proximity_weight
    terms = [*plan.terms, *plan.extra]

    scored: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # see `search_top_k`

    def best(n: int) -> Strongest | None:
        ratio = settings.min_score_ratio
        return strongest(index, terms, plan.weights, n, allowed, ratio, scored)

    if plan.skip is not None or len(plan.terms) < 2 or weight <= 0:
        return best(k + 1)  # no bonus (/similar's bag of words, one word)
    window = max(RESCORE_DEPTH, k + 1)
    first = min(window, max(FIRST_WINDOW, 2 * k + 11))
    found = best(first)
    if found is not None and first < window:
        scores = settled_bonus(index, plan.terms, found, k, weight)
        if scores is not None:
            return replace(found, scores=scores)
        found = best(window)
    if found is None:
        return None
    return replace(found, scores=rescore(index, plan.terms, found.ids, found.scores, weight))


def saturation_floor(index: BM25Index) -> float:
    """The smallest saturation any posting can have: tf 1 in the longest paper (kept per
    index: a pass over every paper's length)."""
    found = _FLOORS.get(index)
    if found is None:
        k1 = index.params.k1
        found = float((k1 + 1) / (1 + float(np.max(index.norm)))) if index.n_docs else 0.0
        _FLOORS[index] = found
    return found


def strongest(
    index: BM25Index,
    terms: Sequence[str],
    weights: Sequence[float] | None,
    k: int,
    allowed: np.ndarray | None,
    ratio: float,
    scored: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
) -> Strongest | None:
    """The best k matches among the `allowed` papers (a bool per paper, None: all), cut at
    `ratio` x the best score as `SearchEngine._narrow` cuts, and their total; None where
    scoring every match is as cheap (fewer postings than pruning starts at: the exact total
    then costs nothing more) or the bounds above do not hold (a negative query weight)."""
    postings = 0
    for i, term in enumerate(terms):
        tid = index.vocab.get(term)
        if weights is not None and weights[i] < 0:
            return None
        if tid is not None:
            postings += int(index.indptr[tid + 1] - index.indptr[tid])
    if postings < MIN_POSTINGS:
        return None
    found = search_top_k(index, terms, k, weights, allowed, scored=scored)
    ids, scores = found
    cut = 0.0
    if ratio > 0 and scores.shape[0]:
        cut = ratio * float(scores.max())
        strong = scores >= cut
        ids, scores = ids[strong], scores[strong]
    if ids.shape[0] < k:
        # Fewer than k at or above the cut among the k best: they are all the matches.
        return Strongest(ids, scores, int(ids.shape[0]), True, True)
    total, exact = _count(index, terms, weights, allowed, cut, saturation_floor(index), k)
    return Strongest(ids, scores, total, exact, False)


def settled_bonus(
    index: BM25Index, terms: Sequence[str], found: Strongest, k: int, weight: float
) -> np.ndarray | None:
    """`found`'s scores with the word-order bonus (`rescore`) when the best k after it are
    sure to be among `found`'s papers; None when a paper ranked below them by BM25 could still
    climb into the best k (the caller then takes the whole `RESCORE_DEPTH` window).

    `found` holds the best n < RESCORE_DEPTH papers by BM25, k < n: the exhaustive path
    rescores them too. A paper below them scores at most the n-th BM25 score and gains less
    than `bonus_bound`; when that stays below the k-th best rescored score among the n, it
    can neither enter the best k nor tie with one. Titles usually settle here (their paper
    stands far above the rest); a query whose scores crowd together does not."""
    rescored = rescore(index, terms, found.ids, found.scores, weight)
    if found.complete:
        return rescored
    kth = float(top_k(found.ids, rescored, k)[1][-1])
    reach = float(found.scores[-1]) + bonus_bound(index, terms, weight) * (1 + SLACK)
    return rescored if reach + SLACK * abs(kth) < kth else None


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


def sorted_page(
    sort: str,
    ids: np.ndarray,
    scores: np.ndarray,
    year_of: np.ndarray,
    venue_of: np.ndarray,
    k: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The first k of every match (`ids`, `scores`: all of them, as `_select` gives them) in
    the order `sort:` asked for, the page's ids and scores. Every match is at hand, so the
    total stays exact and each page is a slice of one order.

    `new`: newest year first; `old`: oldest first (papers of no known year last either way);
    `venue`: venues in alphabetical order (`venue_of` are positions in the sorted names);
    `relevance` (a query without words): newest first. Within one year or venue the better
    match first, then corpus order: the same query pages the same way every time."""
    years = year_of[ids].astype(np.int64)
    if sort == "old":
        key = np.where(years > 0, years, np.iinfo(np.int64).max)
    elif sort == "venue":
        key = venue_of[ids].astype(np.int64)
    else:  # "new", or a list without words to rank by
        key = -years
    order = np.lexsort((ids, -scores, key))[:k]
    return ids[order], scores[order]

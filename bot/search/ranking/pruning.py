"""Exact top-k with block-max pruning: the same k documents, in the same order, as scoring
every posting (`BM25Index.score` + `top_k`), while skipping most of the postings.

Documents are cut into blocks of 32 consecutive ids. For every term the index
keeps an upper bound of its saturation in each block (`BlockMax`, computed once at build
time and saved with the index): a query's bound for a block is the sum of its terms' bounds
there, times their idf and weights. Blocks are then scored exactly in decreasing order of
their bound, a few at first and more each round; once k documents are known, the k-th best
score is a threshold no block whose bound is below it can beat, so those blocks are never
touched. This is block-max WAND's idea done block-at-a-time, which is what numpy can do fast:
each round is a handful of vectorised calls per query term, not a loop over documents.

Exactness: bounds are rounded up (and given a relative slack far above float64 rounding),
every document of a scored block gets its exhaustive score to the bit (the same float64
operations, term by term in query order, from 0.0), and ties keep corpus order as `top_k`
does. Queries with few postings, negative weights, or whose threshold prunes too little fall
back to the exhaustive path, which stays the reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from bot.search.index.blockmax import QUANT, SLACK, BlockMax
from bot.search.ranking import kernel
from bot.search.ranking.topk import top_k

if TYPE_CHECKING:
    from bot.search.index.postings import BM25Index

# Below this many postings the exhaustive path is already cheap: pruning would only add work.
MIN_POSTINGS = 20_000
# A document looked up in a postings list costs about this many postings scored (a binary
# search's cache misses against one scatter-add).
LOOKUP_COST = 16
FIRST_BLOCKS = 32  # blocks scored in the first round; each round scores up to 4x more
# The compiled kernel's first round: fewer blocks, as it pays no fixed cost per round.
KERNEL_SEEDS = 16
# Give up pruning (exhaustive instead) when the threshold leaves more than this share of blocks.
MAX_SHARE = 0.4


class _Query:
    """A query's terms found in the index, as arrays: one entry per term occurrence, in
    query order (a repeated term counts again, as in `score`)."""

    def __init__(self, index: BM25Index, tids: list[int], weights: list[float]) -> None:
        self.doc_ids = np.asarray(index.doc_ids)  # plain views: memmap slicing costs extra
        self.sat = np.asarray(index.sat)
        self.tids = np.array(tids, dtype=np.int64)
        self.starts = np.asarray(index.indptr[self.tids], dtype=np.int64)
        self.ends = np.asarray(index.indptr[self.tids + 1], dtype=np.int64)
        self.idf = index.idf[self.tids]
        self.weights = np.array(weights, dtype=np.float64)
        self.weighted = bool((self.weights != 1.0).any())
        self.postings = int((self.ends - self.starts).sum())


def search_top_k(
    index: BM25Index,
    terms: Sequence[str],
    k: int,
    weights: Sequence[float] | None = None,
    allowed: np.ndarray | None = None,
    *,
    exhaustive: bool = False,
    compiled: bool = True,
    scored: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """`top_k(*index.score(terms, weights), k)`, restricted to `allowed` documents (a bool
    per document) when given. Pruned where that helps: the same ids and scores in the same
    order, usually faster; by the compiled kernel where it was built (`bot.search.ranking.kernel`),
    else (or with `compiled=False`) by numpy. `exhaustive` scores every posting: the
    reference. `scored` keeps every match's score once computed, for a caller that asks
    again with a larger k (pruning that gave up at a small k gives up at a larger one)."""
    if scored is not None and "all" in scored:
        return top_k(*scored["all"], k)
    known = None if exhaustive or k <= 0 else _terms(index, terms, weights)
    if known is not None:
        run = kernel.compiled() if compiled else None
        found = None if run is None else run(index, *known, k, KERNEL_SEEDS, allowed)
        if found is None:
            found = prune(_Query(index, *known), index.block_max, k, allowed)
        if found is not None:
            return found
    ids, scores = index.score(terms, weights)
    if allowed is not None:
        keep = allowed[ids]
        ids, scores = ids[keep], scores[keep]
    if scored is not None:
        scored["all"] = (ids, scores)
    return top_k(ids, scores, k)


def _terms(
    index: BM25Index, terms: Sequence[str], weights: Sequence[float] | None
) -> tuple[list[int], list[float]] | None:
    """(term ids, weights) of the query terms in the index, in query order; None when there
    are none, or a negative weight (it breaks every upper bound: exhaustive scoring)."""
    tids, ws = [], []
    vocab = index.vocab
    for i, term in enumerate(terms):
        tid = vocab.get(term)
        if tid is None:
            continue
        weight = 1.0 if weights is None else float(weights[i])
        if weight < 0:
            return None
        tids.append(tid)
        ws.append(weight)
    return (tids, ws) if tids else None


def _query(
    index: BM25Index, terms: Sequence[str], weights: Sequence[float] | None
) -> _Query | None:
    found = _terms(index, terms, weights)
    return None if found is None else _Query(index, *found)


def prune(
    query: _Query,
    bounds: BlockMax,
    k: int,
    allowed: np.ndarray | None = None,
    *,
    min_postings: int = MIN_POSTINGS,
    max_share: float = MAX_SHARE,
) -> tuple[np.ndarray, np.ndarray] | None:
    """The numpy traversal, or None where it cannot help (the caller then scores it all):
    fewer than `min_postings` postings, or more than `max_share` of the blocks to score."""
    if query.postings < min_postings:
        return None
    ub = _upper_bounds(query, bounds)
    term_ub = query.idf * query.weights * bounds.term_max[query.tids] * (1 + SLACK)
    done = np.zeros(ub.shape[0], dtype=bool)
    budget = max_share * query.postings
    batch = max(FIRST_BLOCKS, 2 * k)
    best_ids = np.empty(0, np.int32)
    best_scores = np.empty(0, np.float64)
    take = _highest(ub, np.flatnonzero(ub), batch)
    while take.shape[0]:
        blocks = np.sort(take)
        done[blocks] = True
        ids, scores = _score_blocks(query, blocks, bounds.shift)
        best_ids, best_scores = _merge(best_ids, best_scores, ids, scores, k, allowed)
        # Only blocks whose bound reaches the k-th best score can hold a winner (or a tie).
        threshold = float(best_scores[-1]) if best_ids.shape[0] >= k else 0.0
        live = ub >= threshold if threshold > 0 else ub > 0
        live &= ~done
        rest = np.flatnonzero(live)
        if not rest.shape[0]:
            break
        # Two ways on: more blocks, best bounds first (their postings), or every document of
        # the live blocks holding an "essential" term (MaxScore: the terms left out cannot
        # reach the threshold by themselves), scored by lookups. The cheaper one, if either
        # is cheap enough.
        by_blocks = rest.shape[0] / ub.shape[0] * query.postings
        essential = _essential(term_ub, threshold) if threshold > 0 else None
        by_terms = (
            float((query.ends - query.starts)[essential].sum()) if essential is not None else np.inf
        )
        if min(by_blocks, by_terms) > budget:
            return None  # the bounds are too loose for this query: score it all
        if by_terms < by_blocks and essential is not None:
            docs = _candidates(query, essential, live, bounds.shift, term_ub, threshold)
            if docs.shape[0] * query.starts.shape[0] * LOOKUP_COST <= by_blocks:
                ids, scores = _score_docs(query, docs)
                return _merge(best_ids, best_scores, ids, scores, k, allowed)
            if by_blocks > budget:
                return None
        batch *= 4
        take = _highest(ub, rest, batch)
    return best_ids, best_scores


def _essential(term_ub: np.ndarray, threshold: float) -> np.ndarray:
    """Which query terms a document must hold to reach `threshold`: the others' bounds, the
    smallest first, add up to less than it (MaxScore's essential lists)."""
    order = np.argsort(term_ub, kind="stable")
    # The largest prefix of smallest bounds whose sum stays below the threshold.
    n_out = int(np.searchsorted(np.cumsum(term_ub[order]), threshold, side="left"))
    keep = np.zeros(term_ub.shape[0], dtype=bool)
    keep[order[n_out:]] = True
    return keep


def _candidates(
    query: _Query,
    essential: np.ndarray,
    live: np.ndarray,
    shift: int,
    term_ub: np.ndarray,
    threshold: float,
) -> np.ndarray:
    """Sorted distinct documents of the `live` blocks that hold an essential term and whose
    essential terms' scores plus the other terms' bounds reach `threshold` (MaxScore)."""
    found, partial = [], []
    for i in np.flatnonzero(essential).tolist():
        start, end = int(query.starts[i]), int(query.ends[i])
        docs = query.doc_ids[start:end]
        at = np.flatnonzero(live[docs >> shift])
        found.append(docs[at])
        partial.append(query.sat[start:end][at] * (query.idf[i] * query.weights[i]))
    docs, score = found[0], partial[0]
    if len(found) > 1:
        docs, score = np.concatenate(found), np.concatenate(partial)
        order = np.argsort(docs, kind="stable")
        docs, score = docs[order], score[order]
        first = np.flatnonzero(np.diff(docs, prepend=-1))
        docs, score = docs[first], np.add.reduceat(score, first)
    # The partial sums round differently from `score`: they only filter, with slack.
    rest = float(term_ub[~essential].sum())
    keep: np.ndarray = docs[(score + rest) * (1 + SLACK) >= threshold]
    return keep


def _score_docs(query: _Query, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(docs, exact scores) by looking each document up in every term's postings, term by
    term in query order from 0.0 (an absent term adds 0.0, which changes no sum)."""
    totals = np.zeros(docs.shape[0], dtype=np.float64)
    if not docs.shape[0]:
        return docs, totals
    for i in range(query.starts.shape[0]):
        start, end = int(query.starts[i]), int(query.ends[i])
        postings = query.doc_ids[start:end]
        at = np.minimum(postings.searchsorted(docs), end - start - 1)
        hit = postings[at] == docs
        contrib = np.zeros(docs.shape[0], dtype=np.float64)
        contrib[hit] = query.sat[start:end][at[hit]] * query.idf[i]
        if query.weighted and query.weights[i] != 1.0:
            contrib[hit] *= query.weights[i]
        totals += contrib
    keep = totals != 0
    return docs[keep], totals[keep]


def _highest(ub: np.ndarray, blocks: np.ndarray, n: int) -> np.ndarray:
    """The n of `blocks` with the highest bounds (all of them when there are no more)."""
    if blocks.shape[0] <= n:
        return blocks
    return blocks[np.argpartition(-ub[blocks], n)[:n]]


def _ranges(lo: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The positions lo[i] .. lo[i] + counts[i] - 1 for every i, end to end."""
    n = int(counts.sum())
    return np.repeat(lo - np.cumsum(counts) + counts, counts) + np.arange(n)


def _upper_bounds(query: _Query, bounds: BlockMax) -> np.ndarray:
    """Every block's bound of the query's score there (rounded up, with slack)."""
    n_blocks = bounds.maxima.shape[1]
    scale = query.idf * query.weights
    rows = bounds.rows[query.tids]
    stored = rows >= 0
    if stored.any():
        factor = scale[stored] * bounds.term_max[query.tids[stored]] / QUANT
        ub: np.ndarray = factor @ np.asarray(bounds.maxima)[rows[stored]]
    else:
        ub = np.zeros(n_blocks, dtype=np.float64)
    if not stored.all():
        # Short lists: their block maxima straight from the postings, all terms at once.
        short = np.flatnonzero(~stored)
        counts = query.ends[short] - query.starts[short]
        at = _ranges(query.starts[short], counts)
        key = np.repeat(np.arange(short.shape[0]) * n_blocks, counts) + (
            query.doc_ids[at] >> bounds.shift
        )
        first = np.flatnonzero(np.diff(key, prepend=-1))
        block_max = np.maximum.reduceat(query.sat[at], first)
        owner, block = np.divmod(key[first], n_blocks)
        ub += np.bincount(block, weights=block_max * scale[short][owner], minlength=n_blocks)
    ub *= 1 + SLACK
    return ub


def _score_blocks(query: _Query, blocks: np.ndarray, shift: int) -> tuple[np.ndarray, np.ndarray]:
    """(doc ids ascending, exact scores) of the documents of `blocks` (ascending) that a
    query term scores, with the exhaustive path's float64 operations in the same order."""
    size = 1 << shift
    first = blocks.astype(np.int64) << shift
    doc_ids = query.doc_ids
    # Same dtype as the postings: else searchsorted converts a whole postings list per call.
    edges = np.empty(2 * blocks.shape[0], dtype=doc_ids.dtype)
    edges[0::2] = first
    edges[1::2] = first + size
    cuts = np.stack(
        [
            doc_ids[start:end].searchsorted(edges)
            for start, end in zip(query.starts.tolist(), query.ends.tolist(), strict=True)
        ]
    )
    cuts += query.starts[:, None]
    lo = cuts[:, 0::2]
    counts = cuts[:, 1::2] - lo
    per_term = counts.sum(axis=1)
    at = _ranges(lo.ravel(), counts.ravel())
    if not at.shape[0]:
        return np.empty(0, np.int32), np.empty(0, np.float64)
    doc = doc_ids[at].astype(np.int64)
    contrib = query.sat[at] * np.repeat(query.idf, per_term)
    if query.weighted:
        contrib *= np.repeat(query.weights, per_term)
    slot = np.zeros(int(blocks[-1]) + 1, dtype=np.int64)
    slot[blocks] = np.arange(blocks.shape[0], dtype=np.int64) << shift
    # bincount adds in array order: per document, term by term from 0.0, as `score` does.
    dense = np.bincount(
        slot[doc >> shift] + (doc & (size - 1)), weights=contrib, minlength=blocks.shape[0] << shift
    )
    hit = np.flatnonzero(dense)
    ids = (blocks[hit >> shift].astype(np.int64) << shift) + (hit & (size - 1))
    return ids.astype(np.int32), dense[hit]


def _merge(
    ids_a: np.ndarray,
    scores_a: np.ndarray,
    ids_b: np.ndarray,
    scores_b: np.ndarray,
    k: int,
    allowed: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """The k best of two disjoint sets (the second one ascending, masked by `allowed` here),
    best first, equal scores in corpus order."""
    if allowed is not None:
        keep = allowed[ids_b]
        ids_b, scores_b = ids_b[keep], scores_b[keep]
    ids_b, scores_b = top_k(ids_b, scores_b, k)
    if not ids_a.shape[0]:
        return ids_b, scores_b
    ids = np.concatenate([ids_a, ids_b])
    scores = np.concatenate([scores_a, scores_b])
    order = np.lexsort((ids, -scores))[:k]
    return ids[order], scores[order]

"""The pruned top-k traversal compiled with numba: block-max pruning over the index's own
arrays (postings doc ids, saturations, idf, per-term and per-block bounds), block at a time.

Imported only by `bot.search.kernel`, lazily and off the start-up path: importing numba and
compiling (or loading the cached machine code) takes a second or more, the bot's whole
start-up budget at 1M papers.

Why compiled: the numpy traversal (`bot.search.pruning`) pays a fixed ~0.5 ms of vectorised
calls per query, about all of bm25s's query time at 100k papers. Here a query costs a few
microseconds of dispatch, one pass over its terms' block bounds, and the blocks it scores.

How: every block of 32 documents gets the query's bound there (`_block_bounds`). Rounds
score the best-bounded blocks first (about 16, then 4x more per round, found from a count of
blocks per bound level) so the k-th best score, the threshold, is high early; then one sweep
in id order scores the blocks whose bound still reaches it. Inside a block each term's
postings are found from a guess of where the block starts in them (ids are spread evenly),
and a term whose stored block maximum is 0 is absent there (no probe at all): each probe is a
likely cache miss, the main cost left.

Exactness, as the numpy path: a document's score is summed term by term in query order from
0.0 with the exhaustive path's float64 operations (sat × idf, × weight), so it is the same to
the bit; only bounds (with a relative slack far above float64 rounding) decide what to skip;
equal scores keep corpus order (the top k is a heap ordered by score, then id).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from bot.search.blockmax import QUANT, SLACK

# Bound levels: blocks are counted per level once, so each round's floor (the bound that takes
# about the next `batch` blocks) is found without sorting or partitioning the blocks.
LEVELS = 256


@njit(cache=True, nogil=True)
def _halve(doc_ids: Any, lo: int, hi: int, target: int) -> int:
    """First position in [lo, hi] holding target or more, where doc_ids[hi] does (or hi is
    the end of the list): binary search."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if doc_ids[mid] < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _next_geq(doc_ids: Any, lo: int, hi: int, target: int) -> int:
    """First position in doc_ids[lo:hi] (ascending) holding target or more: gallop, then
    halve (a cursor mostly moves a little, sometimes jumps far)."""
    if lo >= hi or doc_ids[lo] >= target:
        return lo
    step = 1
    while lo + step < hi and doc_ids[lo + step] < target:
        lo += step
        step *= 2
    return _halve(doc_ids, lo + 1, min(lo + step, hi), target)


@njit(cache=True, nogil=True)
def _seek(doc_ids: Any, lo: int, hi: int, target: int, guess: int) -> int:
    """`_next_geq`, starting from a guessed position (ids spread evenly over the list): a
    few probes near the answer instead of a gallop across the list, each a cache miss."""
    if guess <= lo:
        return _next_geq(doc_ids, lo, hi, target)
    guess = min(guess, hi - 1)
    if doc_ids[guess] < target:
        return _next_geq(doc_ids, guess, hi, target)
    top = guess  # doc_ids[top] >= target: the answer is in [lo, top]
    step = 1
    while top - step >= lo and doc_ids[top - step] >= target:
        top -= step
        step *= 2
    return _halve(doc_ids, max(lo, top - step), top, target)


@njit(cache=True, nogil=True)
def _worse(ids: Any, scores: Any, a: int, b: int) -> Any:
    """Entry a ranks below entry b: lower score, or the same score and a later document."""
    return scores[a] < scores[b] or (scores[a] == scores[b] and ids[a] > ids[b])


@njit(cache=True, nogil=True)
def _swap(ids: Any, scores: Any, a: int, b: int) -> None:
    ids[a], ids[b] = ids[b], ids[a]
    scores[a], scores[b] = scores[b], scores[a]


@njit(cache=True, nogil=True)
def _sift_down(ids: Any, scores: Any, size: int, at: int) -> None:
    """Restore the heap below `at` (the root is the worst of the kept top k)."""
    while True:
        child = 2 * at + 1
        if child >= size:
            return
        if child + 1 < size and _worse(ids, scores, child + 1, child):
            child += 1
        if not _worse(ids, scores, child, at):
            return
        _swap(ids, scores, at, child)
        at = child


@njit(cache=True, nogil=True)
def _push(ids: Any, scores: Any, size: int, doc: int, score: float) -> None:
    """Add an entry to a heap of `size` entries (room for it is there)."""
    at = size
    ids[at] = doc
    scores[at] = score
    while at > 0:
        parent = (at - 1) >> 1
        if not _worse(ids, scores, at, parent):
            return
        _swap(ids, scores, at, parent)
        at = parent


@njit(cache=True, nogil=True)
def _sorted(ids: Any, scores: Any, size: int) -> tuple[Any, Any]:
    """The heap's entries best first (pop the worst into the last free place)."""
    out_ids = np.empty(size, np.int32)
    out_scores = np.empty(size, np.float64)
    while size > 0:
        size -= 1
        out_ids[size] = ids[0]
        out_scores[size] = scores[0]
        ids[0] = ids[size]
        scores[0] = scores[size]
        _sift_down(ids, scores, size, 0)
    return out_ids, out_scores


@njit(cache=True, nogil=True)
def _offer(ids: Any, scores: Any, size: int, doc: int, score: float) -> int:
    """Keep (doc, score) if it beats the worst of a full top k (equal scores: the earlier
    document wins); the new size."""
    if size < ids.shape[0]:
        _push(ids, scores, size, doc, score)
        return size + 1
    if score > scores[0] or (score == scores[0] and doc < ids[0]):
        ids[0] = doc
        scores[0] = score
        _sift_down(ids, scores, size, 0)
    return size


@njit(cache=True, nogil=True)
def _block_bounds(doc_ids: Any, sat: Any, query: Any, scale: Any, maxima: Any, shift: int) -> Any:
    """Every block's bound of the query's score there: stored rows × their unit, and for the
    short lists (no stored row) the largest contribution of their postings in the block."""
    starts, ends, idf, weights, unit, rows = query
    n_blocks = maxima.shape[1]
    bounds = np.zeros(n_blocks, np.float64)
    for i in range(starts.shape[0]):
        if rows[i] >= 0:
            row = maxima[rows[i]]
            for b in range(n_blocks):
                bounds[b] += row[b] * unit[i]
            continue
        block = -1
        best = 0.0
        for p in range(starts[i], ends[i]):
            if doc_ids[p] >> shift != block:
                if block >= 0:
                    bounds[block] += best * scale
                block = doc_ids[p] >> shift
                best = 0.0
            best = max(best, sat[p] * idf[i] * weights[i])
        if block >= 0:
            bounds[block] += best * scale
    return bounds


@njit(cache=True, nogil=True)
def _score_block(
    doc_ids: Any, sat: Any, query: Any, maxima: Any, cur: Any, block: int, acc: Any
) -> None:
    """acc[d] = the exact score of document `block`·len(acc) + d: each query term's
    contribution added in query order from 0.0, as the exhaustive path does. Cursors `cur`
    (ascending blocks) move past the block; a term whose stored block maximum is 0 is not
    there (no probe into its postings, each one a likely cache miss)."""
    starts, ends, idf, weights, _unit, rows = query
    lo = block * acc.shape[0]
    hi = lo + acc.shape[0]
    span = maxima.shape[1] * acc.shape[0]
    acc[:] = 0.0
    for i in range(starts.shape[0]):
        if rows[i] >= 0 and maxima[rows[i], block] == 0:
            continue
        p = cur[i]
        if p < ends[i] and doc_ids[p] < lo:
            guess = starts[i] + (ends[i] - starts[i]) * lo // span
            p = _seek(doc_ids, p, ends[i], lo, guess)
        while p < ends[i] and doc_ids[p] < hi:
            acc[doc_ids[p] - lo] += sat[p] * idf[i] * weights[i]
            p += 1
        cur[i] = p


@njit(cache=True, nogil=True)
def _score_into(
    doc_ids: Any,
    sat: Any,
    query: Any,
    maxima: Any,
    cur: Any,
    block: int,
    acc: Any,
    ids: Any,
    scores: Any,
    size: int,
    allowed: Any,
    masked: bool,
) -> int:
    """Score a block and offer its documents to the top k; the top k's new size."""
    _score_block(doc_ids, sat, query, maxima, cur, block, acc)
    lo = block * acc.shape[0]
    full = size == ids.shape[0]
    for d in range(acc.shape[0]):
        good = acc[d] > 0.0 and (not full or acc[d] >= scores[0])
        if good and (not masked or allowed[lo + d]):
            size = _offer(ids, scores, size, lo + d, acc[d])
            full = size == ids.shape[0]
    return size


@njit(cache=True, nogil=True)
def block_max_top_k(
    doc_ids: Any,
    sat: Any,
    indptr: Any,
    idf: Any,
    term_max: Any,
    rows: Any,
    maxima: Any,
    shift: int,
    tids: Any,
    weights: Any,
    k: int,
    seeds: int,
    allowed: Any,
    masked: bool,
) -> tuple[Any, Any]:
    """(ids, scores) of the k best documents, best first, equal scores in corpus order.

    The index's arrays (`BM25Index`, `BlockMax`), then the query: one entry per query term
    occurrence in query order (`tids`, `weights`). A term's postings are
    doc_ids/sat[indptr[t]:indptr[t + 1]]; a stored row of block maxima (rows[t] >= 0) bounds
    its saturation per block. The `seeds` best-bounded blocks are scored first, then rounds of
    4x more while many blocks could still hold a winner, then the rest in id order, each
    unless its bound is below the k-th best score so far.
    """
    picked = idf[tids]
    unit = picked * weights * term_max[tids] * ((1 + SLACK) / QUANT)
    starts = indptr[tids]
    ends = indptr[tids + 1]
    query = (starts, ends, picked, weights, unit, rows[tids])
    total = 0
    for i in range(starts.shape[0]):
        total += ends[i] - starts[i]
    cap = max(0, min(k, total))
    ids = np.empty(cap, np.int32)
    scores = np.empty(cap, np.float64)
    if cap == 0:
        return _sorted(ids, scores, 0)
    bounds = _block_bounds(doc_ids, sat, query, 1 + SLACK, maxima, shift)
    n_blocks = bounds.shape[0]
    # Blocks by bound in LEVELS buckets: how high a floor takes about n blocks, in one pass.
    top = bounds.max()
    if top <= 0.0:
        return _sorted(ids, scores, 0)
    per_level = LEVELS / top
    above = np.zeros(LEVELS + 2, np.int64)  # above[j]: blocks in levels >= j
    for b in range(n_blocks):
        if bounds[b] > 0.0:
            above[int(bounds[b] * per_level)] += 1
    for j in range(LEVELS - 1, -1, -1):
        above[j] += above[j + 1]
    done = np.zeros(n_blocks, np.bool_)
    acc = np.empty(1 << shift, np.float64)
    size = 0
    taken = 0
    batch = seeds
    level = LEVELS + 1
    while level > 0:
        # A round: the blocks of the next levels down, about `batch` of them, in id order.
        while level > 0 and above[level] - taken < batch:
            level -= 1
        floor = level / per_level if level > 0 else 0.0
        cur = starts.copy()
        for b in range(n_blocks):
            if done[b] or bounds[b] < floor or bounds[b] <= 0.0:
                continue
            done[b] = True
            taken += 1
            if size == cap and bounds[b] < scores[0]:
                continue  # nothing here can reach the k-th best score
            size = _score_into(
                doc_ids, sat, query, maxima, cur, b, acc, ids, scores, size, allowed, masked
            )
        if size < cap:
            batch *= 4
            continue
        # Blocks left whose bound reaches the threshold: few, then one sweep in id order.
        left = above[min(LEVELS, int(scores[0] * per_level))] - taken
        if left <= 4 * batch:
            break
        batch *= 4
    cur = starts.copy()
    for b in range(n_blocks):
        if done[b] or bounds[b] <= 0.0 or (size == cap and bounds[b] < scores[0]):
            continue
        size = _score_into(
            doc_ids, sat, query, maxima, cur, b, acc, ids, scores, size, allowed, masked
        )
    return _sorted(ids, scores, size)

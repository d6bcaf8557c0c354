"""Top-k selection of scored documents, the one order rule every ranking path keeps:
score descending, then corpus order."""

from __future__ import annotations

import numpy as np


def top_k(doc_ids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best (doc id, score) pairs, best first; equal scores keep corpus order.

    Selection is O(n) (a partition around the k-th score), then only the k winners are sorted.
    Documents scoring 0 or less are never returned: they did not match.
    """
    keep = scores > 0
    if not keep.all():
        doc_ids, scores = doc_ids[keep], scores[keep]
    n = scores.shape[0]
    if k <= 0 or n == 0:
        return doc_ids[:0], scores[:0]
    if n > 64 * k:
        # The k-th best of every 16th score is at most the k-th best of all: keeping the
        # scores >= it keeps every winner (and its ties), and the partition below gets small.
        sample = scores[::16]
        floor = np.partition(sample, sample.shape[0] - k)[sample.shape[0] - k]
        candidates = np.flatnonzero(scores >= floor)
        doc_ids, scores = doc_ids[candidates], scores[candidates]
        n = scores.shape[0]
    if n > k:
        threshold = np.partition(scores, n - k)[n - k]
        above = scores > threshold
        ties = np.flatnonzero(scores == threshold)[: k - int(above.sum())]
        chosen = np.concatenate([np.flatnonzero(above), ties])
        doc_ids, scores = doc_ids[chosen], scores[chosen]
    order = np.lexsort((doc_ids, -scores))
    return doc_ids[order], scores[order]

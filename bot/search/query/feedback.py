"""Pseudo-relevance feedback (RM3-style): widen a query with the words of its best hits.

A short query ("unlearning diffusion language models") misses papers that say the same thing
in other words. The top few first-pass hits are usually on topic, so the words they share are
good evidence of what the query means. This is the relevance model of Lavrenko & Croft (RM1)
interpolated with the original query (RM3), the form Anserini and Terrier ship:

    P(t | R) = sum over feedback docs d of  P(t | d) * P(d | q)
    P(t | d) = tf(t, d) / |d|,   P(d | q) = score(d) / sum of feedback scores

The `n_terms` strongest new terms are appended with weight `weight * P(t|R) / max P(t|R)`, so
the best expansion term counts `weight` times an original query term and the rest less; the
original terms keep their weights. Scores stay BM25Okapi (the index's `score(terms, weights)`), so
everything the ranking uses is still a word that can be shown and highlighted.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bot.search.ranking.topk import top_k

# Anserini's RM3 term filter: very short or very long tokens are noise, not topics.
MIN_TERM_CHARS = 2
MAX_TERM_CHARS = 20


@dataclass(frozen=True, slots=True)
class Expansion:
    """The expanded query: original terms (weight 1) then the added ones, strongest first."""

    terms: tuple[str, ...]
    weights: tuple[float, ...]
    added: tuple[str, ...]


def relevance_model(
    doc_terms: Sequence[Sequence[str]], doc_scores: Sequence[float]
) -> dict[str, float]:
    """P(t | R) up to a constant: tf/|d| summed over feedback docs, weighted by their scores."""
    model: defaultdict[str, float] = defaultdict(float)
    total = float(sum(doc_scores))
    if total <= 0:
        return model
    for terms, score in zip(doc_terms, doc_scores, strict=True):
        if not terms:
            continue
        share = (score / total) / len(terms)
        for term, tf in Counter(terms).items():
            model[term] += tf * share
    return dict(model)


def expand(
    terms: Sequence[str],
    ids: np.ndarray,
    scores: np.ndarray,
    doc_terms: Callable[[int], Sequence[str]],
    *,
    docs: int,
    n_terms: int,
    weight: float,
    weights: Sequence[float] | None = None,
) -> Expansion:
    """The query `terms` (with their `weights`, 1.0 when None) plus feedback terms from the
    `docs` best of (ids, scores). Unchanged when feedback is off or the first pass found nothing.
    """
    original = tuple(terms)
    original_weights = tuple(weights) if weights is not None else (1.0,) * len(original)
    unchanged = Expansion(original, original_weights, ())
    if docs <= 0 or n_terms <= 0 or weight <= 0 or ids.shape[0] == 0:
        return unchanged
    best_ids, best_scores = top_k(ids, scores, docs)
    if best_ids.shape[0] == 0:
        return unchanged
    model = relevance_model([doc_terms(int(d)) for d in best_ids.tolist()], best_scores.tolist())
    present = set(original)
    ranked = sorted(
        (
            (p, t)
            for t, p in model.items()
            if t not in present and MIN_TERM_CHARS <= len(t) <= MAX_TERM_CHARS
        ),
        key=lambda item: (-item[0], item[1]),
    )[:n_terms]
    if not ranked:
        return unchanged
    top = ranked[0][0]
    added = tuple(t for _p, t in ranked)
    added_weights = tuple(weight * p / top for p, _t in ranked)
    return Expansion(original + added, original_weights + added_weights, added)


# MoreLikeThis leaves out words common across the corpus (its maxDocFreqPct): a word in more
# than this share of documents ("via", "model") says little about what a paper is about.
COMMON_SHARE = 0.1


def distinctive_terms(
    counts: Mapping[str, float],
    df: Callable[[str], int],
    n_docs: int,
    limit: int = 25,
    min_df: int = 2,
) -> list[tuple[str, float]]:
    """A document's `limit` most distinctive terms with their tf-idf, strongest first (Lucene's
    MoreLikeThis query); `counts` are the terms' (possibly field-weighted) frequencies. Lucene's
    idf log(1 + (N - df + 0.5) / (df + 0.5)) stays positive and falls steadily with df
    (BM25Okapi's floored idf does not).

    As MoreLikeThis's `minDocFreq`, terms in fewer than `min_df` documents are left out: a
    word only this paper uses cannot find another paper. Terms in more than COMMON_SHARE of
    the documents come only when too few others are left (a corpus of a dozen papers, or a
    query of many terms).
    """
    scored = []
    for term, tf in counts.items():
        n = df(term)
        if n >= min_df and tf > 0:
            idf = math.log(1 + (n_docs - n + 0.5) / (n + 0.5))
            scored.append((n > COMMON_SHARE * n_docs, -tf * idf, term))
    scored.sort()
    return [(term, -score) for _common, score, term in scored[:limit]]

"""What a page says beside its hits: the plan's notices (a quoted phrase no paper has), an
honest "weak matches" line when the best match is far below what a good match scores on this
corpus, the order of the hits, and which of each hit's authors the `author:` filter matched.

How strong a match is, is measured against the query itself: the best score over the most
the query's terms could score (`strength`: each term's idf x its weight x (k1 + 1), the
BM25 ceiling of a paper that holds every term many times; a term the corpus never uses counts
as the rarest term). A paper about all of the query scores near that ceiling, one sharing only
its common words far below it, whatever the query's length. What "good" is comes from the
corpus itself (`WeakCut`): the strength of a sample of its papers' own titles against their
papers, the score a researcher gets when the right paper is there. A best match below
`WEAK_FRACTION` of the `WEAK_PERCENTILE`th percentile of those is flagged. Measured on the six
paper lists (docs/search-quality.md): "graph neural networks over-smoothing" is flagged, topic
queries with good matches are not, and known-item title queries raise it rarely.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

import numpy as np

from bot.search.index.postings import BM25Index
from bot.search.results import Hit, Plan, SearchResult
from bot.search.suggest.authors import matched_authors

if TYPE_CHECKING:
    from bot.search.parts import EngineParts

# Papers whose titles calibrate the cut, spread evenly over the corpus: 256 scores of one paper
# each (~20 ms at any corpus size), computed once per index on its first query with words.
WEAK_SAMPLE = 256
WEAK_PERCENTILE = 5.0
# How far below the weak end of good matches a best match must fall to be called weak.
WEAK_FRACTION = 0.9
MIN_SAMPLE = 8  # fewer titles than this say nothing about the corpus: no notice
_CUTS: WeakKeyDictionary[BM25Index, float] = WeakKeyDictionary()


def ceiling(index: BM25Index, terms: Sequence[str], weights: Sequence[float] | None) -> float:
    """The most `terms` could score: idf x |weight| x (k1 + 1) summed; a term the index does
    not hold counts as its rarest term (the query asked for something no paper says)."""
    if not index.n_docs:
        return 0.0
    rarest = float(np.max(index.idf)) if index.idf.shape[0] else 1.0
    total = 0.0
    for i, term in enumerate(terms):
        tid = index.vocab.get(term)
        idf = rarest if tid is None else max(0.0, float(index.idf[tid]))
        total += idf * (1.0 if weights is None else abs(float(weights[i])))
    return total * (index.params.k1 + 1)


def strength(index: BM25Index, plan: Plan, best: float) -> float:
    """`best` (a plan's best score) over the most its terms could score: ~0.6-1 for a paper
    about the whole query, lower for one sharing a few of its words."""
    top = ceiling(index, [*plan.terms, *plan.extra], plan.weights)
    return best / top if top > 0 else 0.0


def title_strengths(parts: EngineParts, sample: int = WEAK_SAMPLE) -> np.ndarray:
    """The strength of a sample of the corpus's papers found by their own titles: what a
    good match scores here (the paper's own score, without the word-order bonus)."""
    index, papers = parts.index, parts.lookups.papers
    n = index.n_docs
    found: list[float] = []
    for doc in sorted({int(x) for x in np.linspace(0, n - 1, min(n, sample))} if n else ()):
        terms, weights = parts.analyzer.query_terms(
            papers[doc].title, parts.settings.compound_weight
        )
        if not terms:
            continue
        plan_weights = None if all(w == 1.0 for w in weights) else tuple(weights)
        scores = index.score_docs(terms, plan_weights, np.array([doc], dtype=np.int32))[1]
        plan = Plan(query="", terms=tuple(terms), weights=plan_weights)
        found.append(strength(index, plan, float(scores[0]) if scores.shape[0] else 0.0))
    return np.array(found, dtype=np.float64)


def weak_cut(parts: EngineParts) -> float:
    """The strength below which a best match is weak on this corpus (0: never), once per
    index."""
    cut = _CUTS.get(parts.index)
    if cut is None:
        found = title_strengths(parts)
        cut = 0.0
        if found.shape[0] >= MIN_SAMPLE:
            cut = WEAK_FRACTION * float(np.percentile(found, WEAK_PERCENTILE))
        _CUTS[parts.index] = cut
    return cut


def is_weak(parts: EngineParts, plan: Plan, best: float) -> bool:
    """Whether `best`, the best score of a plan with words, is a weak match here."""
    return bool(plan.terms) and strength(parts.index, plan, best) < weak_cut(parts)


WEAK_NOTICE = (
    "Weak matches: no paper here is about all of these words; the best share only some of them."
)


def finish(parts: EngineParts, plan: Plan, result: SearchResult, best: np.ndarray) -> SearchResult:
    """`result` with the plan's notices, a weak-match notice when `best` (the scores the best
    match is among; empty: no match) is weak, the order it is in, and each hit's matched
    authors."""
    notices = list(plan.notices)
    if plan.terms and best.shape[0] and is_weak(parts, plan, float(best.max())):
        notices.append(WEAK_NOTICE)
    sort = plan.sort if plan.terms or plan.sort != "relevance" else "new"
    hits = result.hits
    typed = plan.filters.authors
    if typed:
        hits = [_with_authors(hit, typed) for hit in hits]
    return replace(result, notices=tuple(notices), sort=sort, hits=hits)


def _with_authors(hit: Hit, typed: Sequence[str]) -> Hit:
    return replace(hit, matched_authors=matched_authors(hit.paper.authors, typed))

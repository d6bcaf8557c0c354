"""What a page says beside its hits: the plan's notices (a quoted phrase no paper has), an
honest "weak matches" line when the best match is far below what a good match scores on this
corpus, the order of the hits, and which of each hit's authors the `author:` filter matched.

How strong a match is, is measured against the query itself: the best score over the most
the query's terms could score (`strength`: each term's idf x its weight x (k1 + 1), the
BM25 ceiling of a paper that holds every term many times; a term the corpus never uses counts
as the rarest term). A paper about all of the query scores near that ceiling, one sharing only
its common words far below it, whatever the query's length. What "good" is comes from the
corpus itself (`Calibration`): the strength of a sample of its papers' own titles and first
sentences against their papers, the score a researcher gets when the right paper is there. A
best match below `WEAK_FRACTION` of the `WEAK_PERCENTILE`th percentile of those of about its
length (a 40-word sentence covers less of itself in one paper than a title) is flagged.
Measured on the six paper lists (docs/search-quality.md): "graph neural networks
over-smoothing" is flagged, topic queries with good matches are not, and known-item queries
(titles, keywords, first sentences) raise it rarely.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from bot.search.index.postings import BM25Index
from bot.search.results import Hit, Plan, SearchResult
from bot.search.suggest.authors import matched_authors

if TYPE_CHECKING:
    from bot.search.parts import EngineParts

# Papers whose own words calibrate the cut, spread evenly over the corpus: their title and
# their abstract's first sentence, each scored against that paper alone (~0.2 s at any corpus
# size), once per index on its first query with words.
WEAK_SAMPLE = 256
WEAK_PERCENTILE = 5.0
# How far below the weak end of good matches a best match must fall to be called weak.
WEAK_FRACTION = 0.85
# A long query covers less of itself in one paper than a short one: a query is compared with
# the calibration queries within this ratio of its number of terms (at least NEAREST of them).
LENGTH_RATIO = 1.5
NEAREST = 64
# A query longer than this is a pasted sentence (a TL;DR, an abstract's opening): no paper
# uses all the words of a paraphrase, so its coverage says little; topic queries are shorter.
MAX_WEAK_TERMS = 10
MIN_SAMPLE = 8  # fewer calibration queries than this say nothing about the corpus: no notice
FIRST_WORDS = 40  # words of an abstract's first sentence, as known-item queries take them
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


@dataclass(frozen=True, slots=True)
class Calibration:
    """The strength of good matches on one corpus: the number of terms and the `strength` of
    each calibration query (a paper's title or first sentence, against that paper)."""

    lengths: np.ndarray
    strengths: np.ndarray

    def cut(self, n_terms: int) -> float:
        """The strength below which the best match of a query of `n_terms` terms is weak
        (0: never)."""
        if self.strengths.shape[0] < MIN_SAMPLE or n_terms < 1:
            return 0.0
        distance = np.abs(np.log(self.lengths / n_terms))
        near = np.flatnonzero(distance <= np.log(LENGTH_RATIO))
        if near.shape[0] < NEAREST:
            near = np.argsort(distance, kind="stable")[:NEAREST]
        return WEAK_FRACTION * float(np.percentile(self.strengths[near], WEAK_PERCENTILE))


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


def first_sentence(abstract: str) -> str:
    """The abstract's first sentence, at most `FIRST_WORDS` words."""
    text = " ".join(abstract.split())
    return " ".join(_SENTENCE_END.split(text, maxsplit=1)[0].split()[:FIRST_WORDS])


def calibrate(parts: EngineParts, sample: int = WEAK_SAMPLE) -> Calibration:
    """The strength of a sample of the corpus's papers found by their own title and first
    sentence: what a good match scores here (the paper's own score, no word-order bonus)."""
    index, papers = parts.index, parts.lookups.papers
    n = index.n_docs
    lengths: list[int] = []
    found: list[float] = []
    for doc in sorted({int(x) for x in np.linspace(0, n - 1, min(n, sample))} if n else ()):
        paper = papers[doc]
        for text in (paper.title, first_sentence(paper.abstract)):
            terms, weights = parts.analyzer.query_terms(text, parts.settings.compound_weight)
            if not terms:
                continue
            plan_weights = None if all(w == 1.0 for w in weights) else tuple(weights)
            scores = index.score_docs(terms, plan_weights, np.array([doc], dtype=np.int32))[1]
            plan = Plan(query="", terms=tuple(terms), weights=plan_weights)
            lengths.append(len(terms))
            found.append(strength(index, plan, float(scores[0]) if scores.shape[0] else 0.0))
    return Calibration(np.array(lengths, dtype=np.float64), np.array(found, dtype=np.float64))


def plain_scores(index: BM25Index, plan: Plan, docs: np.ndarray) -> np.ndarray:
    """The plain BM25 scores of `docs` (any order) for the plan's terms, without the word-order
    bonus: what a match's strength is measured on, as the calibration measures it."""
    found = np.unique(np.asarray(docs, dtype=np.int32))
    return index.score_docs(list(plan.terms), plan.weights, found)[1]


def is_weak(parts: EngineParts, plan: Plan, best: float) -> bool:
    """Whether `best`, the best score of a plan with words, is a weak match here (never for
    a query of more than `MAX_WEAK_TERMS` terms)."""
    n_terms = len(plan.terms) + len(plan.extra)
    if not 0 < len(plan.terms) <= MAX_WEAK_TERMS:
        return False
    return strength(parts.index, plan, best) < parts.calibration.cut(n_terms)


WEAK_NOTICE = (
    "Weak matches: no paper here is about all of these words; the best share only some of them."
)


def finish(
    parts: EngineParts,
    plan: Plan,
    result: SearchResult,
    best: np.ndarray,
    ranked: np.ndarray | None = None,
) -> SearchResult:
    """`result` with the plan's notices, a weak-match notice when `best` (the scores the best
    match is among; empty: no match) is weak, the order it is in, and each hit's matched
    authors. `ranked`: the documents of `best` when its scores carry the word-order bonus;
    strength is measured on their plain BM25 scores, as the calibration is (a bonus for the
    words in order must not lift an off-topic query over the cut)."""
    notices = list(plan.notices)
    # `/similar` (`plan.skip`) ranks by a paper's distinctive words, no query typed: never weak.
    typed = plan.skip is None
    if typed and plan.terms and best.shape[0] and ranked is not None:
        best = plain_scores(parts.index, plan, ranked)
    if typed and plan.terms and best.shape[0] and is_weak(parts, plan, float(best.max())):
        notices.append(WEAK_NOTICE)
    sort = plan.sort if plan.terms or plan.sort != "relevance" else "new"
    hits = result.hits
    if plan.filters.authors:
        hits = [_with_authors(hit, plan.filters.authors) for hit in hits]
    return replace(result, notices=tuple(notices), sort=sort, hits=hits)


def _with_authors(hit: Hit, typed: Sequence[str]) -> Hit:
    return replace(hit, matched_authors=matched_authors(hit.paper.authors, typed))

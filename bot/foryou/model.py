"""The For you model: a member's interests as one weighted query over the index's BM25 terms.

Chosen by measurement (docs/foryou.md, `benchmarks/foryou.py`) among what the anchors do:
arxiv-sanity-lite's per-user linear model over tf-idf, and BM25 relevance feedback. This is
Rocchio relevance feedback in the index's own term space, a linear model whose weights are

    w = mean(v(d) for saved or 👍 d) - NEGATIVE * mean(v(d) for 👎 d)

where v(d) is a paper's BM25 term weights (idf times tf saturation, the index's own numbers),
scaled to unit length so a long abstract does not outvote a short one and every saved paper
counts once, and clipped at 0. The strongest `PROFILE_TERMS` terms are kept, and a
new paper's score is the index's own weighted BM25 sum over them (`BM25Index.score_docs`).
Measured against the alternatives: one query of the saved papers' distinctive terms
(more-like-this) ranks the held-out papers lower, as does subtracting the corpus's average
paper (what a linear classifier against the rest of the corpus learns): the idf already
discounts common words, and the subtraction removed the member's own field words.

Nothing is kept per member: the profile is recomputed from the member's signals (saves, 👍,
👎) on each request. Building it analyses at most `MAX_SIGNALS` papers; a stored model would
have to be invalidated on every save and rating, and would go stale when a reload changes the
index's statistics.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bot.papers.records import Paper
from bot.search import SearchEngine

PROFILE_TERMS = 150  # positive terms kept (measured: 60 loses, 300 gains nothing)
NEGATIVE = 0.5  # Rocchio's gamma: how much a 👎 paper pulls away
MAX_SIGNALS = 200  # newest signals of each kind used: bounds the work per request
MIN_SIGNALS = 3  # fewer than this and /foryou says so and falls back to follows


@dataclass(frozen=True, slots=True)
class Profile:
    """A member's interests as a weighted query, and how many signals made it."""

    terms: tuple[str, ...]
    weights: tuple[float, ...]
    positives: int
    negatives: int

    @property
    def empty(self) -> bool:
        return not self.terms

    def top_terms(self, count: int = 8) -> list[str]:
        """The strongest positive terms: what /foryou says it learned."""
        ranked = sorted(
            (pair for pair in zip(self.weights, self.terms, strict=True) if pair[0] > 0),
            reverse=True,
        )
        return [term for _w, term in ranked[:count]]


def paper_vector(engine: SearchEngine, paper: Paper) -> dict[str, float]:
    """A paper's BM25 term weights (idf x tf saturation, the index's formula), unit length."""
    terms = engine.analyzer(f"{paper.title} {paper.abstract}")
    if not terms:
        return {}
    index = engine.index
    k1, b = index.params.k1, index.params.b
    norm = k1 * (1 - b + b * len(terms) / max(index.avgdl, 1e-9))
    vector = {}
    for term, tf in Counter(terms).items():
        idf = index.term_idf(term)
        if idf > 0:
            vector[term] = idf * tf * (k1 + 1) / (tf + norm)
    length = math.sqrt(sum(v * v for v in vector.values())) or 1.0
    return {t: v / length for t, v in vector.items()}


def _mean(vectors: Sequence[dict[str, float]]) -> dict[str, float]:
    total: defaultdict[str, float] = defaultdict(float)
    for vector in vectors:
        for term, value in vector.items():
            total[term] += value
    return {t: v / len(vectors) for t, v in total.items()} if vectors else {}


def build_profile(
    engine: SearchEngine,
    liked: Sequence[Paper],
    disliked: Sequence[Paper] = (),
    *,
    terms: int = PROFILE_TERMS,
    negative: float = NEGATIVE,
) -> Profile:
    """The profile from the papers a member saved or 👍 (`liked`) and 👎 (`disliked`)."""
    liked, disliked = liked[:MAX_SIGNALS], disliked[:MAX_SIGNALS]
    pos = _mean([paper_vector(engine, p) for p in liked])
    neg = _mean([paper_vector(engine, p) for p in disliked])
    # Negative weights are clipped to 0, as Rocchio is usually run: a 👎 lowers the weight of
    # the words it shares with what the member likes, and the paper itself never comes back
    # (`bot.foryou.ranking`), but one 👎 among the papers of a field the member reads must not
    # push the whole field below every unrelated paper (a negative term did, with titles
    # weighted 3x: "Hyperbolic graphs for X" all vanished after one of them was 👎).
    weights = {t: max(pos.get(t, 0.0) - negative * neg.get(t, 0.0), 0.0) for t in pos}
    ranked = sorted(weights.items(), key=lambda item: (-item[1], item[0]))
    kept = [(t, w) for t, w in ranked[:terms] if w > 0]
    return Profile(
        tuple(t for t, _w in kept), tuple(w for _t, w in kept), len(liked), len(disliked)
    )


def score(engine: SearchEngine, profile: Profile, positions: np.ndarray) -> np.ndarray:
    """The profile's score of each paper at `positions` (any order), 0 for no shared term."""
    positions = np.asarray(positions, dtype=np.int32)
    if profile.empty or not positions.shape[0]:
        return np.zeros(positions.shape[0], dtype=np.float64)
    order = np.argsort(positions, kind="stable")
    ids, scores = engine.index.score_docs(profile.terms, profile.weights, positions[order])
    dense = np.zeros(positions.shape[0], dtype=np.float64)
    found = np.searchsorted(positions[order], ids)
    dense[order[found]] = scores
    return dense


def upper_bound(engine: SearchEngine, terms: Sequence[str], weights: Sequence[float]) -> float:
    """The most a paper could score for these weighted terms (each term's BM25 weight at its
    ceiling, idf x (k1 + 1)): what a score is a share of."""
    ceiling = engine.index.params.k1 + 1
    return sum(
        max(w, 0.0) * engine.index.term_idf(t) * ceiling
        for t, w in zip(terms, weights, strict=True)
    )


def query_strength(engine: SearchEngine, query: str, positions: np.ndarray) -> np.ndarray:
    """How strongly each paper at `positions` matches a follow's query, 0 to 1: its BM25
    score as a share of the best a paper could reach (`upper_bound`). What a follow's
    minimum score and the order of its notice are measured in."""
    plan = engine.plan(query)
    weights = plan.weights or (1.0,) * len(plan.terms)
    found = score(engine, Profile(plan.terms, tuple(weights), 0, 0), positions)
    bound = upper_bound(engine, plan.terms, weights)
    return np.clip(found / bound, 0.0, 1.0) if bound > 0 else found

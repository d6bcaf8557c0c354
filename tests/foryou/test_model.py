"""The For you model and ranking without a database: what a profile learns, what it ranks
first, what it never lists (👎, already liked), the fallback below MIN_SIGNALS, and the
follow strength a minimum score is measured in."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from bot.config import SearchSettings
from bot.foryou import (
    MIN_SIGNALS,
    Signals,
    build_profile,
    new_positions,
    page_of,
    positions_of,
    query_strength,
    recommend,
)
from bot.papers.records import Paper
from bot.search import SearchEngine

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def paper(n: int, title: str, abstract: str, added: str | None = None) -> Paper:
    return Paper(
        id=f"t/{n}",
        title=title,
        abstract=abstract,
        venue="ICML 2026",
        year=2026,
        authors=(f"A{n}",),
        added=added,
    )


OLD = [
    paper(
        1, "Hyperbolic embeddings of trees", "Trees embed in hyperbolic space with low distortion."
    ),
    paper(2, "Hyperbolic graph networks", "Graph neural networks in hyperbolic geometry."),
    paper(3, "Poincaré embeddings", "Hierarchies embed in the Poincaré ball, a hyperbolic model."),
    paper(4, "Rainfall records", "Weather observations from ten cities over a decade."),
    paper(5, "Protein folding", "Predicting protein structure from sequences with attention."),
]
NEW = [
    paper(
        10,
        "Curved spaces for hierarchies",
        "Hyperbolic embeddings of hierarchies and trees.",
        "2026-02-27T00:00:00Z",
    ),
    paper(
        11, "Storm forecasting", "Weather forecasts for storms from radar.", "2026-02-27T00:00:00Z"
    ),
    paper(
        12,
        "Protein language models",
        "Protein sequences with attention models.",
        "2026-02-27T00:00:00Z",
    ),
    paper(
        13,
        "A survey of hyperbolic graph learning",
        "Hyperbolic graph networks surveyed.",
        "2026-02-28T00:00:00Z",
    ),
    paper(14, "Old news", "Hyperbolic trees, long ago.", "2025-01-01T00:00:00Z"),
]


@pytest.fixture(scope="module")
def engine() -> SearchEngine:
    return SearchEngine([*OLD, *NEW], settings=SearchSettings())


def test_profile_ranks_what_the_library_is_about_first(engine: SearchEngine) -> None:
    profile = build_profile(engine, OLD[:3])
    learned = profile.top_terms()
    assert "poincar" in learned
    assert not {"rainfal", "weather", "protein"} & set(profile.terms)
    signals = Signals(("t/1", "t/2", "t/3"), ())
    ranked, _ = recommend(engine, signals, new_positions(engine, NOW))
    ids = [pid for pid, _s in ranked]
    assert set(ids[:2]) == {"t/10", "t/13"}
    assert "t/11" not in ids
    assert "t/14" not in ids
    assert all(0 < s <= 1 for _pid, s in ranked)


def test_disliked_never_listed_and_pulls_its_words_down(engine: SearchEngine) -> None:
    liked = ("t/1", "t/2", "t/3", "t/5")
    plain, before = recommend(engine, Signals(liked, ()), new_positions(engine, NOW))
    assert "t/12" in [pid for pid, _s in plain]
    ranked, profile = recommend(engine, Signals(liked, ("t/12",)), new_positions(engine, NOW))
    ids = [pid for pid, _s in ranked]
    assert "t/12" not in ids
    # The 👎 paper's words that the liked papers share weigh less; none goes below 0 (Rocchio's
    # clipping), so one 👎 never sinks the member's whole field.
    was = dict(zip(before.terms, before.weights, strict=True))
    now = dict(zip(profile.terms, profile.weights, strict=True))
    disliked = engine.paper("t/12")
    own = set(engine.analyzer(f"{disliked.title} {disliked.abstract}"))
    shared = [t for t in was if t in own]
    assert shared
    assert all(now.get(t, 0.0) < was[t] for t in shared)
    assert all(w > 0 for w in profile.weights)
    # A liked paper is never recommended back.
    assert not set(ids) & set(liked)


def test_too_few_signals_fall_back_to_follows(engine: SearchEngine) -> None:
    few = Signals(("t/1",), ("t/10",))
    assert not few.enough
    assert MIN_SIGNALS > 1
    page = page_of(engine, few, ["hyperbolic", "weather"], 1, NOW)
    assert page.fallback
    assert page.learned == []
    ids = [item.paper.id for item in page.items]
    assert "t/10" not in ids  # 👎 stays out of the fallback too
    assert {"t/13", "t/11"} <= set(ids)
    assert page_of(engine, few, [], 1, NOW).total == 0


def test_a_corpus_without_added_times_is_all_new() -> None:
    engine = SearchEngine(OLD, settings=SearchSettings())
    assert new_positions(engine, NOW).tolist() == list(range(len(OLD)))


def test_query_strength_is_a_share_of_the_best_possible(engine: SearchEngine) -> None:
    positions = positions_of(engine, ["t/10", "t/11", "t/13"])
    strength = query_strength(engine, "hyperbolic graph", positions)
    by_id = dict(zip([engine.ids[int(p)] for p in positions], strength.tolist(), strict=True))
    assert by_id["t/11"] == 0.0
    assert 0 < by_id["t/10"] < by_id["t/13"] < 1
    assert np.all(strength <= 1)

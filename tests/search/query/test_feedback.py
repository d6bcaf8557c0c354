"""RM3-style pseudo-relevance feedback: the relevance model, the expansion, the engine switch."""

from dataclasses import replace

import numpy as np
import pytest

from bot.config import SearchSettings
from bot.search.engine import SearchEngine
from bot.search.query.feedback import expand, relevance_model


def test_relevance_model_weights_terms_by_document_score():
    # Doc A (score 3) is half "x"; doc B (score 1) is all "y": P(x) = 3/4 * 1/2, P(y) = 1/4.
    model = relevance_model([["x", "z"], ["y"]], [3.0, 1.0])
    assert model["x"] == pytest.approx(0.375)
    assert model["z"] == pytest.approx(0.375)
    assert model["y"] == pytest.approx(0.25)
    assert relevance_model([["x"]], [0.0]) == {}


def test_expand_adds_new_terms_strongest_at_the_given_weight():
    docs = {0: ["q", "alpha", "alpha", "beta"], 1: ["q", "alpha", "gamma"], 2: ["q", "zeta"]}
    ids, scores = np.array([0, 1, 2]), np.array([2.0, 1.0, 0.5])
    out = expand(["q"], ids, scores, docs.__getitem__, docs=2, n_terms=2, weight=0.3)
    assert out.added == ("alpha", "beta")  # zeta is only in doc 2, outside the top 2
    assert out.terms == ("q", "alpha", "beta")
    assert out.weights[:2] == (1.0, 0.3)
    assert 0 < out.weights[2] < 0.3
    off = expand(["q"], ids, scores, docs.__getitem__, docs=0, n_terms=2, weight=0.3)
    assert off.terms == ("q",)
    assert off.added == ()
    kept = expand(
        ["q"], ids, scores, docs.__getitem__, docs=2, n_terms=1, weight=0.3, weights=[0.5]
    )
    assert kept.weights[0] == 0.5


def test_engine_feedback_is_switched_by_config_and_stays_explainable(icml_engine):
    # No weak-match cut: the papers feedback reaches score far below the best match.
    settings = replace(
        SearchSettings(), prf_docs=3, prf_terms=5, prf_weight=0.3, min_score_ratio=0.0
    )
    engine = SearchEngine(icml_engine.papers, settings=settings, analyzer=icml_engine.analyzer)
    plain = icml_engine.search("backdoor", limit=19)
    wide = engine.search("backdoor", limit=19)
    assert wide.total > plain.total  # feedback terms reach papers without the word
    assert wide.hits[0].paper.id == plain.hits[0].paper.id
    assert wide.terms == plain.terms  # the typed words, not the added ones
    for hit in wide.hits:
        assert "**" in hit.snippet  # every hit shows the words that matched it

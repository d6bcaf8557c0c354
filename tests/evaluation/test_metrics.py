"""Metrics against hand-computed values, and against trec_eval itself when pytrec_eval is there."""

import math
import random

import pytest

from bot.evaluation.metrics import dcg, mean_scores, mrr_at, ndcg_at, per_query, recall_at


def test_ndcg_binary_by_hand():
    # Relevant at ranks 1 and 3: DCG = 1 + 1/log2(4) = 1.5; ideal = 1 + 1/log2(3).
    value = ndcg_at(["a", "b", "c"], {"a": 1, "c": 1}, 10)
    assert value == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    assert value == pytest.approx(0.919720, abs=1e-6)


def test_ndcg_graded_and_ideal_uses_all_judged_documents():
    # Grades 2 and 1 returned in the wrong order: (1 + 2/log2 3) / (2 + 1/log2 3).
    assert ndcg_at(["b", "a"], {"a": 2, "b": 1}, 10) == pytest.approx(0.859719, abs=1e-6)
    # The ideal counts a relevant document the run never found.
    assert ndcg_at(["a"], {"a": 1, "z": 1}, 10) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert ndcg_at(["x", "a"], {"a": 1}, 1) == 0.0
    assert ndcg_at(["a"], {"a": 0}, 10) == 0.0


def test_recall_and_mrr_by_hand():
    judged = {"a": 1, "b": 1, "c": 0}
    assert recall_at(["x", "a", "c"], judged, 2) == 0.5
    assert recall_at(["x", "a", "c"], judged, 1) == 0.0
    assert recall_at(["b", "a"], judged, 100) == 1.0
    assert mrr_at(["x", "c", "b"], judged, 10) == pytest.approx(1 / 3)
    assert mrr_at(["x", "c", "b"], judged, 2) == 0.0  # grade 0 is not relevant


def test_dcg_discount():
    assert dcg([1, 1, 1]) == pytest.approx(1 + 1 / math.log2(3) + 0.5)


def test_mean_counts_empty_runs_as_zero_and_skips_unjudged_queries():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 0}}
    run = {"q1": ["a"]}  # q2 returned nothing; q3 has no relevant document
    assert set(per_query(run, qrels, [("ndcg", 10)])) == {"q1", "q2"}
    scores = mean_scores(run, qrels)
    assert scores == {"ndcg@10": 0.5, "recall@100": 0.5, "mrr@10": 0.5}
    assert mean_scores({}, {}) == {"ndcg@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}


def test_agrees_with_trec_eval_on_random_runs():
    pytrec_eval = pytest.importorskip(
        "pytrec_eval", reason="cross-check needs pytrec-eval-terrier (a test extra)"
    )
    rng = random.Random(5)
    docs = [f"d{i}" for i in range(60)]
    qrels = {
        f"q{q}": {d: rng.choice([0, 1, 1, 2]) for d in rng.sample(docs, rng.randint(1, 8))}
        for q in range(40)
    }
    run = {q: rng.sample(docs, rng.randint(1, 50)) for q in qrels}
    ours = per_query(run, qrels, [("ndcg", 10), ("recall", 100), ("recall", 5), ("mrr", 10)])
    # trec_eval ranks by score; distinct descending scores keep our order.
    as_scores = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in run.items()}
    top10 = {q: {d: float(10 - i) for i, d in enumerate(r[:10])} for q, r in run.items()}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.5,100"}).evaluate(as_scores)
    ref_rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(top10)
    for q, mine in ours.items():
        assert mine["ndcg@10"] == pytest.approx(ref[q]["ndcg_cut_10"], abs=1e-9), q
        assert mine["recall@100"] == pytest.approx(ref[q]["recall_100"], abs=1e-9), q
        assert mine["recall@5"] == pytest.approx(ref[q]["recall_5"], abs=1e-9), q
        assert mine["mrr@10"] == pytest.approx(ref_rr[q]["recip_rank"], abs=1e-9), q

import json
import shutil

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from bot.papers.corpus import load_corpus
from bot.search.analysis.analyzer import Analyzer
from bot.search.files.integrity import first_damage
from bot.search.index.postings import (
    MIN_IDF,
    BM25Index,
    BM25Params,
    IndexCacheError,
    saved_digests,
)
from bot.search.parts import doc_text
from bot.search.ranking.topk import top_k
from tests.conftest import shared_path

A = Analyzer()


def assert_parity(tokens: list[list[str]], queries: list[list[str]]) -> None:
    ours = BM25Index.build(tokens)
    ref = BM25Okapi(tokens)
    for query in queries:
        expected = ref.get_scores(query)
        got = ours.get_scores(query)
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=0)


def assert_parity_by_term(tokens: list[list[str]], queries: list[list[str]]) -> None:
    """`assert_parity` for many queries over thousands of papers: rank_bm25 scores each
    distinct term once (its `get_scores` walks every paper's dict in Python for each query
    term, most of these tests' time), and a query's expected scores are those arrays added in
    the query's order, exactly the additions `get_scores` makes (from zeros, one term at a
    time), so the figures are the same bits, as the first query checks."""
    ours = BM25Index.build(tokens)
    ref = BM25Okapi(tokens)
    by_term: dict[str, np.ndarray] = {}
    for i, query in enumerate(queries):
        expected = np.zeros(ref.corpus_size)
        for term in query:
            if term not in by_term:
                by_term[term] = ref.get_scores([term])
            expected += by_term[term]
        if i == 0:
            assert len(query) > 1
            assert np.array_equal(expected, ref.get_scores(query))
        got = ours.get_scores(query)
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=0)


def test_parity_on_a_small_corpus_with_repeats_and_unknown_terms():
    docs = [["a", "b", "b"], ["b", "c"], ["c", "c", "c", "d"], ["e"], [], ["a", "e", "e"]]
    assert_parity(docs, [["b"], ["a", "a"], ["c", "zzz"], ["e", "d", "b"], ["zzz"], []])


def test_negative_idf_is_floored_like_rank_bm25():
    # "x" is in 4 of 5 documents: its raw idf is negative, rank_bm25 replaces it by eps * mean.
    docs = [["x", "y"], ["x"], ["x", "z"], ["x", "w"], ["v"]]
    ours = BM25Index.build(docs)
    ref = BM25Okapi(docs)
    assert ours.term_idf("x") == pytest.approx(ref.idf["x"], rel=1e-12)
    assert ours.term_idf("x") > 0


def test_parity_on_all_paperlists():
    folder = shared_path("paperlists")
    papers = load_corpus(sorted(folder.glob("*.json"))).papers
    tokens = [A(doc_text(p)) for p in papers]
    queries = [A(p.title) for p in papers[::17]][:240]
    assert len(queries) >= 200
    assert_parity_by_term(tokens, queries)


def test_parity_on_scifact_with_its_queries():
    corpus = shared_path("scifact", "corpus.jsonl")
    papers = load_corpus([corpus]).papers
    tokens = [A(doc_text(p)) for p in papers]
    lines = (corpus.parent / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    queries = [A(json.loads(line)["text"]) for line in lines[:250]]
    assert len(queries) >= 200
    assert_parity_by_term(tokens, queries)


def test_parameters_change_scores_like_rank_bm25():
    # "d" and "e" are in 1 of 3 documents: positive idf, where the floor does not apply.
    docs = [["a", "b"], ["a", "a", "c", "d", "e"], ["b", "c"], ["f"]]
    ours = BM25Index.build(docs, BM25Params(k1=0.9, b=0.4, epsilon=0.1))
    ref = BM25Okapi(docs, k1=0.9, b=0.4, epsilon=0.1)
    for query in (["d", "e"], ["a", "d"], ["f", "f"]):
        assert all(ref.idf[t] > 0 for t in query if t != "a")
        expected = ref.get_scores([t for t in query if ref.idf[t] > 0])
        got = ours.get_scores([t for t in query if ref.idf[t] > 0])
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_a_word_in_half_the_papers_still_matches():
    """rank_bm25 gives idf 0 to a word in exactly 2 of 4 papers, so they score 0 ("no
    match"); the floor gives it eps * mean idf, as rank_bm25 does for negative idf."""
    docs = [["transform", "x"], ["transform", "y"], ["z"], ["w"]]
    ref = BM25Okapi(docs)
    assert ref.idf["transform"] == 0
    ours = BM25Index.build(docs)
    mean = sum(ref.idf.values()) / len(ref.idf)
    assert ours.term_idf("transform") == pytest.approx(0.25 * mean, rel=1e-12)
    ids, scores = ours.score(["transform"])
    assert ids.tolist() == [0, 1]
    assert (scores > 0).all()


def test_floor_stays_positive_when_the_mean_idf_is_not():
    # Two documents sharing every word: every idf is <= 0, and so is eps * mean.
    docs = [["a", "b"], ["a", "b", "b"]]
    assert sum(BM25Okapi(docs).idf.values()) <= 0
    ours = BM25Index.build(docs)
    assert ours.term_idf("a") == MIN_IDF
    assert ours.score(["b"])[0].tolist() == [0, 1]


def test_score_touches_only_matching_documents():
    docs = [["a"], ["b"], ["a", "b"], ["c"], ["d"]]
    ids, scores = BM25Index.build(docs).score(["a"])
    assert ids.tolist() == [0, 2]
    assert (scores > 0).all()


def test_top_k_orders_by_score_then_corpus_order():
    ids = np.array([0, 1, 2, 3, 4, 5], dtype=np.int32)
    scores = np.array([1.0, 3.0, 2.0, 3.0, 0.0, 2.0])
    got_ids, got_scores = top_k(ids, scores, 4)
    assert got_ids.tolist() == [1, 3, 2, 5]
    assert got_scores.tolist() == [3.0, 3.0, 2.0, 2.0]
    # A tie at the cut keeps the earlier document.
    assert top_k(ids, scores, 3)[0].tolist() == [1, 3, 2]
    # Zero scores never come back, even when k asks for more.
    assert 4 not in top_k(ids, scores, 10)[0].tolist()
    assert top_k(ids[:0], scores[:0], 5)[0].size == 0


def test_saved_index_round_trip_and_damage_detection(tmp_path):
    docs = [["a", "b"], ["b", "c", "c"], ["d"]]
    index = BM25Index.build(docs)
    meta = {"corpus": "abc", "analyzer": "v1"}
    folder = tmp_path / "idx"
    index.save(folder, meta)
    loaded = BM25Index.load(folder, meta)
    np.testing.assert_array_equal(loaded.get_scores(["c", "b"]), index.get_scores(["c", "b"]))
    mapped = BM25Index.load(folder, meta, mmap=True)
    np.testing.assert_array_equal(mapped.get_scores(["c"]), index.get_scores(["c"]))

    with pytest.raises(IndexCacheError, match="stale"):
        BM25Index.load(folder, {"corpus": "other", "analyzer": "v1"})

    damaged = tmp_path / "damaged"
    shutil.copytree(folder, damaged)
    raw = bytearray((damaged / "tfs.npy").read_bytes())
    raw[-1] ^= 0xFF
    (damaged / "tfs.npy").write_bytes(bytes(raw))
    # Same size: loading trusts it (sizes only); the digest check after start-up does not.
    assert first_damage([(folder, saved_digests(folder))]) is None
    assert first_damage([(damaged, saved_digests(damaged))]) == (
        f"{damaged}: tfs.npy is damaged (checksum)"
    )
    truncated = tmp_path / "truncated"
    shutil.copytree(folder, truncated)
    (truncated / "vocab.txt").write_text("a\nb", encoding="utf-8")
    with pytest.raises(IndexCacheError, match=r"vocab\.txt is \d+ bytes"):
        BM25Index.load(truncated, meta)

    (damaged / "meta.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(IndexCacheError, match=r"meta\.json"):
        BM25Index.load(damaged, meta)

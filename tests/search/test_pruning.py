"""Pruned top-k (`bot.search.pruning`) against the exhaustive reference: the same ids, the same
scores to the bit, the same order, on many random queries; and it really skips work.

The pruned path is forced (`min_postings=0, max_share=1.0`) and must not fall back: on these
small corpora the default thresholds would send every query to the exhaustive path, and a
test comparing the reference with itself could not fail.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from bot.search import pruning
from bot.search.analyzer import Analyzer
from bot.search.index import BM25Index
from bot.search.pruning import BlockMax, prune, search_top_k
from tests.conftest import ICML, TEST_DATA

FORCE = {"min_postings": 0, "max_share": 1.0}


def _sentences() -> list[list[str]]:
    """Analysed sentences of the records kept in tests/ (always present)."""
    analyzer = Analyzer()
    texts = []
    for line in ICML.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        texts += [record.get("title", ""), *record.get("abstract", "").split(". ")]
    sample = json.loads((TEST_DATA / "iclr2018_sample.json").read_text(encoding="utf-8"))
    for record in sample if isinstance(sample, list) else sample.values():
        if isinstance(record, dict):
            texts += [record.get("title", ""), *str(record.get("abstract", "")).split(". ")]
    return [tokens for tokens in map(analyzer, texts) if tokens]


@pytest.fixture(scope="module")
def corpus() -> BM25Index:
    """3,000 papers recombined from real sentences (seeded): real word statistics, and
    enough blocks of 32 papers (94) for pruning to have something to skip."""
    rng = random.Random(7)
    sentences = _sentences()
    docs = [
        [t for _ in range(rng.randint(1, 8)) for t in rng.choice(sentences)] for _ in range(3000)
    ]
    return BM25Index.build(docs)


def _random_query(rng: random.Random, vocab: list[str]) -> list[str]:
    terms = [rng.choice(vocab) for _ in range(rng.randint(1, 8))]
    if rng.random() < 0.3:
        terms.append(rng.choice(terms))  # a repeated term counts twice
    if rng.random() < 0.1:
        terms.append("zzz-not-a-word")
    return terms


def _assert_same(got: tuple[np.ndarray, np.ndarray], want: tuple[np.ndarray, np.ndarray]) -> None:
    assert got[0].tolist() == want[0].tolist()
    assert got[1].tolist() == want[1].tolist()  # bit-identical floats, not approximately


def _check(index: BM25Index, terms: list[str], k: int, weights=None, allowed=None):
    """The forced pruned answer, which must exist and equal the exhaustive one."""
    got = prune(index, terms, k, weights, allowed, **FORCE)
    assert got is not None, terms
    _assert_same(got, search_top_k(index, terms, k, weights, allowed, exhaustive=True))
    return got


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pruned_equals_exhaustive_on_random_queries(corpus, seed):
    """Random terms (repeats, unknown words), k from 1 to beyond the matches, sometimes
    query weights (expansion), sometimes a filter mask of 1% to 90% of the papers."""
    index = corpus
    rng = random.Random(seed)
    vocab = list(index.vocab)
    for _ in range(250):
        terms = _random_query(rng, vocab)
        k = rng.choice([1, 3, 10, 10, 40, 5000])
        weights = [rng.choice([1.0, 0.5, 0.3, 2.0]) for _ in terms] if rng.random() < 0.4 else None
        allowed = None
        if rng.random() < 0.4:
            share = rng.choice([0.01, 0.2, 0.9])
            allowed = np.random.default_rng(rng.randrange(1 << 30)).random(index.n_docs) < share
        got = _check(index, terms, k, weights, allowed)
        if allowed is not None:
            assert allowed[got[0]].all()
        _assert_same(search_top_k(index, terms, k, weights, allowed), got)


def test_single_frequent_terms_and_k_beyond_the_matches(corpus):
    index = corpus
    by_df = sorted(index.vocab, key=index.doc_freq)
    for term in by_df[-20:] + by_df[:20]:
        for k in (1, 10, index.doc_freq(term), index.doc_freq(term) + 5):
            _check(index, [term], k)
    rare = by_df[0]
    assert _check(index, [rare], 100)[0].shape[0] == index.doc_freq(rare)


def test_ties_keep_corpus_order():
    # Eight identical papers in every block, and copies across blocks: many exact ties.
    base = [["graph", "neural", "network"], ["graph", "kernel"], ["neural", "network"]]
    docs = [list(base[i % 3]) for i in range(600)] + [["graph", "graph", "kernel"]] * 50
    index = BM25Index.build(docs)
    for terms in (["graph"], ["neural", "network"], ["graph", "kernel", "graph"], ["kernel"]):
        for k in (1, 5, 10, 33, 100, 1000):
            ids, scores = _check(index, terms, k)
            # Equal scores come in corpus order.
            same = scores[1:] == scores[:-1]
            assert (ids[1:][same] > ids[:-1][same]).all()


def test_pruning_skips_blocks_and_finds_the_best(corpus, monkeypatch):
    """Fails if the traversal scores every block (pruning wired off) or stops too early."""
    index = corpus
    scored: list[int] = []
    real = pruning._score_blocks

    def counting(query, blocks, shift):
        scored.append(blocks.shape[0])
        return real(query, blocks, shift)

    monkeypatch.setattr(pruning, "_score_blocks", counting)
    by_df = sorted(index.vocab, key=index.doc_freq)
    common, rare = by_df[-1], by_df[len(by_df) // 2]
    skipped = 0
    for terms in ([common, rare], [common], [by_df[-2], by_df[-3], rare]):
        scored.clear()
        _check(index, terms, 10)
        with_postings = {int(d) >> pruning.BLOCK_SHIFT for t in terms for d in index.postings(t)[0]}
        assert sum(scored) <= len(with_postings)
        skipped += len(with_postings) - sum(scored)
    assert skipped > 0


def test_fallbacks_still_answer_exactly(corpus):
    index = corpus
    terms = [max(index.vocab, key=index.doc_freq)]
    # A negative weight breaks every bound: no pruning, the exhaustive answer.
    assert prune(index, terms, 10, [-1.0], **FORCE) is None
    exhaustive = search_top_k(index, terms, 10, [-1.0], exhaustive=True)
    _assert_same(search_top_k(index, terms, 10, [-1.0]), exhaustive)
    assert prune(index, ["zzz-not-a-word"], 10, **FORCE) is None
    assert search_top_k(index, ["zzz-not-a-word"], 10)[0].size == 0
    assert prune(index, terms, 10, max_share=0.0) is None


def test_block_bounds_hold_and_survive_a_save(corpus, tmp_path):
    index = corpus
    bounds = index.block_max
    # Every posting's saturation is within its term's bound and its block's stored bound.
    for term in list(index.vocab)[::7]:
        tid = index.vocab[term]
        start, end = int(index.indptr[tid]), int(index.indptr[tid + 1])
        sat = np.asarray(index.sat[start:end])
        assert (sat <= bounds.term_max[tid]).all()
        row = int(bounds.rows[tid])
        if row >= 0:
            blocks = np.asarray(index.doc_ids[start:end]) >> bounds.shift
            stored = bounds.maxima[row, blocks] * (bounds.term_max[tid] / pruning.QUANT)
            assert (sat <= stored * (1 + pruning.SLACK)).all()
    assert (bounds.rows >= 0).any(), "no term long enough for a stored row: test corpus too small"
    index.save(tmp_path / "idx", {"corpus": "c"})
    loaded = BM25Index.load(tmp_path / "idx", {"corpus": "c"}, mmap=True)
    for name, values in bounds.arrays().items():
        np.testing.assert_array_equal(loaded.block_max.arrays()[name], values, err_msg=name)
    terms = sorted(index.vocab, key=index.doc_freq)[-3:]
    _assert_same(_check(loaded, terms, 10), _check(index, terms, 10))


def test_saved_bounds_of_another_size_are_refused():
    index = BM25Index.build([["a", "b"], ["b"]] * 40)
    arrays = index.block_max.arrays()
    assert BlockMax.from_arrays(arrays, index.n_docs) is not None
    assert BlockMax.from_arrays(arrays, index.n_docs + (1 << pruning.BLOCK_SHIFT)) is None


def test_maxscore_lookups_equal_exhaustive(corpus, monkeypatch):
    """The second way on (documents holding an essential term, looked up term by term),
    taken whenever it applies: same answers as the exhaustive path."""
    index = corpus
    monkeypatch.setattr(pruning, "LOOKUP_COST", 0)
    looked_up: list[int] = []
    real = pruning._score_docs

    def counting(query, docs):
        looked_up.append(docs.shape[0])
        return real(query, docs)

    monkeypatch.setattr(pruning, "_score_docs", counting)
    rng = random.Random(4)
    vocab = list(index.vocab)
    for _ in range(300):
        terms = _random_query(rng, vocab)
        weights = [rng.choice([1.0, 0.5, 2.0]) for _ in terms] if rng.random() < 0.3 else None
        _check(index, terms, rng.choice([1, 10, 30]), weights)
    assert len(looked_up) >= 30

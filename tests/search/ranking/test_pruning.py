"""Pruned top-k against the exhaustive reference: the same ids, the same scores to the bit,
the same order, on many random queries; and it really skips work. Both traversals are checked:
the compiled kernel (`bot/search/ranking/csrc/topk.c`, a C extension) and the numpy one
(`bot.search.ranking.pruning.prune`), each called directly so a fallback cannot hide a wrong answer.

The numpy traversal is forced (`min_postings=0, max_share=1.0`) and must not fall back: on
these small corpora the default thresholds would send every query to the exhaustive path, and
a test comparing the reference with itself could not fail.
"""

from __future__ import annotations

import functools
import json
import os
import random
import sys

import numpy as np
import pytest

from bot.search.analysis.analyzer import Analyzer
from bot.search.index.blockmax import BLOCK_SHIFT, QUANT, SLACK, BlockMax
from bot.search.index.postings import BM25Index
from bot.search.ranking import kernel, pruning
from bot.search.ranking.pruning import prune, search_top_k
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


# CI sets it: there the extension must have been built, and its tests must run, not skip.
REQUIRE = "PAPERBOT_REQUIRE_KERNEL"


def _compiled_kernel() -> kernel.Kernel:
    """The compiled kernel; its tests skip where the install could not build it (no C
    compiler), except where PAPERBOT_REQUIRE_KERNEL=1 says it must be there."""
    if isinstance(kernel._module(), str):
        reason = f"compiled top-k kernel unavailable: {kernel.describe()}"
        if os.environ.get(REQUIRE) == "1":
            pytest.fail(f"{reason}, and {REQUIRE}=1")
        pytest.skip(reason)
    return kernel.run


def _numpy(index, terms, k, weights=None, allowed=None):
    query = pruning._query(index, terms, weights)
    return None if query is None else prune(query, index.block_max, k, allowed, **FORCE)


def _kernel(index, terms, k, weights=None, allowed=None, stats=None):
    found = pruning._terms(index, terms, weights)
    run = _compiled_kernel()
    return (
        None if found is None else run(index, *found, k, pruning.KERNEL_SEEDS, allowed, stats=stats)
    )


@pytest.fixture(params=["numpy", "compiled", "compiled, 1 seed block"])
def traverse(request, monkeypatch):
    """Each traversal, called directly: it must answer (no fallback to the reference). With
    one seed block the kernel's first rounds find little and its last sweep does the work."""
    if request.param.endswith("1 seed block"):
        monkeypatch.setattr(pruning, "KERNEL_SEEDS", 1)
    return _numpy if request.param == "numpy" else _kernel


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


def _check(traverse, index: BM25Index, terms: list[str], k: int, weights=None, allowed=None):
    """The traversal's answer, which must exist and equal the exhaustive one."""
    got = traverse(index, terms, k, weights, allowed)
    assert got is not None, terms
    _assert_same(got, search_top_k(index, terms, k, weights, allowed, exhaustive=True))
    return got


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pruned_equals_exhaustive_on_random_queries(corpus, traverse, seed):
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
        got = _check(traverse, index, terms, k, weights, allowed)
        if allowed is not None:
            assert allowed[got[0]].all()
        _assert_same(search_top_k(index, terms, k, weights, allowed), got)


def test_single_frequent_terms_and_k_beyond_the_matches(corpus, traverse):
    index = corpus
    by_df = sorted(index.vocab, key=index.doc_freq)
    for term in by_df[-20:] + by_df[:20]:
        for k in (1, 10, index.doc_freq(term), index.doc_freq(term) + 5):
            _check(traverse, index, [term], k)
    rare = by_df[0]
    assert _check(traverse, index, [rare], 100)[0].shape[0] == index.doc_freq(rare)


def test_ties_keep_corpus_order(traverse):
    # Eight identical papers in every block, and copies across blocks: many exact ties.
    base = [["graph", "neural", "network"], ["graph", "kernel"], ["neural", "network"]]
    docs = [list(base[i % 3]) for i in range(600)] + [["graph", "graph", "kernel"]] * 50
    index = BM25Index.build(docs)
    for terms in (["graph"], ["neural", "network"], ["graph", "kernel", "graph"], ["kernel"]):
        for k in (1, 5, 10, 33, 100, 1000):
            ids, scores = _check(traverse, index, terms, k)
            # Equal scores come in corpus order.
            same = scores[1:] == scores[:-1]
            assert (ids[1:][same] > ids[:-1][same]).all()


def test_pruning_skips_blocks_and_finds_the_best(corpus, monkeypatch):
    """Fails if the numpy traversal scores every block (pruning wired off) or stops too early."""
    index = corpus
    scored: list[int] = []
    real = pruning._score_blocks

    def counting(query, blocks, shift):
        scored.append(blocks.shape[0])
        return real(query, blocks, shift)

    monkeypatch.setattr(pruning, "_score_blocks", counting)
    skipped = 0
    for terms in _skippable(index):
        scored.clear()
        _check(_numpy, index, terms, 10)
        skipped += _blocks_with_postings(index, terms) - sum(scored)
        assert sum(scored) <= _blocks_with_postings(index, terms)
    assert skipped > 0


@pytest.mark.parametrize("seeds", [16, 1])
def test_kernel_skips_blocks_and_finds_the_best(corpus, monkeypatch, seeds):
    """The same for the compiled kernel, which counts the blocks it scores; with one seed
    block most of them come from the last sweep, which must skip too."""
    _compiled_kernel()
    monkeypatch.setattr(pruning, "KERNEL_SEEDS", seeds)
    index = corpus
    for terms in _skippable(index):
        scored: list[int] = []
        _check(functools.partial(_kernel, stats=scored), index, terms, 10)
        # Measured: 14-34 of the 94 blocks are scored.
        assert 0 < scored[0] <= _blocks_with_postings(index, terms) // 2, terms


def _skippable(index: BM25Index) -> list[list[str]]:
    by_df = sorted(index.vocab, key=index.doc_freq)
    common, rare = by_df[-1], by_df[len(by_df) // 2]
    return [[common, rare], [common], [by_df[-2], by_df[-3], rare]]


def _blocks_with_postings(index: BM25Index, terms: list[str]) -> int:
    return len({int(d) >> BLOCK_SHIFT for t in terms for d in index.postings(t)[0]})


def test_fallbacks_still_answer_exactly(corpus):
    index = corpus
    terms = [max(index.vocab, key=index.doc_freq)]
    # A negative weight breaks every bound: no pruning, the exhaustive answer.
    assert pruning._query(index, terms, [-1.0]) is None
    exhaustive = search_top_k(index, terms, 10, [-1.0], exhaustive=True)
    _assert_same(search_top_k(index, terms, 10, [-1.0]), exhaustive)
    assert pruning._query(index, ["zzz-not-a-word"], None) is None
    assert search_top_k(index, ["zzz-not-a-word"], 10)[0].size == 0
    query = pruning._query(index, terms, None)
    assert prune(query, index.block_max, 10, max_share=0.0) is None
    assert search_top_k(index, terms, 0)[0].size == 0


def test_search_top_k_takes_the_kernel_where_built(corpus, monkeypatch):
    """Queries take the kernel where it was built, numpy's traversal where not or where
    PAPERBOT_TOPK_KERNEL=numpy. Same answers either way."""
    index = corpus
    run = _compiled_kernel()
    calls: list[int] = []

    def spy(*args, **kwargs):
        calls.append(args[3])  # k
        return run(*args, **kwargs)

    terms = sorted(index.vocab, key=index.doc_freq)[-3:]
    want = search_top_k(index, terms, 10, exhaustive=True)
    monkeypatch.setattr(kernel, "run", spy)
    _assert_same(search_top_k(index, terms, 10), want)
    assert calls == [10]
    monkeypatch.setenv(kernel.ENV, "numpy")
    assert kernel.compiled() is None
    assert "off, PAPERBOT_TOPK_KERNEL=numpy" in kernel.describe()
    _assert_same(search_top_k(index, terms, 10), want)
    assert calls == [10]
    monkeypatch.delenv(kernel.ENV)
    assert kernel.describe() == "compiled kernel (C extension)"


def test_without_the_extension_queries_take_numpy(corpus, monkeypatch):
    """An install without a C compiler: the kernel says why it is missing, and queries get
    the same answers from the numpy traversal."""
    monkeypatch.setitem(sys.modules, kernel.MODULE, None)
    kernel._module.cache_clear()
    try:
        assert kernel.compiled() is None
        assert "not built" in kernel.describe()
        terms = sorted(corpus.vocab, key=corpus.doc_freq)[-3:]
        got = search_top_k(corpus, terms, 10)
        _assert_same(got, search_top_k(corpus, terms, 10, exhaustive=True))
    finally:
        kernel._module.cache_clear()


def test_kernel_refuses_what_it_cannot_read_safely(corpus):
    """Wrong types, term ids outside the vocabulary and postings out of order raise, never
    read outside an array (a damaged index must not crash the bot)."""
    _compiled_kernel()
    native = kernel._module()
    index = corpus
    arrays = list(kernel.arrays_of(index))
    n_blocks = arrays[-1].shape[1]
    out = np.empty(10, np.int32), np.empty(10, np.float64)
    tail = (BLOCK_SHIFT,)

    def call(arrays, tids, weights=None, allowed=None, outs=out, k=10):
        weights = np.ones(len(tids)) if weights is None else weights
        args = (*arrays, n_blocks, *tail, np.array(tids, np.int64), weights, k, 16, allowed)
        return native.top_k(*args, *outs, SLACK, float(QUANT))

    assert call(arrays, [0])[0] > 0
    with pytest.raises(ValueError, match="term id"):
        call(arrays, [len(index.vocab)])
    with pytest.raises(ValueError, match="term id"):
        call(arrays, [-1])
    with pytest.raises(ValueError, match="weight"):
        call(arrays, [0, 1], np.ones(1))
    with pytest.raises(ValueError, match="room"):
        call(arrays, [0], k=11)
    with pytest.raises(TypeError, match="doc_ids"):
        call([arrays[0].astype(np.int64), *arrays[1:]], [0])
    with pytest.raises(TypeError, match="allowed"):
        call(arrays, [0], allowed=np.ones(index.n_docs, np.int8))
    # Postings out of order (a damaged file): refused where the traversal meets them.
    common = max(index.vocab, key=index.doc_freq)
    tid = index.vocab[common]
    start, end = int(index.indptr[tid]), int(index.indptr[tid + 1])
    damaged = arrays[0].copy()
    damaged[start:end] = damaged[start:end][::-1]
    with pytest.raises(ValueError, match="postings out of order"):
        call([damaged, *arrays[1:]], [tid])
    beyond = arrays[0].copy()
    beyond[end - 1] = (n_blocks + 5) << BLOCK_SHIFT
    rows = arrays[5].copy()
    rows[tid] = -1  # a short list: its bounds come from the postings
    with pytest.raises(ValueError, match="beyond the last block"):
        call([beyond, *arrays[1:5], rows, arrays[6]], [tid])


def test_block_bounds_hold_and_survive_a_save(corpus, traverse, tmp_path):
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
            stored = bounds.maxima[row, blocks] * (bounds.term_max[tid] / QUANT)
            assert (sat <= stored * (1 + SLACK)).all()
            # 0 only where the term is absent (the kernel skips those blocks unprobed).
            present = np.zeros(bounds.maxima.shape[1], bool)
            present[blocks] = True
            assert ((bounds.maxima[row] > 0) == present).all()
    assert (bounds.rows >= 0).any(), "no term long enough for a stored row: test corpus too small"
    index.save(tmp_path / "idx", {"corpus": "c"})
    loaded = BM25Index.load(tmp_path / "idx", {"corpus": "c"}, mmap=True)
    for name, values in bounds.arrays().items():
        np.testing.assert_array_equal(loaded.block_max.arrays()[name], values, err_msg=name)
    terms = sorted(index.vocab, key=index.doc_freq)[-3:]
    _assert_same(_check(traverse, loaded, terms, 10), _check(traverse, index, terms, 10))


def test_faint_postings_are_not_skipped(traverse):
    """A term in a few very long papers saturates so little there that its stored block
    maximum rounds up to 1 of 255 (0 means absent): those papers still get its score."""
    # In enough papers (a quarter of the blocks) for a stored row of block maxima.
    short = [[f"w{i % 50}", "common", *["faint"] * (i < 60)] for i in range(5000)]
    long = [["faint", *["filler"] * 100_000] for _ in range(10)]
    index = BM25Index.build([["faint"] * 50, *short, *long])
    bounds = index.block_max
    row = bounds.rows[index.vocab["faint"]]
    assert row >= 0
    assert bounds.maxima[row][bounds.maxima[row] > 0].min() == 1  # the case is there
    ids, _scores = _check(traverse, index, ["faint", "filler"], 20)
    assert set(range(5001, 5011)) <= set(ids.tolist())


def test_saved_bounds_of_another_size_are_refused():
    index = BM25Index.build([["a", "b"], ["b"]] * 40)
    arrays = index.block_max.arrays()
    assert BlockMax.from_arrays(arrays, index.n_docs) is not None
    assert BlockMax.from_arrays(arrays, index.n_docs + (1 << BLOCK_SHIFT)) is None


def test_maxscore_lookups_equal_exhaustive(corpus, monkeypatch):
    """The numpy traversal's second way on (documents holding an essential term, looked up
    term by term), taken whenever it applies: same answers as the exhaustive path."""
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
        _check(_numpy, index, terms, rng.choice([1, 10, 30]), weights)
    assert len(looked_up) >= 30

"""Pruned top-k against the exhaustive reference: the same ids, the same scores to the bit,
the same order, on many random queries; and it really skips work. Both traversals are checked:
the compiled kernel (`bot.search.blockmax_kernel`, numba) and the numpy one
(`bot.search.pruning.prune`), each called directly so a fallback cannot hide a wrong answer.

The numpy traversal is forced (`min_postings=0, max_share=1.0`) and must not fall back: on
these small corpora the default thresholds would send every query to the exhaustive path, and
a test comparing the reference with itself could not fail.
"""

from __future__ import annotations

import json
import random
import sys

import numpy as np
import pytest

from bot.search import kernel, pruning
from bot.search.analyzer import Analyzer
from bot.search.blockmax import BLOCK_SHIFT, QUANT, SLACK, BlockMax
from bot.search.index import BM25Index
from bot.search.pruning import prune, search_top_k
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


def _compiled_kernel() -> kernel.Kernel:
    """The compiled kernel, loaded now (numba compiles it, or loads its cache)."""
    kernel.load(wait=True)
    run = kernel.compiled()
    if run is None:
        pytest.skip(f"compiled top-k kernel unavailable: {kernel.describe()}")
    return run


def _numpy(index, terms, k, weights=None, allowed=None):
    query = pruning._query(index, terms, weights)
    return None if query is None else prune(query, index.block_max, k, allowed, **FORCE)


def _kernel(index, terms, k, weights=None, allowed=None, run=None):
    found = pruning._terms(index, terms, weights)
    run = run or _compiled_kernel()
    return None if found is None else pruning._compiled(run, index, *found, k, allowed)


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
    """The same for the compiled kernel: its driver (`block_max_top_k`) run as Python, the
    blocks it scores counted, each scored by the compiled code; with one seed block most
    of them come from the last sweep, which must skip too."""
    from bot.search import blockmax_kernel

    run = _compiled_kernel()
    scored: list[int] = []
    real = blockmax_kernel._score_into

    def counting(*args):
        scored.append(args[5])
        return real(*args)

    monkeypatch.setattr(blockmax_kernel, "_score_into", counting)
    monkeypatch.setattr(pruning, "KERNEL_SEEDS", seeds)
    index = corpus
    for terms in _skippable(index):
        scored.clear()
        _check(lambda *a: _kernel(*a, run=run.py_func), index, terms, 10)
        assert len(scored) == len(set(scored))  # no block scored twice
        # Measured: 14-34 of the 94 blocks are scored.
        assert len(scored) <= _blocks_with_postings(index, terms) // 2, terms


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


def test_search_top_k_takes_the_kernel_once_loaded(corpus, monkeypatch):
    """Until the kernel is ready queries take the numpy traversal; then the kernel. Same
    answers either way."""
    index = corpus
    run = _compiled_kernel()
    calls: list[int] = []

    def spy(*args):
        calls.append(args[10])  # k
        return run(*args)

    terms = sorted(index.vocab, key=index.doc_freq)[-3:]
    want = search_top_k(index, terms, 10, exhaustive=True)
    monkeypatch.setattr(kernel, "compiled", lambda: None)
    _assert_same(search_top_k(index, terms, 10), want)
    monkeypatch.setattr(kernel, "compiled", lambda: spy)
    _assert_same(search_top_k(index, terms, 10), want)
    assert calls == [10]


def test_kernel_load_falls_back_to_numpy(monkeypatch):
    """Without numba the loader says why and queries keep numpy's."""
    monkeypatch.setitem(sys.modules, "bot.search.blockmax_kernel", None)
    loader = kernel._Loader()
    loader.start()
    assert loader.done.wait(30)
    assert loader.kernel is None
    assert "numba is not installed" in (loader.error or "")


def test_kernel_is_opt_in(monkeypatch):
    """Pruned queries start loading the kernel only where PAPERBOT_TOPK_KERNEL=numba."""
    loader = kernel._Loader()
    monkeypatch.setattr(kernel, "_LOADER", loader)
    monkeypatch.setattr(loader, "start", lambda: setattr(loader, "started", True))
    monkeypatch.delenv(kernel.ENV, raising=False)
    assert kernel.compiled() is None
    assert not loader.started
    assert "not asked for" in kernel.describe()
    monkeypatch.setenv(kernel.ENV, "numba")
    assert kernel.compiled() is None  # loading in the background: numpy meanwhile
    assert loader.started
    assert "still loading" in kernel.describe()


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

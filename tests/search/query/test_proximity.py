"""Word order: consecutive query words found as a run lift a paper; the matches stay BM25's."""

import random
from collections import Counter
from dataclasses import replace
from itertools import pairwise

import numpy as np
import pytest

from bot.config import SearchSettings
from bot.papers.records import Paper
from bot.search.analysis.analyzer import Analyzer
from bot.search.engine import SearchEngine
from bot.search.index.postings import BM25Index
from bot.search.query import proximity
from bot.search.query.proximity import pair_bonus, rescore
from bot.search.ranking import kernel
from tests.search.ranking.test_pruning import _compiled_kernel, _sentences


@pytest.fixture(autouse=True, params=["compiled", "numpy"])
def counter(request, monkeypatch):
    """Every test both ways: pair counts from the compiled kernel, and from numpy's
    occurrences (PAPERBOT_TOPK_KERNEL=numpy)."""
    if request.param == "numpy":
        monkeypatch.setenv(kernel.ENV, "numpy")
    else:
        _compiled_kernel()
    return request.param


def paper(pid: str, title: str, abstract: str) -> Paper:
    return Paper(id=pid, title=title, abstract=abstract, venue="ICML 2025", year=2025)


def index_of(*texts: str) -> BM25Index:
    analyzer = Analyzer()
    return BM25Index.build([analyzer(t) for t in texts])


def test_only_adjacent_pairs_in_query_order_count() -> None:
    index = index_of(
        "optimal transport on graphs",
        "transport that is optimal",  # both words, not as a run in query order
        "optimal control and transport",  # both words, apart
        "optimal transport, then optimal transport again",
    )
    bonus = pair_bonus(index, ["optim", "transport"], np.arange(4))
    assert bonus[0] > 0
    assert bonus[1] == bonus[2] == 0
    assert bonus[3] > bonus[0]  # two runs count more than one, saturated
    assert bonus[3] < 2 * bonus[0]


def test_a_run_never_spans_two_papers() -> None:
    index = index_of("graphs and optimal", "transport plans")
    assert pair_bonus(index, ["optim", "transport"], np.arange(2)).tolist() == [0.0, 0.0]


def test_rescore_touches_only_the_best_and_never_with_one_word() -> None:
    index = index_of("optimal transport", "optimal transport", "optimal transport")
    docs = np.arange(3)
    scores = np.array([3.0, 2.0, 1.0])
    assert rescore(index, ["optim"], docs, scores, 1.0) is scores
    assert rescore(index, ["optim", "transport"], docs, scores, 0.0) is scores
    out = rescore(index, ["optim", "transport"], docs, scores, 1.0, depth=2)
    assert out[0] > 3.0
    assert out[1] > 2.0
    assert out[2] == 1.0


def test_the_paper_with_the_words_in_order_ranks_first() -> None:
    # The same words, as many, in two orders: BM25 ties them (corpus order decides).
    papers = [
        paper("scattered", "Molecules", "Networks of neural graph atoms."),
        paper("in-order", "Molecules", "Graph neural networks of atoms."),
        *(paper(f"other{i}", "Kernels", f"Sampling with kernels, part {i}.") for i in range(3)),
    ]
    plain = SearchEngine(papers, settings=replace(SearchSettings(), proximity_weight=0.0))
    ordered = SearchEngine(papers)
    assert SearchSettings().proximity_weight > 0
    query = "graph neural networks"
    assert [h.paper.id for h in plain.search(query).hits] == ["scattered", "in-order"]
    assert [h.paper.id for h in ordered.search(query).hits] == ["in-order", "scattered"]
    # The matches (and daily pools) are BM25's: only the order changes.
    assert ordered.search(query).total == plain.search(query).total == 2
    assert sorted(ordered.matching_ids(query)) == sorted(plain.matching_ids(query))


def test_an_index_without_positions_gets_no_bonus() -> None:
    index = index_of("optimal transport", "optimal transport")
    index.positions = np.empty(0, np.uint16)
    assert pair_bonus(index, ["optim", "transport"], np.arange(2)).tolist() == [0.0, 0.0]


@pytest.fixture(scope="module")
def sentences_index() -> tuple[BM25Index, list[list[str]]]:
    """1,500 papers recombined from real sentences (seeded), some with a run repeated."""
    rng = random.Random(11)
    sentences = _sentences()
    docs = []
    for _ in range(1500):
        doc = [t for _ in range(rng.randint(1, 6)) for t in rng.choice(sentences)]
        docs.append(doc + doc[:4] if rng.random() < 0.2 else doc)
    return BM25Index.build(docs), docs


def test_pair_counts_equal_counting_the_tokens(sentences_index, counter):
    """The word-order bonus's pair counts (either way) against counting adjacent tokens in
    the papers themselves, over pairs of frequent, middling and rare words."""
    index, docs = sentences_index
    rng = random.Random(5)
    truth = [Counter(pairwise(doc)) for doc in docs]
    seen = Counter(pair for counts in truth for pair in counts)
    common = [pair for pair, _ in seen.most_common(40)]
    by_df = sorted(index.vocab, key=index.doc_freq)
    pairs = common + [(rng.choice(by_df[-200:]), rng.choice(by_df)) for _ in range(40)]
    checked = 0
    for a, b in pairs:
        if a == b:
            continue
        ranked = np.array(sorted(rng.sample(range(len(docs)), rng.choice([1, 40, 100]))))
        want = np.array([truth[d][(a, b)] for d in ranked], dtype=np.float64)
        bonus = pair_bonus(index, [a, b], ranked, k1=1.2)
        idf = (float(index.idf[index.vocab[a]]) + float(index.idf[index.vocab[b]])) / 2
        np.testing.assert_allclose(bonus, idf * want * 2.2 / (want + 1.2), rtol=1e-12)
        checked += int((want > 0).sum())
    assert checked > 100  # pairs really found, not only zeros


def test_compiled_pair_counts_equal_numpy_bit_for_bit(sentences_index):
    """The same floats from both counters, pairs indexed or not."""
    _compiled_kernel()
    index, docs = sentences_index
    rng = random.Random(9)
    vocab = sorted(index.vocab, key=index.doc_freq)[-300:]
    for _ in range(200):
        terms = [rng.choice(vocab) for _ in range(rng.randint(2, 5))]
        ranked = np.array(sorted(rng.sample(range(len(docs)), 100)))
        compiled = pair_bonus(index, terms, ranked)
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(kernel.ENV, "numpy")
            assert pair_bonus(index, terms, ranked).tolist() == compiled.tolist()


def test_compiled_pair_counts_refuse_damaged_positions(sentences_index):
    _compiled_kernel()
    index, _docs = sentences_index
    tid = max(index.vocab.values(), key=lambda t: int(index.indptr[t + 1] - index.indptr[t]))
    term = proximity._term(index, tid)
    docs = np.asarray(index.doc_ids[term[0] : term[1]], dtype=np.int64)
    native = kernel._module()
    out = np.zeros(docs.shape[0], np.int64)
    args = (np.asarray(index.doc_ids), np.asarray(index.tfs))
    native.pair_counts(*args, np.asarray(index.positions), term, term, 64, docs, out)
    cut = np.asarray(index.positions)[: int(index.pos_indptr[tid]) + 1]
    with pytest.raises(ValueError, match="damaged"):
        native.pair_counts(*args, cut, term, term, 64, docs, out)
    with pytest.raises(ValueError, match="out of range"):
        native.pair_counts(*args, cut, (*term[:1], 10**12, *term[2:]), term, 64, docs, out)
    with pytest.raises(ValueError, match="one count per document"):
        native.pair_counts(*args, cut, term, term, 64, docs, out[:-1])
    with pytest.raises(TypeError, match="uint16 or uint32"):
        native.pair_counts(args[0], args[1].astype(np.int64), cut, term, term, 64, docs, out)

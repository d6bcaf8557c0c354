"""Word order: consecutive query words found as a run lift a paper; the matches stay BM25's."""

from dataclasses import replace

import numpy as np

from bot.config import SearchSettings
from bot.search.analyzer import Analyzer
from bot.search.engine import SearchEngine
from bot.search.index import BM25Index
from bot.search.models import Paper
from bot.search.proximity import pair_bonus, rescore


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

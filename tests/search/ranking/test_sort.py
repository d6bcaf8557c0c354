"""`sort:` orders every match, so totals stay exact and pages are slices of one order."""

from itertools import pairwise

import numpy as np
import pytest

from bot.search.engine import SearchEngine
from bot.search.ranking.pages import sorted_page
from tests.search import querycorpus


@pytest.fixture(scope="module")
def engine() -> SearchEngine:
    return querycorpus.engine()


def test_sorted_page_orders_by_year_then_score_then_corpus_order() -> None:
    ids = np.array([0, 1, 2, 3, 4], dtype=np.int32)
    scores = np.array([1.0, 3.0, 2.0, 5.0, 2.0])
    years = np.array([2020, 2024, 2024, 0, 2020], dtype=np.int32)
    venues = np.array([1, 0, 1, 0, 2], dtype=np.int32)
    new = sorted_page("new", ids, scores, years, venues, 10)[0].tolist()
    assert new == [1, 2, 4, 0, 3]  # unknown year (0) last
    assert sorted_page("old", ids, scores, years, venues, 10)[0].tolist() == [4, 0, 1, 2, 3]
    assert sorted_page("venue", ids, scores, years, venues, 10)[0].tolist() == [3, 1, 2, 0, 4]
    assert sorted_page("new", ids, scores, years, venues, 2)[1].tolist() == [3.0, 2.0]


@pytest.mark.parametrize("order", ["new", "old", "venue"])
def test_pages_of_a_sorted_search_are_one_order_with_an_exact_total(engine, order) -> None:
    query = f"agents sort:{order}"
    whole = engine.search(query, limit=100)
    relevance = engine.search("agents", limit=100)
    assert whole.sort == order
    assert relevance.sort == "relevance"
    assert whole.total == relevance.total
    assert whole.total_exact
    assert {h.paper.id for h in whole.hits} == {h.paper.id for h in relevance.hits}
    pages = [engine.search(query, limit=7, offset=o) for o in range(0, whole.total, 7)]
    assert [h.paper.id for p in pages for h in p.hits] == [h.paper.id for h in whole.hits]
    assert all(p.total == whole.total and p.total_exact for p in pages)
    assert [h.rank for p in pages for h in p.hits] == list(range(1, whole.total + 1))
    years = [h.paper.year or 0 for h in whole.hits]
    venues = [h.paper.venue for h in whole.hits]
    if order == "new":
        assert years == sorted(years, reverse=True)
    elif order == "old":
        assert years == sorted(years)
    else:
        assert venues == sorted(venues)


def test_within_a_year_the_better_match_comes_first(engine) -> None:
    hits = engine.search("graph neural sort:new", limit=100).hits
    for a, b in pairwise(hits):
        if a.paper.year == b.paper.year:
            assert a.score >= b.score


def test_a_list_without_words_is_newest_first(engine) -> None:
    result = engine.search("author:levine", limit=20)
    assert result.sort == "new"
    years = [h.paper.year for h in result.hits]
    assert years == sorted(years, reverse=True)
    assert engine.search("author:levine sort:old", limit=20).hits[0].paper.year == min(years)

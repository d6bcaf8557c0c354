"""Authors, fields, did-you-mean, paging past the end, filters that say what is wrong,
MoreLikeThis and daily pools that equal /search."""

import pytest

from bot.config import SearchSettings
from bot.papers.corpus import load_file
from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from bot.search.results import BadFilter
from tests.conftest import TEST_DATA

SAMPLE = TEST_DATA / "latex_sample.json"


def paper(pid: str, title: str, abstract: str, **kw) -> Paper:
    return Paper(id=pid, title=title, abstract=abstract, venue=kw.pop("venue", "ICML 2025"), **kw)


@pytest.fixture(scope="module")
def small() -> SearchEngine:
    papers = [
        paper(
            "a",
            "Transformers for vision",
            "We study vision transformers.",
            year=2024,
            authors=("Michael I. Jordan", "Ada Lovelace"),
        ),
        paper(
            "b",
            "Transformers for text",
            "Language modelling with attention.",
            year=2025,
            authors=("Jordan, Michael",),
            keywords=("world models",),
        ),
        paper(
            "c",
            "Graph kernels",
            "Kernels on graphs.",
            year=2023,
            authors=("Bernhard Schölkopf",),
            venue="NeurIPS 2018",
        ),
        paper(
            "d",
            "Diffusion policies",
            "Diffusion for robot control.",
            year=2025,
            authors=("Alan Turing",),
            tldr="Diffusion makes robots move.",
        ),
    ]
    return SearchEngine(papers)


def ids(result) -> list[str]:
    return [h.paper.id for h in result.hits]


def test_a_word_in_half_of_four_papers_is_found(small):
    assert set(ids(small.search("transformers"))) == {"a", "b"}


def test_author_alone_lists_that_authors_papers_newest_first(small):
    assert ids(small.search("author:jordan")) == ["b", "a"]
    assert ids(small.search('author:"Michael Jordan"')) == ["b", "a"]
    assert ids(small.search("author:scholkopf")) == ["c"]
    assert ids(small.search('author:"Schölkopf, Bernhard"')) == ["c"]
    assert small.search("author:hopper").total == 0


def test_author_with_words(small):
    assert ids(small.search("vision author:jordan")) == ["a"]


def test_author_names_for_autocomplete(small):
    assert [n for n, _c in small.suggest_authors("jor")] == ["Michael I. Jordan", "Michael Jordan"]


def test_keywords_are_indexed(small):
    assert ids(small.search('"world models"')) == ["b"]


def test_did_you_mean(small):
    result = small.search("difusion")
    assert result.total == 0
    assert result.suggestion == "diffusion"
    assert result.empty_text() == "No match for difusion; did you mean **diffusion**?"
    assert small.search("diffusion").suggestion is None


def test_paging_past_the_end_says_so(small):
    result = small.search("transformers", limit=1, offset=10)
    assert result.hits == []
    assert result.total == 2
    assert result.empty_text() == "2 matches; page 11 is past the end (last page 2)."


def test_bad_year_is_an_error(small):
    with pytest.raises(BadFilter, match="year:abc"):
        small.search("graph year:abc")


def test_venue_aliases_and_unknown_venues(small):
    assert ids(small.search("kernels venue:nips")) == ["c"]
    assert ids(small.search("kernels venue:neurips2018")) == ["c"]
    with pytest.raises(BadFilter, match="Venues in this corpus: ICML 2025, NeurIPS 2018"):
        small.search("kernels venue:cvpr")


def test_tldr_and_bibtex_are_kept():
    papers = {p.id.split("/")[-1]: p for p in load_file(SAMPLE, exclude_status=()).papers}
    qpots = papers["5qYVbLA1lK"]
    assert qpots.bibtex.startswith("@")
    assert qpots.to_json()["bibtex"] == qpots.bibtex
    iclr = load_file(TEST_DATA / "iclr2018_sample.json", exclude_status=()).papers
    assert sum(1 for p in iclr if p.tldr) == 5
    assert all(p.to_json()["tldr"] == p.tldr for p in iclr)


def test_daily_pool_is_exactly_what_search_matches(small):
    for query in ("transformers", "author:jordan", "transformers -vision", '"world models"'):
        pool = small.matching_ids(query)
        listed = ids(small.search(query, limit=100))
        assert sorted(pool) == sorted(listed)


@pytest.mark.parametrize(
    "query", ['"world model"', "world model", "optimal transport", "reinforcement learning"]
)
def test_pools_equal_search_on_the_paper_lists(lists, query):
    pool = lists.matching_ids(query)
    found: list[str] = []
    while len(page := ids(lists.search(query, 100, len(found), snippets=False))) == 100:
        found += page
    assert sorted(pool) == sorted(found + page)
    assert len(pool) == lists.search(query, limit=1).total


def test_similar_uses_distinctive_terms(lists):
    result = lists.search("qPOTS", limit=1)
    like = lists.similar(result.hits[0].paper.id, limit=5)
    assert len(like.terms) <= SearchSettings().similar_terms
    assert "propos" not in like.terms
    assert "via" not in like.terms
    # The whole text as the query matched 3,467 of the 3,477 papers. Issue 27's query (100
    # weighted terms, common ones last at a tenth of the weight: they help the top 5) leaves
    # about half after the weak-match cut (1,702).
    assert like.total < len(lists.papers) * 0.6


def test_author_across_the_lists(lists):
    jordan = lists.search('author:"Michael Jordan"', limit=100)
    assert jordan.total > 5
    assert all(any("Jordan" in a for a in h.paper.authors) for h in jordan.hits)
    assert all(any(a.startswith("M") for a in h.paper.authors) for h in jordan.hits)


def test_known_item_sets_from_paper_lists():
    from bot.evaluation.knownitem import known_item_set, split_of

    papers = load_file(SAMPLE, exclude_status=()).papers
    titles = known_item_set(papers, "title")
    assert titles.queries["latex_sample/5qYVbLA1lK"].startswith("qPOTS: Efficient Batch")
    assert all(titles.qrels[q] == {q: 1} for q in titles.queries)
    first = known_item_set(papers, "first-sentence")
    assert all(first.queries.values())
    assert all("$" not in text for text in first.queries.values())
    train, test = (known_item_set(papers, "title", s).queries for s in ("train", "test"))
    assert set(train) | set(test) == set(titles.queries)
    assert not set(train) & set(test)
    assert all(split_of(q) == "train" for q in train)
    engine = SearchEngine(papers)
    for qid, text in titles.queries.items():
        assert engine.search(text, limit=1).hits[0].paper.id == qid

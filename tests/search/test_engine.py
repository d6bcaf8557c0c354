import random

import pytest

from bot.config import SearchSettings, load_settings
from bot.papers.corpus import load_corpus
from bot.search.engine import SearchEngine
from bot.search.results import BadFilter, EmptyQuery, Filters, UnknownPaper
from tests.conftest import ICML, TEST_DATA


def first_title(engine: SearchEngine, query: str) -> str:
    return engine.search(query, limit=1).hits[0].paper.title


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Sinkhorn and transport plans", "Sinkhorn-parameterized Variational Inference"),
        ("mixture of experts denial of service", "RepetitionCurse"),
        ("polarization dehazing", "DuRP"),
        ("object hallucination in vision-language models", "REVIS"),
        ("backdoor defense coreset selection", "Anti-Backdoor Coreset Selection"),
        ("tournament benchmark for code agents", "CATArena"),
        ("stale policy weights asynchronous RL", "GAS"),
        ("capacitated fair k-clustering", "Capacitated fair-range k-clustering"),
        ("open-set anomaly detection prototypes", "MPFM"),
        ("ag repa", "AG-REPA"),
    ],
)
def test_icml_queries_rank_the_right_paper_first(icml_engine, query, expected):
    assert first_title(icml_engine, query).startswith(expected)


def test_hits_carry_scores_snippets_and_totals(icml_engine):
    result = icml_engine.search("reinforcement learning", limit=3)
    assert len(result.hits) == 3
    assert result.total >= 3
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)
    assert all(s > 0 for s in scores)
    assert [h.rank for h in result.hits] == [1, 2, 3]
    assert all("**" in h.snippet for h in result.hits)
    assert result.pages == -(-result.total // 3)


def test_paging_is_consistent(icml_engine):
    everything = icml_engine.search("learning", limit=20).hits
    page2 = icml_engine.search("learning", limit=3, offset=3).hits
    assert [h.paper.id for h in page2] == [h.paper.id for h in everything[3:6]]
    assert page2[0].rank == 4


def test_empty_and_stopword_queries(icml_engine):
    with pytest.raises(EmptyQuery, match="Nothing to search for"):
        icml_engine.search("")
    with pytest.raises(EmptyQuery, match="common words"):
        icml_engine.search("the of and")
    with pytest.raises(EmptyQuery):
        icml_engine.search('- "" author:')


def test_no_match_is_an_empty_result_not_an_error(icml_engine):
    result = icml_engine.search("zyzzyva quux")
    assert result.hits == []
    assert result.total == 0


def test_phrase_and_exclude(icml_engine):
    phrase = icml_engine.search('"world model"', limit=20)
    assert phrase.hits
    assert all("world model" in h.paper.abstract.lower() for h in phrase.hits)
    excluded = icml_engine.search("world model -diffusion", limit=20)
    assert all("diffusion" not in h.paper.abstract.lower() for h in excluded.hits)


def test_venue_and_year_filters():
    papers = load_corpus([ICML, TEST_DATA / "iclr2018_sample.json"]).papers
    engine = SearchEngine(papers, settings=SearchSettings())
    hits = engine.search("learning", limit=50, filters=Filters(venue="iclr")).hits
    assert hits
    assert all(h.paper.venue == "ICLR 2018" for h in hits)
    assert all(h.paper.year == 2026 for h in engine.search("learning year:2026", limit=50).hits)
    with pytest.raises(BadFilter, match="Venues in this corpus: ICLR 2018, ICML 2026"):
        engine.search("learning venue:mars")
    last = engine.papers[-1]
    author = last.authors[0]
    by_author = engine.search(f'{last.title} author:"{author.lower()}"', limit=50).hits
    assert [h.paper.id for h in by_author] == [last.id]


def test_similar_excludes_the_paper_itself(icml_engine):
    paper = icml_engine.paper("RepetitionCurse")
    result = icml_engine.similar(paper.id, limit=5)
    assert result.hits
    assert paper.id not in [h.paper.id for h in result.hits]


def test_paper_lookup_by_id_title_and_errors(icml_engine):
    first = icml_engine.papers[0]
    assert icml_engine.paper(first.id) is first
    assert icml_engine.paper(first.id.split("/", 1)[1]) is first
    assert icml_engine.paper(first.title.upper()) is first
    assert icml_engine.paper("dWorldEval").title.startswith("dWorldEval")
    with pytest.raises(UnknownPaper, match="No such paper"):
        icml_engine.paper("does-not-exist")
    with pytest.raises(UnknownPaper):
        icml_engine.paper("   ")


def test_autocomplete_prefers_title_starts(icml_engine):
    titles = [p.title for p in icml_engine.complete("re")]
    assert titles[0].startswith(("REVIS", "RepetitionCurse"))
    assert len(icml_engine.complete("", limit=25)) == 19
    assert icml_engine.complete("zzzz") == []
    assert icml_engine.complete(icml_engine.papers[3].id)[0] is icml_engine.papers[3]


def test_random_is_repeatable_and_respects_venue(icml_engine):
    a = icml_engine.random(rng=random.Random(7))
    assert a is icml_engine.random(rng=random.Random(7))
    assert icml_engine.random("icml", random.Random(1)).venue == "ICML 2026"
    with pytest.raises(BadFilter):
        icml_engine.random("colm")


def test_matching_ids_for_topics(icml_engine):
    ids = icml_engine.matching_ids("reinforcement learning")
    assert ids
    assert len(ids) == icml_engine.search("reinforcement learning").total
    assert icml_engine.matching_ids("zyzzyva") == []


def test_saved_index_is_reused_and_rebuilt_when_stale(tmp_path, caplog):
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(ICML.read_bytes())
    settings = load_settings(env={}).with_corpus([corpus])
    from dataclasses import replace

    settings = replace(settings, corpus=replace(settings.corpus, index_dir=tmp_path / "idx"))
    first = SearchEngine.load(settings)
    folders = [p for p in (tmp_path / "idx").iterdir() if p.is_dir()]
    assert len(folders) == 1
    caplog.set_level("INFO")
    again = SearchEngine.load(settings)
    assert "saved index" in caplog.text
    assert again.search("sinkhorn").hits[0].paper.id == first.search("sinkhorn").hits[0].paper.id
    # Its digest check is over: the damage below is found by the next load's size check
    # (a racing rebuild by the check is test_integrity's loads-that-race test).
    assert again.wait_verified(timeout=60)
    # Damage the saved postings: the engine notices, rebuilds and still answers.
    postings = folders[0] / "doc_ids.npy"
    postings.write_bytes(postings.read_bytes()[:-8])
    caplog.clear()
    rebuilt = SearchEngine.load(settings)
    assert "rebuilding the index" in caplog.text
    assert rebuilt.search("sinkhorn").total == first.search("sinkhorn").total
    # A changed corpus gets a new key, not the old index.
    corpus.write_text(ICML.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    assert len(SearchEngine.load(settings).papers) == 1


def test_suggest_reads_no_paper(icml_engine, monkeypatch):
    expected = [(p.id, p.title) for p in icml_engine.complete("re")]
    # Autocomplete must answer from the in-memory columns: reading a paper would be I/O with
    # a saved paper store, so any access to engine.papers fails the test.
    monkeypatch.setattr(icml_engine.lookups, "papers", None)
    assert icml_engine.suggest("re") == expected
    assert len(icml_engine.suggest("", limit=25)) == 19

"""Issue 12 item 16 and issue 17: phrase checks use the index's term positions and are bounded.

Proves: `BM25Index.phrase_docs` / `phrase_matches` agree with looking for the run in each
document's analysed text (the reference, which is what format 3's term sequences checked),
on the seed and tests/data and on a random corpus with repeated words, runs at document edges
and empty documents; for serial and parallel builds, after a memory-mapped load, with a filter,
with many membership windows; wide offsets for documents past 65,535 tokens; runs never span
two documents; stopwords are not positions; a phrase search analyses no paper text.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
import pytest

from bot.papers.corpus import load_corpus
from bot.papers.records import Paper
from bot.search.analysis.analyzer import Analyzer
from bot.search.engine import SearchEngine
from bot.search.index.postings import BM25Index, BM25Params
from bot.search.parts import doc_text
from bot.search.results import EmptyQuery
from tests.conftest import ICML, TEST_DATA


def contains_run(tokens: Sequence[str], run: Sequence[str]) -> bool:
    n = len(run)
    return any(tuple(tokens[i : i + n]) == tuple(run) for i in range(len(tokens) - n + 1))


@pytest.fixture(scope="module")
def docs() -> list[list[str]]:
    papers = load_corpus([ICML, TEST_DATA / "iclr2018_sample.json"]).papers
    analyzer = Analyzer()
    return [analyzer(doc_text(p, 2)) for p in papers]


def phrases_of(docs: list[list[str]], rng: random.Random, n: int) -> list[tuple[str, ...]]:
    out = []
    for _ in range(n):
        tokens = docs[rng.randrange(len(docs))]
        size = rng.randint(1, 4)
        start = rng.randrange(max(1, len(tokens) - size + 1))
        run = tuple(tokens[start : start + size])
        if rng.random() < 0.3:  # a run that may exist nowhere: words from two documents
            other = docs[rng.randrange(len(docs))]
            run = (*run[:1], other[rng.randrange(len(other))])
        out.append(run)
    return out


def test_phrase_matches_agree_with_the_analysed_text(docs, tmp_path, monkeypatch) -> None:
    serial = BM25Index.build(docs, BM25Params())
    monkeypatch.setattr("bot.search.index.build.PARALLEL_MIN_DOCS", 1)
    parallel = BM25Index.build_parallel(docs, lambda d: d, BM25Params(), workers=2)
    serial.save(tmp_path / "idx", {"k": 1})
    loaded = BM25Index.load(tmp_path / "idx", {"k": 1}, mmap=True)
    everyone = np.arange(len(docs), dtype=np.int32)
    rng = random.Random(5)
    for phrase in phrases_of(docs, rng, 300):
        want = [contains_run(tokens, phrase) for tokens in docs]
        for index in (serial, parallel, loaded):
            assert index.phrase_matches(everyone, phrase).tolist() == want, phrase
    for phrase in phrases_of(docs, rng, 100):  # few candidates: the gathering path
        subset = np.array(sorted(rng.sample(range(len(docs)), 3)), dtype=np.int32)
        want = [contains_run(docs[int(d)], phrase) for d in subset]
        assert serial.phrase_matches(subset, phrase).tolist() == want, phrase
    assert not serial.phrase_matches(everyone, ("zzz-not-a-term", docs[0][0])).any()


def test_a_phrase_search_analyses_no_paper_text(monkeypatch) -> None:
    """Before: every candidate's text was analysed again (~15 s of CPU on 100k papers)."""
    papers = [
        Paper(
            id=f"p{i}",
            title=f"Paper {i}",
            abstract=("A learning model for graphs." if i % 2 else "A model of learning.")
            + f" Topic {i}.",
            venue="TEST 2024",
        )
        for i in range(3000)
    ]
    analysed: list[str] = []
    real = Analyzer()

    class Counting:
        def __getattr__(self, name: str):
            return getattr(real, name)

        def __call__(self, text: str) -> list[str]:
            analysed.append(text)
            return real(text)

    engine = SearchEngine(papers, analyzer=Counting())  # type: ignore[arg-type]
    analysed.clear()  # only the search counts
    result = engine.search('"learning model"', limit=5, snippets=False)
    assert result.total == 1500
    assert all(int(h.paper.id[1:]) % 2 for h in result.hits)
    # Only the query's own text (its phrase, its words), never a paper's text.
    assert not [t for t in analysed if "Topic" in t or "Paper" in t], analysed
    assert len(analysed) < 10, analysed


def random_corpus(rng: random.Random, n_docs: int, vocab: int) -> list[list[str]]:
    """Documents over a small Zipf-like vocabulary: common phrases, repeated words ("w1 w1"),
    runs at document edges, empty documents."""
    words = [f"w{i}" for i in range(vocab)]
    weights = [1 / (i + 1) for i in range(vocab)]
    return [rng.choices(words, weights, k=rng.choice([0, 1, 2, 5, 30, 120])) for _ in range(n_docs)]


def format3_docs(docs: list[list[str]], phrase: Sequence[str]) -> list[int]:
    """The reference, as format 3 checked it: the run in each document's term sequence
    (as text: these terms hold no spaces, so a run is a substring between spaces)."""
    run = " " + " ".join(phrase) + " "
    return [d for d, tokens in enumerate(docs) if run in " " + " ".join(tokens) + " "]


def three_builds(
    docs: list[list[str]], tmp_path, monkeypatch, chunk: int
) -> tuple[BM25Index, BM25Index, BM25Index]:
    """The index of `docs` built serially, built in parallel by chunks of `chunk` documents,
    and saved then loaded memory-mapped: every way an index reaches a search."""
    serial = BM25Index.build(docs, BM25Params())
    monkeypatch.setattr("bot.search.index.build.PARALLEL_MIN_DOCS", 1)
    monkeypatch.setattr("bot.search.index.build.PARALLEL_CHUNK", chunk)
    parallel = BM25Index.build_parallel(docs, lambda d: d, BM25Params(), workers=2)
    serial.save(tmp_path / "idx", {"k": 1})
    return serial, parallel, BM25Index.load(tmp_path / "idx", {"k": 1}, mmap=True)


@pytest.mark.parametrize("window", [1 << 22, 512])  # 512: many membership windows
def test_positions_match_what_term_sequences_matched(tmp_path, monkeypatch, window) -> None:
    """Parity, new vs old: random phrases (1-5 terms, repeats, absent runs, edges) on a random
    corpus, serial and parallel builds, after a memory-mapped load, with and without a filter."""
    monkeypatch.setattr("bot.search.query.phrases.WINDOW", window)
    rng = random.Random(17)
    docs = random_corpus(rng, 1500, 40)
    serial, parallel, loaded = three_builds(docs, tmp_path, monkeypatch, 1000)
    assert serial.positions.dtype == np.uint16
    phrases = [
        tuple(rng.choices([f"w{i}" for i in range(12)], k=rng.randint(1, 5))) for _ in range(150)
    ]
    phrases += phrases_of([d for d in docs if d], rng, 150)
    for phrase in phrases:
        want = format3_docs(docs, phrase)
        for index in (serial, parallel, loaded):
            assert index.phrase_docs(phrase).tolist() == want, phrase
        within = np.array(sorted(rng.sample(range(len(docs)), 200)), dtype=np.int32)
        assert serial.phrase_docs(phrase, within).tolist() == sorted(
            set(want) & set(within.tolist())
        )


def test_positions_of_real_papers_match_term_sequences(docs) -> None:
    """Parity on tests/data and the seed: every 2-3 term run of some papers, and their
    shuffles (runs that mostly do not exist)."""
    index = BM25Index.build(docs, BM25Params())
    rng = random.Random(3)
    for tokens in rng.sample(docs, min(40, len(docs))):
        for size in (2, 3):
            start = rng.randrange(max(1, len(tokens) - size + 1))
            run = tokens[start : start + size]
            for phrase in (tuple(run), tuple(reversed(run))):
                assert index.phrase_docs(phrase).tolist() == format3_docs(docs, phrase), phrase


def test_long_documents_get_wide_offsets() -> None:
    """Offsets past 65,535 need uint32; a run there is found, and never across documents."""
    long_doc = ["x", "y"] * 35_000 + ["a", "b"]
    docs = [["b", "c"], long_doc, ["b", "a"], ["a", "b"]]
    index = BM25Index.build(docs, BM25Params())
    assert index.positions.dtype == np.uint32
    assert index.phrase_docs(("a", "b")).tolist() == [1, 3]
    assert index.phrase_docs(("y", "a", "b")).tolist() == [1]
    assert index.phrase_docs(("b", "b")).tolist() == []  # doc 1 ends with "b", doc 2 starts
    assert index.phrase_docs(("a", "a")).tolist() == []  # doc 2 ends with "a", doc 3 starts
    assert index.phrase_docs(("x", "y", "x")).tolist() == [1]


def test_stopwords_are_not_positions() -> None:
    """ "learning a model" holds the phrase "learning model"; "model learning" does not."""
    papers = [
        Paper(id="a", title="One", abstract="We train a learning a model here.", venue="T 2024"),
        Paper(id="b", title="Two", abstract="A model, learning from data.", venue="T 2024"),
        Paper(id="c", title="Three", abstract="Learning to model data.", venue="U 2025"),
    ]
    engine = SearchEngine(papers)
    assert [h.paper.id for h in engine.search('"learning model"').hits] == ["a", "c"]
    assert [h.paper.id for h in engine.search('"learning model" venue:U').hits] == ["c"]
    assert engine.matching_ids('"learning model"') == ["a", "c"]


def test_scoring_the_phrase_documents_alone_gives_the_same_scores(docs) -> None:
    """`score_docs` is `score` restricted to some documents, bit for bit (weights, repeated
    and unknown terms included)."""
    index = BM25Index.build(docs, BM25Params())
    rng = random.Random(9)
    for _ in range(60):
        full = [d for d in docs if d]
        terms = [*rng.choice(full)[:3], rng.choice(rng.choice(full)), "zzz-unknown"]
        terms.append(terms[0])  # a repeated term counts again
        weights = [rng.choice([1.0, 0.5, 0.25]) for _ in terms] if rng.random() < 0.5 else None
        ids, scores = index.score(terms, weights)
        subset = np.array(sorted(rng.sample(range(len(docs)), len(docs) // 3)), dtype=np.int32)
        got_ids, got_scores = index.score_docs(terms, weights, subset)
        inside = np.isin(ids, subset)
        assert np.array_equal(got_ids, ids[inside])
        assert np.array_equal(got_scores, scores[inside])  # exact, not approximately


def test_a_phrase_search_selects_what_scoring_everything_then_checking_did(icml_engine) -> None:
    """The phrase-first selection (`_select`) against the old order on real phrases, with a
    filter and an exclusion: same documents, same scores, same pages."""
    engine = icml_engine
    analysed = [engine.analyzer(doc_text(p, engine.settings.title_weight)) for p in engine.papers]
    rng = random.Random(4)
    queries = []
    for _ in range(40):
        words = rng.choice(engine.papers).abstract.split()
        start = rng.randrange(max(1, len(words) - 3))
        queries.append('"' + " ".join(words[start : start + rng.randint(2, 3)]) + '"')
    queries += ['"world model" learning', '"reinforcement learning" -robot', '"language model"']
    for query in queries:
        try:
            plan = engine.plan(query)
        except EmptyQuery:
            continue
        ids, scores = engine.index.score([*plan.terms, *plan.extra], plan.weights)
        keep = scores > 0
        if plan.excludes:
            keep &= engine.filters.without(ids, plan.excludes)
        holds = np.array([all(contains_run(analysed[d], p) for p in plan.phrases) for d in ids])
        keep &= holds if ids.shape[0] else keep
        ids, scores = ids[keep], scores[keep]
        if scores.shape[0]:
            strong = scores >= engine.settings.min_score_ratio * float(scores.max())
            ids, scores = ids[strong], scores[strong]
        got_ids, got_scores = engine._select(plan)
        assert np.array_equal(got_ids, ids), query
        assert np.array_equal(got_scores, scores), query

"""Pruned `/search` (`bot.search.ranking.pages`) against the exhaustive path it replaces: the same
hits (ids, scores to the bit, order, ranks) on many random queries with filters, exclusions,
paging, query weights and the word-order bonus; and totals that are exact or true lower
bounds, shown as such.

The corpus is 3,000 papers recombined from the records kept in tests/ (always present), with
exact copies for ties. Pruned ranking is forced (`force_pruning`): with the default threshold
a corpus this small is always scored whole, and the test would compare the reference with
itself; a spy checks that the pruned path really answered.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from functools import partial

import numpy as np
import pytest

from bot.config import SearchSettings
from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from bot.search.query.proximity import CHECKPOINT, RESCORE_DEPTH, best_rows, occurrences
from bot.search.query.similar import similar_query
from bot.search.ranking import pages as ranking
from bot.search.ranking import pruning
from bot.search.results import EmptyQuery, Plan, SearchResult
from tests.conftest import ICML, TEST_DATA

VENUES = ("ICML 2026", "ICLR 2018", "NeurIPS 2024")


def _records() -> list[dict[str, object]]:
    records = [json.loads(line) for line in ICML.read_text(encoding="utf-8").splitlines()]
    sample = json.loads((TEST_DATA / "iclr2018_sample.json").read_text(encoding="utf-8"))
    records += [r for r in (sample if isinstance(sample, list) else sample.values()) if r]
    return [r for r in records if isinstance(r, dict) and r.get("abstract")]


def _papers(n: int, seed: int) -> list[Paper]:
    """Titles, abstract sentences and authors of real records, recombined (seeded); one in
    twenty papers is an exact copy of an earlier one (equal scores: ties)."""
    rng = random.Random(seed)
    records = _records()
    titles = [str(r.get("title") or "") for r in records if r.get("title")]
    sentences = [s for r in records for s in str(r["abstract"]).split(". ") if s]
    authors = sorted({a.strip() for r in records for a in str(r.get("author", "")).split(";")})
    authors = [a for a in authors if a]
    papers: list[Paper] = []
    for i in range(n):
        if papers and rng.random() < 0.05:
            papers.append(replace(rng.choice(papers), id=f"p{i}"))
            continue
        venue = rng.choice(VENUES)
        papers.append(
            Paper(
                id=f"p{i}",
                title=rng.choice(titles),
                abstract=". ".join(rng.choice(sentences) for _ in range(rng.randint(1, 6))),
                venue=venue,
                year=int(venue[-4:]),
                authors=tuple(rng.sample(authors, rng.randint(1, 3))),
            )
        )
    return papers


@pytest.fixture(autouse=True)
def force_pruning(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pruned ranking on any corpus: from 0 postings, and a numpy traversal that never gives
    up (the compiled one never does)."""
    monkeypatch.setattr(ranking, "MIN_POSTINGS", 0)
    monkeypatch.setattr(pruning, "prune", partial(pruning.prune, min_postings=0, max_share=1.0))


@pytest.fixture(scope="module")
def engine() -> SearchEngine:
    return SearchEngine(_papers(3000, seed=11), settings=SearchSettings())


def _answered(monkeypatch: pytest.MonkeyPatch, name: str) -> list[bool]:
    """Per call of `ranking.<name>`: whether it answered (not None)."""
    seen: list[bool] = []
    real = getattr(ranking, name)

    def spy(*args, **kwargs):
        found = real(*args, **kwargs)
        seen.append(found is not None)
        return found

    monkeypatch.setattr(ranking, name, spy)
    return seen


@pytest.fixture
def pruned_answers(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Per ranked search: whether the pruned path answered (not the exhaustive fallback)."""
    return _answered(monkeypatch, "strongest")


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Per pruned page with the word-order bonus: whether the best few settled it."""
    return _answered(monkeypatch, "settled_bonus")


def _page(result: SearchResult) -> list[tuple[str, float, int]]:
    return [(hit.paper.id, hit.score, hit.rank) for hit in result.hits]


def _compare(engine: SearchEngine, plan: Plan, limit: int, offset: int) -> SearchResult:
    """The pruned page, checked against the exhaustive one: the same hits to the bit; the same
    total when it says exact, else a lower bound of it that promises the next page."""
    got = engine._run(plan, limit, offset, snippets=False)
    want = engine._run(plan, limit, offset, snippets=False, exhaustive=True)
    assert _page(got) == _page(want), (plan, limit, offset)
    assert want.total_exact
    if got.total_exact:
        assert got.total == want.total, (plan, limit, offset)
    else:
        assert offset + limit < got.total <= want.total, (plan, limit, offset, want.total)
        assert got.has_next
        assert want.has_next
    return got


def _query(rng: random.Random, engine: SearchEngine) -> str:
    """1-6 consecutive words of an abstract, sometimes with an exclusion or a filter."""
    words = rng.choice(engine.papers).abstract.split()
    start = rng.randrange(max(1, len(words) - 6))
    text = " ".join(words[start : start + rng.randint(1, 6)])
    roll = rng.random()
    if roll < 0.15:
        text += " -" + rng.choice(rng.choice(engine.papers).abstract.split())
    elif roll < 0.25:
        text += f" year:{rng.choice(VENUES)[-4:]}"
    elif roll < 0.3:
        text += f' author:"{rng.choice(rng.choice(engine.papers).authors)}"'
    return text


@pytest.mark.parametrize(("seed", "first"), [(1, 0), (2, None), (3, None)])
def test_pruned_pages_equal_the_exhaustive_path(
    engine, pruned_answers, settled, seed, first, monkeypatch
):
    """Random queries (1-6 words, exclusions, year/author/venue filters), pages of 1-10 from
    the first to past the word-order window (ranks around 100), sometimes query weights.
    Seed 1 takes the fewest matches first (2k + 11): more pages left unsettled by them."""
    if first is not None:
        monkeypatch.setattr("bot.search.ranking.pages.FIRST_WINDOW", first)
    rng = random.Random(seed)
    checked = lower_bounds = 0
    while checked < 150:
        try:
            plan = engine.plan(_query(rng, engine))
        except EmptyQuery:
            continue
        if not plan.terms:
            continue
        if rng.random() < 0.2:
            plan = replace(plan, filters=replace(plan.filters, venue=rng.choice(VENUES)))
        if rng.random() < 0.3:
            n = len(plan.terms) + len(plan.extra)
            plan = replace(plan, weights=tuple(rng.choice([1.0, 0.5, 0.25, 2.0]) for _ in range(n)))
        limit = rng.randint(1, 10)
        offset = rng.choice([0, 0, 0, limit, 90, 95, 99, 100, 101, 150, 400])
        lower_bounds += not _compare(engine, plan, limit, offset).total_exact
        checked += 1
    # The pruned path answered nearly every query (unknown words alone fall back), and many
    # totals were lower bounds: the comparison above was not of the reference with itself.
    assert sum(pruned_answers) >= 0.9 * len(pruned_answers)
    assert lower_bounds >= 20
    # Both ways of ranking the word-order window ran: settled by the best few, and whole.
    assert sum(settled) >= 10
    assert len(settled) - sum(settled) >= (5 if first == 0 else 1)


def test_similar_and_phrases_page_as_the_exhaustive_path(engine, pruned_answers):
    """/similar (a bag of distinctive terms, its paper skipped) prunes; phrases do not."""
    rng = random.Random(5)
    for paper in rng.sample(list(engine.papers), 25):
        doc = engine.lookups.lookup.find(paper.id)
        index = engine.index
        like = similar_query(
            paper, engine.analyzer, index.doc_freq, index.n_docs, engine.settings.similar_terms
        )
        plan = Plan("more like", like.terms, like.weights, skip=doc)
        for offset in (0, 10, 98):
            got = _compare(engine, plan, 10, offset)
            assert paper.id not in [hit.paper.id for hit in got.hits]
        assert _page(engine.similar(paper.id, limit=10)) == _page(engine._run(plan, 10, 0))
    assert all(pruned_answers)
    words = engine.papers[3].abstract.split()
    phrase = f'"{words[0]} {words[1]}" {words[3]}'
    pruned_answers.clear()
    _compare(engine, engine.plan(phrase), 5, 0)
    assert not pruned_answers  # phrases are scored from their few candidates, not pruned


def test_ties_at_the_word_order_window_keep_corpus_order(pruned_answers):
    """Hundreds of identical papers around rank 100: which of them get the word-order bonus,
    and the page order, are the same on both paths (lowest corpus positions first)."""
    base = Paper(
        id="x", title="graph neural networks", abstract="We study graph networks.", venue="V"
    )
    other = Paper(id="y", title="neural graph", abstract="Networks of neural units.", venue="V")
    papers = [replace(base if i % 3 else other, id=f"p{i}") for i in range(900)]
    engine = SearchEngine(papers, settings=SearchSettings())
    plan = engine.plan("graph neural networks")
    for offset in (0, 95, 99, 100, 250, 595, 600):
        for limit in (1, 5, 10):
            got = _compare(engine, plan, limit, offset)
            ids = [int(hit.paper.id[1:]) for hit in got.hits]
            scores = [hit.score for hit in got.hits]
            for a, b, sa, sb in zip(ids, ids[1:], scores, scores[1:], strict=False):
                assert sa > sb or (sa == sb and a < b)
    assert all(pruned_answers)


def test_best_rows_breaks_ties_by_corpus_position() -> None:
    docs = np.array([9, 3, 7, 1, 5, 8], dtype=np.int32)
    scores = np.array([2.0, 1.0, 1.0, 1.0, 3.0, 1.0])
    assert sorted(docs[best_rows(docs, scores, 3)].tolist()) == [1, 5, 9]
    assert sorted(docs[best_rows(docs, scores, 4)].tolist()) == [1, 3, 5, 9]
    assert best_rows(docs, scores, 10).shape[0] == 6
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(1, 300))
        docs = rng.permutation(1000)[:n].astype(np.int32)
        scores = rng.integers(1, 5, n).astype(np.float64)
        k = int(rng.integers(1, RESCORE_DEPTH))
        want = np.lexsort((docs, -scores))[:k]
        assert sorted(best_rows(docs, scores, k).tolist()) == sorted(want.tolist())


def _two_word_corpus() -> SearchEngine:
    """3,000 papers of equal length: "alpha" in 900, "beta" in 600 (300 of them holding
    alpha too), so every paper holding either word is a strong match and one word alone
    proves a lower bound."""
    papers = []
    for i in range(3000):
        words = ["filler"] * 4
        if i < 900:
            words[0] = "alpha"
        if 600 <= i < 1200:
            words[1] = "beta"
        papers.append(
            Paper(id=f"p{i}", title="untitled", abstract=" ".join(words), venue=VENUES[i % 3])
        )
    return SearchEngine(papers, settings=SearchSettings(title_weight=1))


def test_a_term_that_alone_reaches_the_cut_proves_its_document_frequency():
    engine = _two_word_corpus()
    result = engine.search("alpha beta", limit=5)
    exact = engine.search("alpha beta", limit=5, exhaustive=True)
    assert exact.total == 1200
    assert exact.total_exact
    # "alpha" is in 900 papers and reaches the cut alone: 900 proven, not just the best 101.
    assert (result.total, result.total_exact) == (900, False)
    assert _page(result) == _page(exact)
    # With a filter, only the allowed papers holding it count (300 of alpha's 900).
    venue = engine.search("alpha beta venue:ICLR", limit=5)
    assert (venue.total, venue.total_exact) == (300, False)
    assert engine.search("alpha beta venue:ICLR", exhaustive=True).total == 400
    # One term is counted exactly; so is a short last page.
    single = engine.search("beta", limit=5)
    assert (single.total, single.total_exact) == (600, True)
    last = engine.search("alpha beta", limit=10, offset=1195)
    assert (last.total, last.total_exact, len(last.hits)) == (1200, True, 5)


def test_paging_a_lower_bound_to_its_end_reaches_the_exact_total(engine):
    """Next page while the total says "N+": every page equals the exhaustive one, the bound
    never shrinks below what was shown, and the last page knows the exact total."""
    plan = engine.plan("neural networks learning")
    want = engine._run(plan, 10, 0, exhaustive=True).total
    page, seen = 0, 0
    while True:
        got = _compare(engine, plan, 10, page * 10)
        seen += len(got.hits)
        if not got.has_next:
            break
        assert got.total > (page + 1) * 10
        page += 1
    assert got.total_exact
    assert got.total == want == seen


def test_past_the_end_is_exact():
    result = _two_word_corpus().search("alpha beta", limit=10, offset=5000)
    assert result.total_exact
    assert result.past_end
    assert result.empty_text() == "1200 matches; page 501 is past the end (last page 120)."


def test_filters_are_one_mask_for_search_pools_and_pruning(engine):
    """`filters.allowed` is, paper by paper, what each restriction means (checked by brute force),
    and what `_narrow` keeps: a filtered query's pool is its exhaustive selection."""
    author = engine.papers[1].authors[0]
    terms = [set(engine._doc_terms(doc)) for doc in range(len(engine.papers))]
    cases = {
        "learning -neural": lambda p, t: "neural" not in t,
        'learning -"neural network"': lambda p, t: not {"neural", "network"} <= t,
        "learning year:2018": lambda p, t: p.year == 2018,
        "learning venue:neurips": lambda p, t: p.venue == "NeurIPS 2024",
        f'learning author:"{author}"': lambda p, t: any(author in a for a in p.authors),
        "learning -model year:2026": lambda p, t: p.year == 2026 and "model" not in t,
    }
    for query, allows in cases.items():
        plan = engine.plan(query)
        allowed = engine.filters.allowed(plan)
        assert allowed is not None
        want = [allows(paper, terms[doc]) for doc, paper in enumerate(engine.papers)]
        assert allowed.tolist() == want, query
        assert 0 < sum(want) < len(want)
        ids, _scores = engine._select(plan)
        assert ids.shape[0]
        assert allowed[ids].all()
        assert engine.matching_ids(query) == [engine.papers[i].id for i in ids.tolist()]
    skip = Plan(query="q", terms=("q",), skip=7)
    assert np.flatnonzero(~engine.filters.allowed(skip)).tolist() == [7]
    assert engine.filters.allowed(Plan(query="q", terms=("q",))) is None


def test_occurrences_of_a_few_papers_are_those_of_the_whole_postings(engine):
    """The word-order bonus reads a term's offsets in the best 100 papers by binary search and
    remembered run starts (`proximity.occurrences`): exactly what the phrase index's scan of
    the whole postings gives (`occurrences_in`), for rare and common terms (runs of postings
    across many checkpoints), single papers, the first and last postings."""
    index = engine.index
    rng = np.random.default_rng(3)
    by_df = sorted(index.vocab, key=index.doc_freq)
    terms = by_df[-15:] + by_df[:: max(1, len(by_df) // 40)]
    assert index.doc_freq(terms[0]) > 10 * CHECKPOINT
    for term in terms:
        tid = index.vocab[term]
        postings = index.postings(term)[0]
        for size in (1, 5, 100, 1000):
            docs = np.unique(rng.integers(0, index.n_docs, size)).astype(np.int32)
            if size == 5:
                docs = np.unique(np.concatenate([docs, postings[:1], postings[-1:]]))
            within = np.zeros(index.n_docs, dtype=bool)
            within[docs] = True
            want = index.phrases.occurrences_in(tid, within)
            got = occurrences(index, tid, docs)
            assert got[0].tolist() == want[0].tolist()
            assert got[1].tolist() == want[1].tolist()

"""Issue 12 item 16: phrase checks use the index's term sequences and are bounded.

Proves: `BM25Index.phrase_matches` agrees with looking for the run in each document's analysed
text (the reference), for few candidates (gathered) and many (one pass over all positions),
built serially or in parallel and after a save and load; a phrase search analyses no paper text.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
import pytest

from bot.search.analyzer import Analyzer
from bot.search.corpus import load_corpus
from bot.search.engine import SearchEngine, doc_text
from bot.search.index import BM25Index, BM25Params
from bot.search.models import Paper
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
    monkeypatch.setattr("bot.search.index.PARALLEL_MIN_DOCS", 1)
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
    engine = SearchEngine(papers)
    analysed: list[str] = []
    real = engine.analyzer

    class Counting:
        def __getattr__(self, name: str):
            return getattr(real, name)

        def __call__(self, text: str) -> list[str]:
            analysed.append(text)
            return real(text)

    engine.analyzer = Counting()  # type: ignore[assignment]
    result = engine.search('"learning model"', limit=5, snippets=False)
    assert result.total == 1500
    assert all(int(h.paper.id[1:]) % 2 for h in result.hits)
    # Only the query's own text (its phrase, its words), never a paper's text.
    assert not [t for t in analysed if "Topic" in t or "Paper" in t], analysed
    assert len(analysed) < 10, analysed

"""Issue 17: autocomplete and title lookups by binary search give the scan's answers.

Two references, both written here as plain loops over the titles: the old scan (the engine's
code before the title index: the first 200 titles holding the text, each ranked by where the
text first occurs) and the intended order (every title, ranked by its best match: title start,
then word start, then inside a word; corpus order within a rank). The index must give the
intended order always, and so the old scan's answer wherever the old scan saw every matching
title and each title's first occurrence was its best; the test checks that this covers most
prefixes, so the comparison with the old behaviour is not vacuous.
"""

from __future__ import annotations

import bisect
import random
from pathlib import Path

import pytest

from bot.papers.corpus import load_corpus
from bot.search.analysis.analyzer import fold
from bot.search.engine import SearchEngine
from bot.search.files.columns import IdLookup, StringColumn
from bot.search.files.paperstore import PaperStore
from bot.search.files.storewriter import save_store
from bot.search.suggest.prefixsort import DEPTH
from bot.search.suggest.titles import TitleIndex, fold_title
from tests.conftest import ICML, TEST_DATA

LIMIT = 25
ODD_TITLES = [
    "Schrödinger Bridges — “Quoted” Words and Über-Modelle",
    "Ein Über-Modell: über alles",
    "αβγ δεζ: Greek λόγος and Transformers",
    "深度学习 for Graphs (GNN) — a survey",
    "Transformers, transformers everywhere",
    "x",
    "",
    "A very long title " + "with many repeated words " * 6 + "at the end",
    "A very long title " + "with many repeated words " * 6 + "at the end!",
]


def old_scan(folded: list[str], want: str, limit: int = LIMIT) -> list[int]:
    blob = "\n".join(folded)
    starts, at_ = [], 0
    for title in folded:
        starts.append(at_)
        at_ += len(title) + 1
    hits, seen = [], set()
    at = blob.find(want)
    while at >= 0 and len(hits) < limit * 8:
        doc = bisect.bisect_right(starts, at) - 1
        if doc not in seen:
            seen.add(doc)
            offset = at - starts[doc]
            rank = 0 if offset == 0 else 1 if not blob[at - 1].isalnum() else 2
            hits.append((rank, doc))
        at = blob.find(want, at + 1)
    return [doc for _rank, doc in sorted(hits)][:limit]


def best_rank(title: str, want: str) -> int | None:
    ranks = []
    at = title.find(want)
    while at >= 0:
        ranks.append(0 if at == 0 else 1 if not title[at - 1].isalnum() else 2)
        at = title.find(want, at + 1)
    return min(ranks) if ranks else None


def intended(folded: list[str], want: str, limit: int = LIMIT) -> tuple[list[int], bool]:
    """(the intended answer, whether the old scan gives the same one)."""
    ranked = []
    old_same = True
    for doc, title in enumerate(folded):
        rank = best_rank(title, want)
        if rank is not None:
            ranked.append((rank, doc))
            first = title.find(want)
            first_rank = 0 if first == 0 else 1 if not title[first - 1].isalnum() else 2
            old_same &= first_rank == rank
    old_same &= len(ranked) <= limit * 8
    return [doc for _rank, doc in sorted(ranked)][:limit], old_same


def prefixes(titles: list[str], rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        title = titles[rng.randrange(len(titles))]
        if not title:
            continue
        start = 0 if rng.random() < 0.5 else rng.randrange(len(title))
        out.append(title[start : start + rng.randint(1, 40)])
    return out


def synthetic_titles(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = (
        "graph neural network networks transformer former learning deep model models of "
        "the for a diffusion reinforcement über-learning self-supervised attention".split()
    )
    return [
        " ".join(rng.choice(words) for _ in range(rng.randint(1, 9))).capitalize() for _ in range(n)
    ] + ODD_TITLES


def check(titles: list[str], queries: list[str]) -> None:
    folded = [fold_title(t) for t in titles]
    index = TitleIndex.of(titles)
    same_as_old = 0
    for query in queries:
        want = fold(query).strip()
        if not want:
            continue
        expected, old_same = intended(folded, want)
        assert index.complete(want, LIMIT) == expected, query
        if old_same:
            assert expected == old_scan(folded, want), query
            same_as_old += 1
    assert same_as_old >= len(queries) // 2


def test_completion_matches_the_scan_on_the_test_records() -> None:
    papers = load_corpus(
        [ICML, TEST_DATA / "iclr2018_sample.json", TEST_DATA / "latex_sample.json"]
    ).papers
    titles = [p.title for p in papers] + ODD_TITLES
    rng = random.Random(1)
    queries = [*prefixes(titles, rng, 600), "über", "ÜBER", "former", "—", "(gnn", "λόγ", "x"]
    check(titles, queries)


def test_completion_matches_the_scan_on_a_synthetic_set() -> None:
    """Short titles from a small vocabulary: prefixes with hundreds of matches, where the
    old scan stopped after 200 titles and the index must still list title starts first."""
    titles = synthetic_titles(3000, seed=7)
    rng = random.Random(2)
    queries = [*prefixes(titles, rng, 400), "gra", "ormer", "of the", "e", "network "]
    check(titles, queries)
    index = TitleIndex.of(titles)
    # Every title starting with "graph" comes before any word-start match.
    heads = [i for i, t in enumerate(titles) if t.lower().startswith("graph")]
    assert index.complete("graph", LIMIT) == heads[:LIMIT]


def test_long_prefixes_and_exact_titles() -> None:
    """Longer than the sort key (DEPTH bytes): the shared range is checked one by one."""
    titles = synthetic_titles(500, seed=3)
    index = TitleIndex.of(titles)
    folded = [fold_title(t) for t in titles]
    long_one = ODD_TITLES[-2]
    assert len(long_one.encode()) > DEPTH
    want = fold(long_one)
    exact, prefix = index.title_match(want)
    assert exact == titles.index(long_one)
    assert prefix == [titles.index(long_one), titles.index(ODD_TITLES[-1])]
    for title in titles[:200]:
        want = fold_title(title)
        exact, prefix = index.title_match(want)
        assert exact == folded.index(want)
        starting = [i for i, t in enumerate(folded) if t.startswith(want)]
        assert prefix == starting[:2]
    assert index.title_match("zzz not a title") == (None, [])


def test_id_lookup_by_id_and_by_its_end() -> None:
    ids = ["ICML.cc/2026/abc", "ICLR.cc/2018/abc", "ICLR.cc/2018/xyz", "plain", "a/b/xyz9"]
    lookup = IdLookup.of(StringColumn.of(ids))
    for i, pid in enumerate(ids):
        assert lookup.find(pid) == i
    assert lookup.find("ICLR.cc/2018/ab") is None
    assert lookup.ending_with("/abc") == [0, 1]
    assert lookup.ending_with("/xyz") == [2]
    assert lookup.ending_with("/nothing") == []


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory) -> tuple[SearchEngine, SearchEngine]:
    """The same papers in memory and from a saved (memory-mapped) store."""
    papers = load_corpus([ICML, TEST_DATA / "iclr2018_sample.json"]).papers
    folder: Path = tmp_path_factory.mktemp("store") / "papers"
    save_store(folder, papers, {"k": 1})
    memory = SearchEngine(papers)
    saved = SearchEngine(PaperStore(folder, {"k": 1}), index=memory.index)
    return memory, saved


def test_saved_store_answers_like_memory(engines: tuple[SearchEngine, SearchEngine]) -> None:
    memory, saved = engines
    queries = [*prefixes([p.title for p in memory.papers], random.Random(5), 300), "", "re"]
    for query in queries:
        assert saved.suggest(query) == memory.suggest(query), query
    for paper in memory.papers:
        assert saved.paper(paper.id) == paper
        assert saved.paper(paper.title.lower()) == memory.paper(paper.title.lower())
        tail = paper.id.rsplit("/", 1)[-1]
        if sum(p.id.endswith("/" + tail) for p in memory.papers) == 1:
            assert saved.paper(tail) == paper
        assert saved.has_paper(paper.id)
        assert saved.suggest(paper.id)[0] == (paper.id, paper.title)
    assert list(saved.ids) == [p.id for p in memory.papers]
    assert list(saved.added) == [p.added for p in memory.papers]
    assert not saved.has_paper("nope")


@pytest.mark.parametrize("titles", [[""], ["", "", ""], []])
def test_titles_with_no_words_build_an_index_that_finds_nothing(titles: list[str]) -> None:
    """A corpus whose titles hold no word (or no paper) still builds and answers: the inner-word
    index used to fail on its empty pair list with an IndexError."""
    index = TitleIndex.of(titles)
    assert index.complete("a", LIMIT) == []
    assert index.inner.docs.shape == (0,)

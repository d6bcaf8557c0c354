"""Issue 26 item 15: every cache that what users type reaches stays within its bound, however
many distinct queries come (the console's peak RSS grew 19 % from 2,000 to 20,000 of them;
`benchmarks/query_memory.py` measures that figure, this test the bounds behind it)."""

from __future__ import annotations

import contextlib
import random
import re
from dataclasses import replace
from pathlib import Path

import pytest

import bot.search.files.paperstore as paperstore
import bot.search.parts as parts
import bot.search.query.proximity as proximity
import bot.search.suggest.spelling as spelling
from bot.search.analysis.analyzer import Analyzer, StemCache
from bot.search.caches import LRU
from bot.search.engine import SearchEngine
from bot.search.results import SearchError
from tests.search.files.test_integrity import settings_for

_WORD = re.compile(r"[A-Za-z]{4,}")


def made_up(i: int) -> str:
    """A word no paper holds, different for every i: a misspelling to correct each time."""
    letters = ""
    i += 26**3
    while i:
        i, r = divmod(i, 26)
        letters += chr(97 + r)
    return "qz" + letters


def test_lru_drops_the_least_recently_used() -> None:
    cache: LRU[str, int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the least recently used
    cache.put("c", 3)
    assert ("a" in cache, "b" in cache, "c" in cache) == (True, False, True)
    weighed: LRU[str, bytes] = LRU(10, len)
    weighed.put("x", b"12345")
    weighed.put("y", b"123456")
    assert (len(weighed), weighed.size) == (1, 6)
    weighed.put("big", b"x" * 11)  # heavier than the bound: not kept, nothing dropped for it
    assert ("big" in weighed, weighed.size) == (False, 6)


def test_every_cache_users_reach_stays_within_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Small bounds, a few hundred distinct queries: each cache fills to its bound, never
    past it. Searches with words of the papers and made-up ones (corrected by the speller),
    snippets shown, feedback on (document terms), `/similar`, from the saved store (decoded
    papers)."""
    monkeypatch.setattr(spelling, "SPELL_CACHE", 20)
    monkeypatch.setattr(parts, "DOC_TERMS_CACHE", 5)
    monkeypatch.setattr(paperstore, "RECENT", 6)
    monkeypatch.setattr(proximity, "RUN_STARTS_BYTES", 2_000)
    settings = settings_for(tmp_path)
    feedback = replace(settings.search, prf_docs=3, prf_terms=3, prf_weight=0.2)
    settings = replace(settings, search=feedback)
    SearchEngine.load(settings)  # builds and saves
    engine = SearchEngine.load(settings)  # serves from the saved store
    engine.analyzer._cache = StemCache(50)
    rng = random.Random(4)
    words = sorted({w.lower() for p in engine.papers for w in _WORD.findall(p.abstract)})
    for i in range(300):
        query = " ".join([*rng.sample(words, 3), made_up(i)])
        with contextlib.suppress(SearchError):  # a query of stopwords only
            engine.search(query, limit=3)
        if i % 10 == 0:
            engine.similar(engine.ids[i % len(engine.ids)], limit=3)
    sizes = engine.cache_sizes()
    assert set(sizes) >= {"stems", "corrections", "doc terms", "run starts (bytes)", "papers"}
    for name, (size, bound) in sizes.items():
        assert size <= bound, name
    for name in ("stems", "corrections", "doc terms", "run starts (bytes)", "papers"):
        assert sizes[name][0] > sizes[name][1] / 2, name  # used: the test can fail


def test_a_build_leaves_no_expansions_behind() -> None:
    """`expand` remembers a build's words (up to 300,000, ~40 MB); no query reads them."""
    from bot.papers.corpus import load_corpus
    from tests.conftest import ICML

    engine = SearchEngine(load_corpus([ICML]).papers, analyzer=Analyzer())
    assert engine.analyzer._expanded == {}

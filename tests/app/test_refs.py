"""Keys for ids and venue names too long to travel: stable across restarts and reloads."""

from __future__ import annotations

import pytest

from bot.app import refs
from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from bot.search.results import UnknownPaper

LONG_ID = "https://example.org/papers/" + "x" * 150


def engine(*ids: str, venues: tuple[str, ...] = ("V",)) -> SearchEngine:
    papers = [
        Paper(
            id=pid,
            title=f"paper {pid}",
            abstract="words about models",
            venue=venues[i % len(venues)],
        )
        for i, pid in enumerate(ids)
    ]
    return SearchEngine(papers)


def test_keys_are_short_stable_and_recognisable() -> None:
    key = refs.key_of(LONG_ID)
    assert key == refs.key_of(LONG_ID)
    assert len(key) == refs.KEY_LENGTH
    assert refs.is_key(key)
    assert not refs.is_key("icml2026/001-e0a0ceac")
    assert refs.ref_for("short", 100) == "short"
    assert refs.ref_for(LONG_ID, 100) == key
    assert refs.ref_for(key, 100) == refs.key_of(key)  # an id that looks like a key is keyed


def test_a_key_finds_its_paper_after_a_reload_that_moves_it() -> None:
    key = refs.key_of(LONG_ID)
    before = engine("a", LONG_ID, "b")
    assert refs.find_paper(before, key).id == LONG_ID
    after = engine("c", "b", "d", "e", LONG_ID)  # reloaded: other papers, another position
    assert refs.find_paper(after, key).id == LONG_ID
    assert refs.find_paper(after, "b").id == "b"  # plain ids and titles still work


def test_a_key_whose_paper_is_gone_says_so() -> None:
    gone = engine("a", "b")
    with pytest.raises(refs.StaleRef, match="no longer in the corpus"):
        refs.find_paper(gone, refs.key_of(LONG_ID))
    with pytest.raises(UnknownPaper):
        refs.find_paper(gone, "nothing like it")


def test_an_id_that_looks_like_a_key_is_still_found() -> None:
    odd = refs.key_of("something")
    found = engine(odd, "b")
    assert refs.find_paper(found, odd).id == odd
    assert refs.find_paper(found, refs.ref_for(odd, 100)).id == odd


def test_venue_keys_and_canonical_names() -> None:
    long_venue = "NeurIPS 2025 Workshop: " + "Long Name " * 10
    e = engine("a", "b", venues=("ICML 2026", long_venue))
    assert refs.find_venue(e, refs.key_of(long_venue)) == long_venue
    assert refs.find_venue(e, "icml") == "icml"  # a plain filter passes through
    with pytest.raises(refs.StaleRef):
        refs.find_venue(e, refs.key_of("a venue this corpus never had"))
    assert refs.canonical_venue(e, "icml2026") == "ICML 2026"
    assert refs.canonical_venue(e, "icml") == "icml"

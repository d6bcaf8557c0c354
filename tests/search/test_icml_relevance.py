"""The bot's own collection: queries a person would type into /search, each with the paper that
must come first (tests/data/icml2026_relevance.tsv). Typos are not included: the search does
no fuzzy matching, so a misspelt method name is not expected to work."""

from dataclasses import replace

import pytest

from bot.config import SearchSettings
from bot.search.engine import SearchEngine
from tests.conftest import TEST_DATA

ROWS = [
    line.rstrip("\n").split("\t")
    for line in (TEST_DATA / "icml2026_relevance.tsv").read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
]


def test_the_relevance_set_is_well_formed(icml_engine):
    assert len(ROWS) >= 25
    ids = {p.id for p in icml_engine.papers}
    assert all(len(row) == 3 for row in ROWS)
    assert all(row[1] in ids for row in ROWS)
    assert {row[1] for row in ROWS} == ids  # every paper is somebody's target


@pytest.mark.parametrize(("query", "paper_id", "kind"), ROWS, ids=[r[0][:40] for r in ROWS])
def test_the_expected_paper_ranks_first(icml_engine, query, paper_id, kind):
    hits = icml_engine.search(query, limit=3).hits
    assert hits, f"no hit for {query!r} ({kind})"
    assert hits[0].paper.id == paper_id, f"{query!r} ({kind}): first is {hits[0].paper.title!r}"
    assert "**" in hits[0].snippet or kind.startswith("LaTeX"), "snippet bolds no matched word"


def test_feedback_settings_keep_every_first_hit(icml_engine):
    # Pseudo-relevance feedback is off by default; switched on it must not break the set.
    settings = replace(SearchSettings(), prf_docs=10, prf_terms=5, prf_weight=0.2)
    engine = SearchEngine(icml_engine.papers, settings=settings, analyzer=icml_engine.analyzer)
    misses = [q for q, pid, _k in ROWS if engine.search(q, limit=1).hits[0].paper.id != pid]
    assert misses == []

"""/new and the daily `new` pool: papers by first-seen time, newest first (memory or store)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from bot.search.files.paperstore import PaperStore
from bot.search.files.storewriter import save_store
from bot.search.recent import ids_added_after, newest
from bot.search.results import BadFilter

NOW = datetime(2026, 12, 10, 12, 0, tzinfo=UTC)


def paper(pid: str, venue: str, added: str | None) -> Paper:
    return Paper(pid, f"Title {pid}", f"First sentence of {pid}. Second one.", venue, added=added)


PAPERS = [
    paper("old", "ICML 2026", None),  # a static file's paper: never new
    paper("a", "arXiv", "2026-12-01T06:00:00Z"),
    paper("b", "arXiv", "2026-12-09T06:00:00Z"),
    paper("c", "ICML 2026", "2026-12-08T06:00:00Z"),
    paper("d", "arXiv", "2026-12-09T06:00:00Z"),
]


@pytest.fixture
def engine() -> SearchEngine:
    return SearchEngine(PAPERS)


def test_newest_first_within_the_window(engine):
    result = newest(engine, 7, now=NOW)
    assert [h.paper.id for h in result.hits] == ["b", "d", "c"]
    assert result.total == 3
    assert [h.rank for h in result.hits] == [1, 2, 3]
    assert result.hits[0].snippet == "First sentence of b."
    assert [h.paper.id for h in newest(engine, 30, now=NOW).hits] == ["b", "d", "c", "a"]
    assert newest(engine, 2, now=NOW).total == 2  # since 12-08 12:00: c is just outside
    assert newest(engine, 1, now=NOW).total == 0


def test_paging_and_venue(engine):
    second = newest(engine, 30, now=NOW, limit=2, offset=2)
    assert [h.paper.id for h in second.hits] == ["c", "a"]
    assert second.pages == 2
    assert [h.paper.id for h in newest(engine, 30, venue="icml", now=NOW).hits] == ["c"]
    with pytest.raises(BadFilter, match="Venues in this corpus"):
        newest(engine, 30, venue="neurips", now=NOW)


def test_ids_added_after(engine):
    assert ids_added_after(engine, datetime(2026, 12, 8, 6, 0, tzinfo=UTC)) == ["b", "d"]
    assert ids_added_after(engine, NOW) == []


def test_added_survives_the_saved_store(tmp_path, engine):
    save_store(tmp_path / "p", PAPERS, {"k": 1})
    store = PaperStore(tmp_path / "p", {"k": 1})
    assert list(store.added) == [p.added for p in PAPERS]
    assert list(store) == PAPERS
    from_store = SearchEngine(store, index=engine.index)
    assert [h.paper.id for h in newest(from_store, 7, now=NOW).hits] == ["b", "d", "c"]
    assert replace(PAPERS[1], added=None) != PAPERS[1]


def test_damaged_stamps_answer_index_damaged(tmp_path, engine):
    """Issue 26 item 6: a first-seen column overwritten in place (same size) is refused as
    damage (`IndexDamaged`, the store marked for a rebuild), not a UnicodeDecodeError."""
    from bot.search.results import IndexDamaged

    save_store(tmp_path / "p", PAPERS, {"k": 1})
    added = tmp_path / "p" / "added.txt"
    added.write_bytes(b"\xff" * added.stat().st_size)
    from_store = SearchEngine(PaperStore(tmp_path / "p", {"k": 1}), index=engine.index)
    with pytest.raises(IndexDamaged):
        newest(from_store, 7, now=NOW)
    assert from_store.damaged is not None
    assert "added.txt" in from_store.damaged
    assert not (tmp_path / "p" / "meta.json").exists()
    with pytest.raises(IndexDamaged):
        ids_added_after(from_store, NOW)


def test_hidden_papers_leave_the_list_and_its_count(engine):
    """/new without what the asking member said 👎 to (bot.foryou): pages and total agree."""
    result = newest(engine, 30, now=NOW, hidden={"d"}, limit=2)
    assert [h.paper.id for h in result.hits] == ["b", "c"]
    assert result.total == 3

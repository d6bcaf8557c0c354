"""Follows and merged versions: a preprint's accepted record arriving later (merged with it by
`bot.papers.versions`, under the id first seen or the other) is not a new paper to its
followers; a merged paper whose every version is new is (both database backends)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest_asyncio

from bot.config import SearchSettings
from bot.follows.notices import plan
from bot.follows.store import Follows
from bot.papers.grouping import merge_versions
from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from bot.storage.store import Storage

T0 = datetime(2026, 5, 1, tzinfo=UTC)
AUTHORS = ("Ada Lovelace", "Alan Turing")
PREPRINT = Paper(
    "arxiv:2401.01234", "Sinkhorn plans for world models", "x", "arXiv", authors=AUTHORS
)
ACCEPTED = Paper(
    "iclr2026/Xy12", "Sinkhorn Plans for World Models", "x", "ICLR 2026", authors=AUTHORS
)
OTHER = Paper("iclr2026/Ab34", "Sinkhorn distances revisited", "y", "ICLR 2026", authors=("G H",))
BOTH = Paper("arxiv:2402.00001", "Sinkhorn flows", "z", "arXiv", authors=AUTHORS)
BOTH_ACCEPTED = Paper("iclr2026/Cd56", "Sinkhorn flows", "z", "ICLR 2026", authors=AUTHORS)


@pytest_asyncio.fixture
async def storage(database_url: str) -> AsyncIterator[Storage]:
    store = await Storage.open(database_url)
    yield store
    await store.close()


def _engine(papers: list[Paper], sources: list[int]) -> SearchEngine:
    return SearchEngine(merge_versions(papers, sources), settings=SearchSettings())


async def test_an_accepted_record_merged_later_is_not_news(storage: Storage) -> None:
    follows = Follows(storage)
    await plan(storage, _engine([PREPRINT], [0]), T0)  # the corpus as first served
    await follows.add(1, "sinkhorn", now=T0)
    later = _engine([PREPRINT, ACCEPTED, OTHER, BOTH, BOTH_ACCEPTED], [0, 1, 1, 0, 1])
    # The static list's id is kept for the merged paper; the preprint's id was served already.
    assert later.paper("arxiv:2401.01234").id == "iclr2026/Xy12"
    assert await plan(storage, later, T0) == 1
    told = await storage.column("SELECT paper_id FROM deliveries ORDER BY paper_id", ())
    # The merged work whose every version is new is news; the one first served as a preprint
    # is not, though its id changed to the accepted record's.
    assert told == ["iclr2026/Ab34", "iclr2026/Cd56"]

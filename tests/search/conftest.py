"""Fixtures shared by the search tests."""

from pathlib import Path

import pytest

from bot.papers.corpus import load_file
from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from tests.conftest import shared_path


@pytest.fixture(scope="session")
def lists() -> SearchEngine:
    """The six paper lists' accepted papers with the default settings (skips without them)."""
    folder = shared_path("paperlists")
    papers: list[Paper] = []
    for path in sorted(Path(folder).glob("*.json")):
        papers += load_file(path, exclude_status=("Reject", "Withdraw", "Desk Reject")).papers
    return SearchEngine(papers)

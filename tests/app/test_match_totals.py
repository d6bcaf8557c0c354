"""How a total that is a lower bound reads (`SearchResult.total_exact`): "N+ matches" and
"page 2/40+" in the footer, ▶ enabled while more may follow, on Discord and in the console
(the same embeds). The engine side is tests/search/ranking/test_pages.py."""

from __future__ import annotations

import io
import random
from dataclasses import replace

import pytest

from bot.app.results.embeds import footer_text, page_texts
from bot.app.results.pages import PageState
from bot.app.results.views import results_layout
from bot.console.repl import Console
from bot.papers.records import Paper
from bot.search.results import Hit, SearchResult
from tests.search.ranking.test_pages import _two_word_corpus, force_pruning


def _arrows(result: SearchResult, page: int) -> list[bool]:
    """Whether ◀ and ▶ are disabled under a results message of `page`."""
    view = results_layout(
        result, PageState("s", "graphs", page, 5), page_texts(result), share=False
    )
    items = [getattr(child, "item", child) for child in view.walk_children()]
    return [item.disabled for item in items if getattr(item, "label", None) in ("◀", "▶")]


def test_footer_and_buttons_say_at_least_for_a_lower_bound():
    paper = Paper(id="p", title="A title", abstract="An abstract.", venue="V")
    hits = [Hit(replace(paper, id=f"p{rank}"), 1.0, "", rank) for rank in range(6, 11)]
    bound = SearchResult("graphs", hits, total=101, offset=5, limit=5, total_exact=False)
    assert footer_text(bound) == "page 2/21+ · 101+ matches for “graphs”"
    assert bound.matches_text() == "101+ matches"
    assert bound.pages_text() == "21+"
    assert bound.has_next
    assert _arrows(bound, 2) == [False, False]
    exact = replace(bound, total=12, total_exact=True)
    assert footer_text(exact, "ICML") == "page 2/3 · 12 matches for “graphs” in ICML"
    last = replace(exact, offset=10, hits=hits[:2])
    assert not last.has_next
    assert _arrows(last, 3) == [False, True]


@pytest.mark.usefixtures(force_pruning.__name__)
def test_the_console_shows_and_pages_a_lower_bound():
    out = io.StringIO()
    Console(_two_word_corpus(), out, rng=random.Random(1)).run(
        io.StringIO("/search alpha beta\nnext\n")
    )
    text = out.getvalue()
    assert "-- page 1/180+ · 900+ matches for “alpha beta”" in text
    assert "-- page 2/180+ · 900+ matches for “alpha beta”" in text
    assert "No next page" not in text

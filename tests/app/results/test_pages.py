"""Page state shared by the buttons, the cogs and the console."""

from __future__ import annotations

import io

import pytest

from bot.app.results.pages import LIMIT_MAX, page_limit
from bot.console.repl import Console
from bot.search.engine import SearchEngine


@pytest.mark.parametrize(("asked", "shown"), [(-3, 1), (0, 1), (1, 1), (7, 7), (10, 10), (99, 10)])
def test_page_limit_is_one_rule(asked: int, shown: int) -> None:
    assert page_limit(asked) == shown
    assert LIMIT_MAX == 10  # two digits in a custom_id


def test_console_pages_use_the_same_rule(icml_engine: SearchEngine) -> None:
    out = io.StringIO()
    Console(icml_engine, out, page_size=50).run(io.StringIO("/search learning\n"))
    assert "page 1/" in out.getvalue()
    assert out.getvalue().count("**10. ") == 1
    assert "**11. " not in out.getvalue()

"""The token-less console: the same commands and embeds as Discord, printed as text."""

from __future__ import annotations

import io
import os
import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import discord
import pytest

from bot.config import PROJECT_ROOT
from bot.console.repl import Console
from bot.console.text import embed_text, markdown_text
from bot.library import citation
from bot.search.engine import SearchEngine
from tests.search import querycorpus


def run(engine: SearchEngine, text: str) -> tuple[int, str]:
    out = io.StringIO()
    code = Console(engine, out, rng=random.Random(1)).run(io.StringIO(text))
    return code, out.getvalue()


def test_search_pages_open_and_more_like(icml_engine: SearchEngine) -> None:
    code, out = run(icml_engine, "/search training\nnext\nprev\nopen 2\nmore\n")
    assert code == 0
    assert "-- page 1/2 · 10 matches for “training”" in out
    assert "-- page 2/2 · 10 matches" in out
    assert out.count("page 1/2") == 2  # prev went back
    assert "**training**" in out.lower()  # highlighted, as in Discord
    assert "-- id: icml2026/" in out
    assert "Authors: not listed" in out
    assert "More like: " in out
    assert PROMPT_TEXT not in out  # stdin is not a terminal: no prompt


PROMPT_TEXT = "paperbot> "


def test_paper_random_similar_help(icml_engine: SearchEngine) -> None:
    title = icml_engine.papers[2].title
    _code, out = run(
        icml_engine,
        f"/paper {title}\n/similar {icml_engine.papers[2].id}\n/random\n/random icml\n/help\n",
    )
    assert out.count("-- id: ") == 3
    assert "More like: " in out
    assert "ICML 2026: 19 papers" in out
    assert "open N" in out


def test_cite_is_the_library_exports_bibtex_for_the_paper_on_screen_or_hit_n(
    icml_engine: SearchEngine,
) -> None:
    paper = icml_engine.papers[2]
    _code, out = run(icml_engine, f"/cite\n/paper {paper.id}\n/cite\n/search training\n/cite 1\n")
    assert "Open a paper first" in out
    assert "/save keeps it · /cite gives its BibTeX · more: papers like it" in out
    assert citation(paper) in out
    _code, first = run(icml_engine, "/search training\nopen 1\n")
    [opened] = [p for p in icml_engine.papers if f"-- id: {p.id}" in first]
    assert citation(opened) in out


def test_mistakes_get_a_message_and_the_console_goes_on(icml_engine: SearchEngine) -> None:
    code, out = run(
        icml_engine,
        "/search the of and\n/paper zzz\n/random colm\nnext\nopen 9\n"
        "more\n/frobnicate\n\n# a comment\nquit\n/help\n",
    )
    assert code == 0
    assert "very common words" in out
    assert "No such paper: 'zzz'" in out
    assert "Unknown venue 'colm'" in out
    assert "No results yet" in out
    assert "Open which hit?" in out
    assert "Open a paper first" in out
    assert "Unknown command 'frobnicate'" in out
    assert "Corpus:" not in out  # stopped at quit


def test_empty_input_exits_zero(icml_engine: SearchEngine) -> None:
    assert run(icml_engine, "") == (0, "")


def test_markdown_text_flattens_links_and_escapes() -> None:
    text = "**1. [A \\[b\\] t\\_x](https://example.org/p)** and [Code](https://github.com/a/b)"
    assert (
        markdown_text(text) == "**1. A [b] t_x <https://example.org/p>** and Code "
        "<https://github.com/a/b>"
    )
    assert markdown_text("**bold**", color=True) == "\033[1mbold\033[0m"


def test_timestamps_channels_and_local_links_read_as_text() -> None:
    now = datetime(2025, 3, 1, 6, 0, tzinfo=UTC)
    soon = discord.utils.format_dt(now + timedelta(hours=2, minutes=5), "R")
    past = discord.utils.format_dt(now - timedelta(minutes=1), "R")
    full = discord.utils.format_dt(now, "F")
    text = (
        f"{full} ({soon}), {past} in <#0>, not <#42>: [A \\_b](https://discord.com/channels/0/0/9)"
    )
    assert (
        markdown_text(text, now=now)
        == "2025-03-01 06:00 UTC (in 2 hours), 1 minute ago in #console, not <#42>: A _b"
    )


def test_embed_text_has_every_part() -> None:
    embed = discord.Embed(title="T", url="https://x.org", description="D")
    embed.set_author(name="A")
    embed.add_field(name="F", value="one")
    embed.add_field(name="G", value="l1\nl2")
    embed.set_footer(text="foot")
    assert embed_text(embed) == "A\nT  <https://x.org>\n\nD\nF: one\n\nG:\n  l1\n  l2\n\n-- foot\n"


def _python_m_bot(
    *args: str, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DISCORD_TOKEN": "", "PAPERBOT_CONFIG": "", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        input=stdin,
        text=True,
        capture_output=True,
        cwd=Path(PROJECT_ROOT),
        env=env,
        timeout=60,
        check=False,
    )


def test_python_m_bot_without_token_explains_and_serves_the_console() -> None:
    done = _python_m_bot(stdin="/search training\n")
    assert done.returncode == 0, done.stderr
    assert "DISCORD_TOKEN is not set" in done.stderr
    assert "discord.com/developers/applications" in done.stderr
    assert "DISCORD_TOKEN=" in done.stderr
    assert ".env" in done.stderr
    assert "10 matches for “training”" in done.stdout
    closed = _python_m_bot()
    assert closed.returncode == 0
    assert closed.stdout == ""


@pytest.mark.parametrize("host", [{"DYNO": "worker.1"}, {"PAPERBOT_SERVICE": "1"}])
def test_without_token_a_service_stops_with_one_line_instead_of_an_empty_console(
    host: dict[str, str],
) -> None:
    """A worker dyno or container has no terminal: the console would exit 0 at once, and the
    host would restart it forever, the help talking about a .env file the host does not read."""
    done = _python_m_bot(stdin="/search training\n", env=host)
    assert done.returncode == 1
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("error: DISCORD_TOKEN is not set, and this runs as a service (")
    assert "heroku config:set DISCORD_TOKEN=" in line


def test_python_m_bot_help_and_cli_still_work() -> None:
    helped = _python_m_bot("--help")
    assert helped.returncode == 0
    assert "without DISCORD_TOKEN" in helped.stdout.replace("\n", " ")
    searched = _python_m_bot("search", "optimal", "transport", "--limit", "1")
    assert searched.returncode == 0
    assert searched.stdout.startswith("🔎 optimal transport\n\n**1. ")


def test_search_shows_the_matched_author_and_the_order() -> None:
    """Issue 27 in the console: the hit line names the author `author:` matched (the second of
    two here), not the first names, and the page says the order `sort:` asked for."""
    code, out = run(querycorpus.engine(), '/search graph author:"Chelsea Finn" sort:old\n')
    assert code == 0
    assert "Sorted oldest first." in out.split("🔎")[0]
    assert "· Chelsea Finn\n" in out
    assert "Sergey Levine" not in out

"""For you in the console and the CLI: the same ranking, embed and ratings as on Discord;
`/foryou down N` keeps paper N away for good."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.config import Settings, StorageSettings
from bot.console.cli import main
from bot.console.repl import Console
from bot.foryou import DOWN, Ratings
from bot.papers.corpus import load_corpus
from bot.search.engine import SearchEngine


def record(n: int, title: str, abstract: str) -> dict:
    return {
        "id": f"t/{n}",
        "title": title,
        "abstract": abstract,
        "authors": [f"Ann Writer{n}"],
        "year": 2025,
        "venue": "TEST 2025",
    }


RECORDS = [
    *(record(i, f"Hyperbolic trees {i}", "Trees embed in hyperbolic space.") for i in range(3)),
    record(10, "Hyperbolic graphs for routing", "Hyperbolic embeddings of trees for routing."),
    record(11, "Hyperbolic graphs for music", "Hyperbolic embeddings of trees for music."),
    *(record(20 + i, f"Filler {w}", f"About {w} only.") for i, w in enumerate("abcdefgh")),
]


def setup(tmp_path: Path) -> tuple[Console, io.StringIO, Settings]:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    settings = replace(Settings(), storage=StorageSettings(str(tmp_path / "db.sqlite3")))
    settings = settings.with_corpus([corpus])
    engine = SearchEngine(load_corpus([corpus]).papers, settings=settings.search)
    out = io.StringIO()
    return Console(engine, out, settings=settings), out, settings


def test_console_foryou_learns_and_a_disliked_paper_never_returns(tmp_path: Path) -> None:
    console, out, settings = setup(tmp_path)
    console.handle("/foryou up 1")
    assert "run /foryou first" in out.getvalue()
    console.handle("/foryou")
    assert "I need at least 3 and have 0" in out.getvalue()
    for n in range(3):
        console.handle(f"/save t/{n}")
    out.truncate(0)
    console.handle("/foryou")
    page = out.getvalue()
    assert "1. Hyperbolic graphs for" in page
    assert "% match" in page
    first = "routing" if "1. Hyperbolic graphs for routing" in page else "music"
    console.handle("/foryou down 1")
    assert "will not be shown to you again" in out.getvalue()
    out.truncate(0)
    console.handle("/foryou")
    assert f"Hyperbolic graphs for {first}" not in out.getvalue()
    console.close()

    cli = io.StringIO()
    args = ["--corpus", str(tmp_path / "c.jsonl"), "foryou", "--user", "0"]
    assert main([*args, "--url", settings.storage.database], out=cli) == 0
    assert "✨ For you" in cli.getvalue()
    assert "from 3 saved or 👍, 1 👎" in cli.getvalue()  # the console reader's own signals
    assert f"Hyperbolic graphs for {first}" not in cli.getvalue()


def test_console_new_leaves_out_the_readers_disliked_papers(tmp_path: Path) -> None:
    yesterday = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    fresh = [{**r, "added": yesterday} for r in RECORDS[3:5]]
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in fresh), encoding="utf-8")
    settings = replace(Settings(), storage=StorageSettings(str(tmp_path / "db.sqlite3")))
    engine = SearchEngine(load_corpus([corpus]).papers, settings=settings.search)
    out = io.StringIO()
    console = Console(engine, out, settings=settings.with_corpus([corpus]))
    console.handle("/new 7")
    assert "Hyperbolic graphs for music" in out.getvalue()  # no database yet: nothing hidden
    console.db.run(lambda s: Ratings(s).rate(0, "t/11", DOWN, datetime.now(UTC)))
    out.truncate(0)
    out.seek(0)
    console.handle("/new 7")
    assert "Hyperbolic graphs for routing" in out.getvalue()
    assert "Hyperbolic graphs for music" not in out.getvalue()
    shown = console.db.run(lambda s: Ratings(s).shown_among(0, ["t/10", "t/11"]))
    assert shown == {"t/10"}
    console.close()

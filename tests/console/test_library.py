"""The library and follows in the console: the same storage and embeds as on Discord."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

from pybtex.database import parse_string

from bot.config import Settings, StorageSettings
from bot.console.repl import Console
from bot.papers.corpus import load_corpus
from bot.search.engine import SearchEngine


def write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def record(n: int, title: str) -> dict:
    return {
        "id": f"t/{n}",
        "title": title,
        "abstract": f"About {title.lower()}.",
        "authors": [f"Ann Writer{n}"],
        "year": 2025,
        "venue": "TEST 2025",
    }


# Unrelated papers: BM25 gives a word found in half of a tiny corpus no weight at all.
FILLER = [record(100 + i, f"Filler topic {w}") for i, w in enumerate("abcdefgh")]


def console_for(tmp_path: Path) -> tuple[Console, io.StringIO, Path]:
    corpus = write(
        tmp_path / "c.jsonl",
        [record(1, "Optimal transport maps"), record(2, "Graph neural networks"), *FILLER],
    )
    settings = replace(Settings(), storage=StorageSettings(str(tmp_path / "db.sqlite3")))
    settings = settings.with_corpus([corpus])
    engine = SearchEngine(load_corpus([corpus]).papers, settings=settings.search)
    out = io.StringIO()
    return Console(engine, out, settings=settings), out, corpus


def test_save_show_read_export_clear(tmp_path: Path) -> None:
    console, out, _ = console_for(tmp_path)
    for line in ("/save", "/search transport", "/save 1", "/save 1", "/library show"):
        console.handle(line)
    text = out.getvalue()
    assert "Open a paper first" in text
    assert "📚 Saved Optimal transport maps to your library" in text
    assert "📚 Optimal transport maps is already in your library." in text
    assert "-- page 1/1 · 1 saved · 1 unread" in text
    console.handle("/library read t/1")
    console.handle("/library show")
    assert "Marked t/1 as read." in out.getvalue()
    assert "-- page 1/1 · 1 saved · 0 unread" in out.getvalue()
    target = tmp_path / "out.bib"
    console.handle(f"/library export bibtex {target}")
    entry = parse_string(target.read_text(encoding="utf-8"), "bibtex").entries["writer12025optimal"]
    assert entry.fields["title"] == "{Optimal transport maps}"
    assert entry.fields["booktitle"] == "TEST 2025"
    console.handle("/library clear")
    assert "Type `/library clear yes`" in out.getvalue()
    console.handle("/library clear yes")
    assert "Deleted: 1 saved papers, 0 reactions, 0 follows, 0 ratings." in out.getvalue()
    console.handle("/library remove t/1")
    assert "'t/1' is not in your library" in out.getvalue()
    console.close()


def test_follow_then_reload_prints_only_new_matches_once(tmp_path: Path) -> None:
    console, out, corpus = console_for(tmp_path)
    console.handle("/follow add transport")
    console.handle("/follow list")
    assert "Following 'transport'" in out.getvalue()
    assert "**transport** → this console" in out.getvalue()
    write(
        corpus,
        [
            record(1, "Optimal transport maps"),
            record(2, "Graph neural networks"),
            record(3, "Transport of mass on graphs"),
            record(4, "Rainfall in ten cities"),
            *FILLER,
        ],
    )
    console.handle("/reload")
    text = out.getvalue()
    assert "12 papers (was 10)" in text
    assert "🆕 New papers for “transport”" in text
    assert "1. Transport of mass on graphs" in text
    assert "Rainfall" not in text
    assert "Optimal transport maps <" not in text.split("New papers")[1]
    before = out.getvalue()
    console.handle("/reload")
    assert "New papers" not in out.getvalue()[len(before) :]
    console.close()


def test_follow_tune_sets_what_discord_sets_and_refuses_what_it_refuses(tmp_path: Path) -> None:
    console, out, corpus = console_for(tmp_path)
    console.handle("/follow add transport")
    follow_id = out.getvalue().split("(")[1].split(")")[0]
    console.handle(f'/follow tune {follow_id} cap=1 exclude="rainfall survey" min_score=5')
    assert (
        "transport: after each refresh · 1 a message · without -rainfall, -survey · score ≥ 5%."
        in out.getvalue()
    )
    for bad, said in (
        (f"{follow_id} colour=red", "Unknown option 'colour'"),
        (f"{follow_id} cap=many", "cap is a whole number"),
        (f"{follow_id} cap=11", "The cap is 1 to 10"),
        (f"{follow_id} frequency=hourly", "Frequency is one of refresh, daily, weekly"),
        (f"{follow_id}", "Nothing to change"),
        ("nope cap=2", "No follow 'nope' of yours"),
    ):
        console.handle(f"/follow tune {bad}")
        assert said in out.getvalue().splitlines()[-1], (bad, out.getvalue().splitlines()[-1])
    # The tuned feed is what the reload's notice follows: one paper shown, the rest behind ▶,
    # and the excluded word's paper left out.
    write(
        corpus,
        [
            record(1, "Optimal transport maps"),
            record(2, "Graph neural networks"),
            record(3, "Transport of mass on graphs"),
            record(4, "Transport of rainfall in cities"),
            record(5, "Transport plans for robots"),
            *FILLER,
        ],
    )
    console.handle("/reload")
    text = out.getvalue().split("/reload")[-1] if "/reload" in out.getvalue() else out.getvalue()
    notice = text.split("New papers")[1]
    assert "Rainfall" not in notice
    assert "and 1 more (▶)" in notice, notice
    console.close()


def test_follow_foryou_is_the_for_you_feed_as_on_discord(tmp_path: Path) -> None:
    console, out, corpus = console_for(tmp_path)
    console.handle("/follow foryou")
    assert "Following For you (" in out.getvalue()
    console.handle("/follow foryou")
    assert "Already following For you" in out.getvalue().splitlines()[-1]
    # Three saved transport papers teach it; a new transport paper arrives with a reload.
    papers = [record(1, "Optimal transport maps"), record(2, "Graph neural networks")]
    papers += [record(10 + i, f"Transport plans {w}") for i, w in enumerate("xyz")]
    write(corpus, [*papers, *FILLER])
    console.handle("/reload")
    for n in (10, 11, 12):
        console.handle(f"/save t/{n}")
    write(corpus, [*papers, record(20, "Transport plans for robots"), *FILLER])
    before = len(out.getvalue())
    console.handle("/reload")
    notice = out.getvalue()[before:]
    assert "New papers" in notice
    assert "Transport plans for robots" in notice
    console.close()

"""The console form of "Find papers": `python -m bot find "..."` and the console's `/find`."""

from __future__ import annotations

import io
import json
from pathlib import Path

from bot.console.cli import main
from bot.console.repl import Console
from bot.papers.corpus import load_corpus
from bot.search.engine import SearchEngine
from tests.conftest import TEST_DATA

SAMPLE = TEST_DATA / "iclr2018_sample.json"
MESSAGE = (
    "see https://openreview.net/forum?id=B14TlG-RW and "
    '"Progressive Reinforcement Learning with Distillation"'
)


def run(tmp_path: Path, *args: str) -> tuple[int, str]:
    config = tmp_path / "settings.toml"
    config.write_text(f'[corpus]\nindex_dir = "{tmp_path / "idx"}"\n', encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = main(["--config", str(config), "--corpus", str(SAMPLE), *args], out=out, err=err)
    return code, out.getvalue()


def test_find_prints_the_cards_of_discord(tmp_path: Path) -> None:
    code, out = run(tmp_path, "find", "--no-fetch", MESSAGE)
    assert code == 0
    assert "1. OpenReview B14TlG-RW" in out
    assert "QANet: Combining Local Convolution" in out
    assert "Progressive Reinforcement Learning with Distillation for Multi-Skilled" in out
    engine = SearchEngine(load_corpus([SAMPLE]).papers)
    console = io.StringIO()
    Console(engine, console).run(io.StringIO(f"/find {MESSAGE}\n"))
    assert out in console.getvalue()


def test_find_json_and_nothing(tmp_path: Path) -> None:
    code, out = run(tmp_path, "find", "--no-fetch", "--json", "doi:10.1145/3292500.3330701")
    assert code == 1  # nothing found: a failing exit for scripts
    data = json.loads(out)
    assert data["found"] == [
        {"mention": "DOI 10.1145/3292500.3330701", "source": None, "paper": None}
    ]
    code, out = run(tmp_path, "find", "--no-fetch", "just words")
    assert code == 1
    assert "I found no paper in that message" in out

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import DEFAULT_CONFIG, EXCLUDED_STATUSES, PROJECT_ROOT, Settings, load_settings
from bot.console.cli import main
from bot.console.repl import Console
from bot.papers.corpus import load_corpus
from bot.search.engine import SearchEngine
from tests.conftest import ICML, TEST_DATA


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "settings.toml"
    path.write_text(
        f'[corpus]\nfiles = ["{ICML}"]\nindex_dir = "{tmp_path / "idx"}"\n', encoding="utf-8"
    )
    return path


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_search_text(config):
    code, out, _ = run("--config", str(config), "search", "sinkhorn", "transport", "plans")
    assert code == 0
    assert out.startswith("🔎 sinkhorn transport plans\n")
    assert "**1. Sinkhorn-parameterized Variational Inference" in out
    assert "**Sinkhorn**" in out
    # The weak-match cut leaves the papers sharing "transport" (at 0.1 of the best score).
    assert "3 matches for “sinkhorn transport plans”" in out


def test_search_json_round_trip(config):
    code, out, _ = run(
        "--config",
        str(config),
        "search",
        "mixture of experts denial of service",
        "--json",
        "--limit",
        "3",
    )
    assert code == 0
    hits = json.loads(out)
    assert len(hits) == 3
    assert hits[0]["title"].startswith("RepetitionCurse")
    assert set(hits[0]) >= {
        "id",
        "title",
        "venue",
        "year",
        "authors",
        "score",
        "snippet",
        "abstract",
        "links",
    }
    assert hits[0]["score"] > hits[1]["score"] > 0


def test_paper_similar_random_json(config):
    code, out, _ = run("--config", str(config), "paper", "dWorldEval", "--json")
    paper = json.loads(out)
    assert code == 0
    assert paper["title"].startswith("dWorldEval")
    assert paper["title_derived"]
    code, out, _ = run("--config", str(config), "similar", paper["id"], "--json", "--limit", "2")
    similar = json.loads(out)
    assert code == 0
    assert len(similar) == 2
    assert paper["id"] not in {h["id"] for h in similar}
    code, out, _ = run("--config", str(config), "random", "--seed", "3", "--json")
    assert code == 0
    assert json.loads(out)["venue"] == "ICML 2026"
    code, out, _ = run("--config", str(config), "paper", paper["id"])
    assert code == 0
    assert "Authors: not listed" in out
    assert f"id: {paper['id']}" in out


def test_links_from_abstracts(config):
    _code, out, _ = run("--config", str(config), "paper", "SAMPO", "--json")
    links = json.loads(out)["links"]
    assert {"kind": "code", "url": "https://github.com/WillDreamer/ARL-Arena.git"} in links


def test_errors_are_clear(config):
    code, _, err = run("--config", str(config), "search", "the", "of")
    assert code == 2
    assert "Nothing to search for" in err
    code, _, err = run("--config", str(config), "paper", "nope")
    assert code == 2
    assert "No such paper: 'nope'" in err
    code, _, err = run("--config", str(config), "search", "x", "--venue", "mars")
    assert code == 2
    assert "Unknown venue 'mars'" in err
    code, _, err = run("--config", str(config), "--corpus", "/no/such.jsonl", "stats")
    assert code == 2  # a corpus that cannot be served (issue 12 item 8)
    assert "no such file" in err


def test_stats_and_corpus_option(config):
    code, out, _ = run(
        "--config",
        str(config),
        "--corpus",
        str(ICML),
        "--corpus",
        str(TEST_DATA / "iclr2018_sample.json"),
        "stats",
    )
    assert code == 0
    assert "ICLR 2018: 3" in out
    assert "ICML 2026: 19" in out


def test_ingest_validates_and_converts(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "title": "T", "abstract": "A"}\n{broken\n', encoding="utf-8")
    out_file = tmp_path / "out.jsonl"
    code, out, err = run(
        "ingest", str(TEST_DATA / "iclr2018_sample.json"), str(bad), "--out", str(out_file)
    )
    assert code == 0
    assert f"{bad}:2: malformed JSON" in err
    assert "loaded 4 papers from 2 file(s)" in out
    records = [json.loads(line) for line in out_file.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 4
    assert records[0]["venue"] == "ICLR 2018"
    code, _, err = run("ingest", str(tmp_path / "missing.json"))
    assert code == 1
    assert "no usable paper" in err


def test_module_entry_point_as_a_user_runs_it(config):
    env = dict(os.environ, PAPERBOT_CONFIG=str(config))
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "search", "polarization", "--json"],
        cwd="/",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)[0]["title"].startswith("DuRP")
    assert str(PROJECT_ROOT) != "/"


def test_titles_render_latex_like_discord(tmp_path):
    """`search qPOTS` finds the paper and prints `qPOTS: ...`, not `$q\\texttt{POTS}$`."""
    sample = TEST_DATA / "latex_sample.json"
    config = tmp_path / "settings.toml"
    config.write_text(
        f'[corpus]\nfiles = ["{sample}"]\nindex_dir = "{tmp_path / "idx"}"\n', encoding="utf-8"
    )
    code, out, _ = run("--config", str(config), "search", "qPOTS", "--limit", "1")
    assert code == 0
    assert "**1. qPOTS: Efficient Batch Multiobjective" in out
    code, out, _ = run("--config", str(config), "paper", "latex_sample/udH3b2Lsx5")
    assert code == 0
    assert out.startswith("SPIN: distilling Skill-RRT for long-horizon")  # the embed title


def test_one_list_of_excluded_statuses(tmp_path: Path) -> None:
    """Settings, the loader and `ingest` leave out the same decisions (Desk Reject included)."""
    records = json.loads((TEST_DATA / "iclr2018_sample.json").read_text(encoding="utf-8"))
    desk = dict(records[0], id="desk1", status="Desk Reject")
    path = tmp_path / "iclr2018.json"
    path.write_text(json.dumps([*records, desk]), encoding="utf-8")
    assert {p.status for p in load_corpus([path]).papers} == {"Poster"}
    assert Settings().corpus.exclude_status == EXCLUDED_STATUSES
    assert load_settings(DEFAULT_CONFIG, env={}).corpus.exclude_status == EXCLUDED_STATUSES
    code, out, _ = run("ingest", str(path))
    assert code == 0
    assert "loaded 3 papers" in out
    code, out, _ = run("ingest", str(path), "--include-rejected")
    assert "loaded 6 papers" in out


def test_text_output_is_the_console_look(config: Path) -> None:
    """One look: `search` and `paper` print what the console prints for the same request (the
    embeds Discord shows), e.g. three authors then "et al." in a hit."""
    sample = str(TEST_DATA / "iclr2018_sample.json")
    where = ("--config", str(config), "--corpus", sample)
    code, out, _ = run(*where, "search", "QANet", "--limit", "5")
    assert code == 0
    engine = SearchEngine(load_corpus([Path(sample)]).papers)
    console = io.StringIO()
    Console(engine, console).run(io.StringIO("/search QANet\n/paper B14TlG-RW\n"))
    assert out in console.getvalue()
    assert "Adams Wei Yu, David Dohan, Minh-Thang Luong et al." in out
    code, out, _ = run(*where, "paper", "B14TlG-RW")
    assert code == 0
    assert out in console.getvalue()
    assert "Quoc V. Le" in out  # the detail lists every author


def _store(config: Path) -> Path:
    """The saved paper store the config's first one-shot command built."""
    (folder,) = [p for p in (config.parent / "idx").iterdir() if p.is_dir()]
    return folder / "papers"


def test_a_store_damaged_in_place_is_rebuilt_not_a_traceback(config: Path) -> None:
    """Issue 26 item 6: records.bin overwritten with 0xFF, same size (so the size check passes
    and only the background digest check would see it): the one-shot command answers from a
    rebuilt store, every time, with no traceback."""
    code, out, _ = run("--config", str(config), "paper", "dWorldEval", "--json")
    assert code == 0
    expected = json.loads(out)
    records = _store(config) / "records.bin"
    records.write_bytes(b"\xff" * records.stat().st_size)
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "paper", "dWorldEval", "--json"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PAPERBOT_CONFIG=str(config)),
        timeout=60,
        check=False,
    )
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == expected
    assert "re-reading the corpus" in proc.stderr  # one line says why it took longer
    # Rebuilt on disk: the next run reads the store again, quietly.
    code, out, err = run("--config", str(config), "paper", "dWorldEval", "--json")
    assert (code, json.loads(out)) == (0, expected)
    assert "re-reading" not in err


def test_swapped_ids_are_caught_before_the_first_answer(config: Path) -> None:
    """Two lines of the store's ids column swapped (same sizes): the id lookup would miss
    both papers ("No such paper") until the digest check ran; the start-up check finds it."""
    code, out, _ = run("--config", str(config), "paper", "dWorldEval", "--json")
    assert code == 0
    ids_file = _store(config) / "ids.txt"
    lines = ids_file.read_bytes().split(b"\n")
    first, last = lines[0].decode(), lines[-1].decode()
    lines[0], lines[-1] = lines[-1], lines[0]
    ids_file.write_bytes(b"\n".join(lines))
    for pid in (first, last):
        code, out, err = run("--config", str(config), "paper", pid, "--json")
        assert code == 0, err
        assert json.loads(out)["id"] == pid


def test_search_prints_notices_and_the_order_asked_for(config):
    """Issue 27 in the CLI: a quoted phrase no paper has falls back to its words, with the
    notice above the page, and `sort:` says the order."""
    code, out, _ = run("--config", str(config), "search", '"stay in the sun" agents', "sort:new")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == 'No paper has the phrase "stay in the sun"; best matches for its words:'
    title = next(i for i, line in enumerate(lines) if line.startswith("🔎 "))
    assert "Sorted newest first." in lines[1:title]  # above the page, beside any weak notice
    code, _, err = run("--config", str(config), "search", "agents", "sort:size")
    assert code != 0
    assert "`sort:size` is not an order" in err

"""Issue 12 items 8 and 11: a corpus that cannot be served stops `python -m bot` with one line.

Run as a user runs it (a child process): missing, empty, a directory, only bad records, a
deeply nested line, or one good file plus a mistyped one. Each ends with exactly one `error:`
line and exit 2, never a traceback, with a token (the bot, which must not even connect) and
without one (the console). A mistyped --corpus leaves nothing behind for the next run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import PROJECT_ROOT
from tests.app.helpers import TOKEN
from tests.conftest import ICML

GOOD = json.dumps({"id": "p1", "title": "Kernels", "abstract": "About kernels."})


def make_corpus(root: Path, kind: str) -> list[Path]:
    path = root / "papers.jsonl"
    if kind == "missing":
        pass
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "directory":
        path.mkdir()
    elif kind == "only_bad_records":
        path.write_text('{"id": 1}\n{broken\n' + "[" * 100_000 + "\n", encoding="utf-8")
    elif kind == "one_mistyped":
        path.write_text(GOOD + "\n", encoding="utf-8")
        return [path, root / "papres.jsonl"]
    return [path]


def run_bot(root: Path, files: list[Path], *, token: bool) -> subprocess.CompletedProcess[str]:
    config = root / "settings.toml"
    config.write_text(
        f"[corpus]\nfiles = {json.dumps([str(f) for f in files])}\n"
        f'index_dir = "{root / "idx"}"\n[storage]\ndatabase = "{root / "state.sqlite3"}"\n',
        encoding="utf-8",
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(PROJECT_ROOT),
        "PAPERBOT_CONFIG": str(config),
        "DISCORD_TOKEN": TOKEN if token else "",
        # Nothing listens here: the bot must fail before it tries to connect.
        "PAPERBOT_API_BASE": "http://127.0.0.1:9/api/v10",
        "PAPERBOT_GATEWAY_URL": "ws://127.0.0.1:9/gateway",
    }
    return subprocess.run(
        [sys.executable, "-m", "bot"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("token", [True, False], ids=["bot", "console"])
@pytest.mark.parametrize(
    "kind", ["missing", "empty", "directory", "only_bad_records", "one_mistyped"]
)
def test_unusable_corpus_is_one_error_line_and_exit_2(
    tmp_path: Path, kind: str, token: bool
) -> None:
    done = run_bot(tmp_path, make_corpus(tmp_path, kind), token=token)
    output = done.stdout + done.stderr
    assert "Traceback" not in output
    assert done.returncode == 2, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    assert "papers.jsonl" in errors[0] or "papres.jsonl" in errors[0]
    assert TOKEN not in output


def test_mistyped_corpus_leaves_no_sticky_warning(tmp_path: Path) -> None:
    from bot.config import load_settings
    from bot.search.engine import SearchEngine

    good = tmp_path / "papers.jsonl"
    good.write_bytes(ICML.read_bytes())
    assert run_bot(tmp_path, [good, tmp_path / "papres.jsonl"], token=False).returncode == 2
    config = tmp_path / "settings.toml"
    config.write_text(
        f'[corpus]\nfiles = {json.dumps([str(good)])}\nindex_dir = "{tmp_path / "idx"}"\n',
        encoding="utf-8",
    )
    engine = SearchEngine.load(load_settings(config, env={}, dotenv=False))
    assert engine.load_report.problems == []
    check = subprocess.run(
        [sys.executable, "-m", "bot", "--check"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "PAPERBOT_CONFIG": str(config)},
    )
    assert "bad record" not in check.stdout
    assert "corpus: 19 papers" in check.stdout

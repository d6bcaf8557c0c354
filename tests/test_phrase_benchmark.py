"""The phrase benchmark runs end to end on a tiny corpus: every way of checking a phrase
matches the same documents (the run exits non-zero otherwise)."""

from __future__ import annotations

import pytest

from benchmarks.phrases import main
from benchmarks.stress import SHARED


def test_phrase_benchmark_runs_end_to_end_on_a_tiny_corpus(tmp_path, capsys) -> None:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent: the synthetic corpus is drawn from its paper lists")
    assert main(["--papers", "400", "--phrases", "12", "--work", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "same documents matched: 12/12 phrases" in out
    for way in ("pairs (now)", "positions only (before)", "term sequences (format 3)"):
        assert f"search, {way}" in out
        assert f"check alone, {way}" in out

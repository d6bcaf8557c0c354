"""`benchmarks/searchpath.py` end to end on a small saved index: it loads the folder (never
builds), times both paths and finds every page of the pruned path equal to the exhaustive one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks import searchpath
from bot.config import load_settings
from bot.search.engine import SearchEngine
from tests.conftest import ICML, shared_path


def test_searchpath_times_and_compares_on_a_saved_index(tmp_path: Path, capsys) -> None:
    shared = shared_path("paperlists").parent
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(ICML.read_bytes())
    settings = load_settings(env={}).with_corpus([corpus])
    settings = replace(settings, corpus=replace(settings.corpus, index_dir=tmp_path / "idx"))
    SearchEngine.load(settings)
    (folder,) = [p for p in (tmp_path / "idx").iterdir() if p.is_dir()]
    argv = ["--index", str(folder), "--shared", str(shared), "--queries", "40", "--compare"]
    assert searchpath.main(argv) == 0
    out = capsys.readouterr().out
    assert "/search default: p50" in out
    assert "/search exhaustive: p50" in out
    assert "pages different from the exhaustive path: 0 of" in out


def test_searchpath_refuses_an_index_built_with_other_settings(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(ICML.read_bytes())
    settings = load_settings(env={}).with_corpus([corpus])
    search = replace(settings.search, title_weight=settings.search.title_weight + 1)
    settings = replace(
        settings, corpus=replace(settings.corpus, index_dir=tmp_path / "idx"), search=search
    )
    SearchEngine.load(settings)
    (folder,) = [p for p in (tmp_path / "idx").iterdir() if p.is_dir()]
    with pytest.raises(ValueError, match="other settings"):
        searchpath.load_saved(folder, load_settings(env={}).search)

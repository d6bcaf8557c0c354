"""Issue 12 (items 6, 8, 9, 10) and issue 11 §2: loading never trusts damage and never crashes.

Proves: a `[`-nested line is one `file:line: too deeply nested` problem and the load goes on;
load problems are structured (path, line, kind, text); a missing corpus file stops the load
and leaves nothing behind for later runs to repeat; a paper store whose ids were swapped or
whose records lost bytes is detected and rebuilt; half-written folders from a killed save are
removed at the next start (while a live writer's folder stays).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from bot.config import load_settings
from bot.papers.corpus import CorpusError, load_corpus, load_file
from bot.search.engine import SearchEngine
from tests.conftest import ICML

DEEP = "[" * 100_000


def record(i: int) -> dict:
    return {"id": f"p{i}", "title": f"Paper {i} on kernels", "abstract": f"Abstract {i}."}


def test_deeply_nested_jsonl_line_is_reported_and_loading_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    lines = [json.dumps(record(1)), DEEP, json.dumps(record(2))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = load_file(path)
    assert [p.id for p in report.papers] == ["p1", "p2"]
    assert [str(p) for p in report.problems] == [f"{path}:2: too deeply nested"]
    assert report.skipped == 1


def test_deeply_nested_record_in_a_json_array_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "test2024.json"
    good = json.dumps({"id": 1, "title": "Kernels", "abstract": "x", "author": "A"})
    path.write_text(f"[\n{good},\n{DEEP}\n]\n", encoding="utf-8")
    report = load_file(path)
    assert len(report.papers) == 1
    assert f"{path}:3: too deeply nested" in [str(p) for p in report.problems]


def test_load_problems_are_structured(tmp_path: Path) -> None:
    from bot.papers.corpus import LoadProblem, ProblemKind

    path = tmp_path / "c.jsonl"
    lines = [json.dumps(record(1)), "{broken", json.dumps({"id": "x"}), json.dumps(record(1))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    problems = load_file(path).problems
    assert [(p.path, p.line, p.kind) for p in problems] == [
        (path, 2, ProblemKind.MALFORMED),
        (path, 3, ProblemKind.INVALID),
        (path, 4, ProblemKind.DUPLICATE),
    ]
    assert [p.damage for p in problems] == [True, False, False]
    assert LoadProblem.from_json(problems[0].to_json()) == problems[0]


def settings_for(tmp_path: Path, files: list[Path]):
    settings = load_settings(env={}).with_corpus(files)
    return replace(settings, corpus=replace(settings.corpus, index_dir=tmp_path / "idx"))


def test_missing_corpus_file_is_an_error_and_is_not_cached(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(ICML.read_bytes())
    with pytest.raises(CorpusError, match=r"typo\.jsonl: no such file"):
        load_corpus([corpus, tmp_path / "typo.jsonl"])
    with pytest.raises(CorpusError, match=r"typo\.jsonl: no such file"):
        SearchEngine.load(settings_for(tmp_path, [corpus, tmp_path / "typo.jsonl"]))
    # The path fixed: nothing of the mistyped run is remembered.
    engine = SearchEngine.load(settings_for(tmp_path, [corpus]))
    assert engine.load_report.problems == []
    again = SearchEngine.load(settings_for(tmp_path, [corpus]))
    assert again.load_report.problems == []


def test_record_problems_are_reported_again_from_the_saved_index(tmp_path: Path) -> None:
    from bot.papers.corpus import ProblemKind

    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps(record(1)) + "\n{broken\n", encoding="utf-8")
    first = SearchEngine.load(settings_for(tmp_path, [corpus]))
    again = SearchEngine.load(settings_for(tmp_path, [corpus]))
    assert again.load_report.problems == first.load_report.problems
    assert [p.kind for p in again.load_report.problems] == [ProblemKind.MALFORMED]


@pytest.mark.parametrize("damage", ["swapped_ids", "bad_bytes"])
def test_damaged_paper_store_is_detected_and_rebuilt(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(ICML.read_bytes())
    settings = settings_for(tmp_path, [corpus])
    first = SearchEngine.load(settings)
    # Read before the damage: a first build serves its papers from the store it saved.
    papers = list(first.papers)
    (folder,) = [p for p in (tmp_path / "idx").iterdir() if p.is_dir()]
    store = folder / "papers"
    if damage == "swapped_ids":
        ids = (store / "ids.txt").read_text(encoding="utf-8").split("\n")
        ids[0], ids[1] = ids[1], ids[0]
        (store / "ids.txt").write_text("\n".join(ids), encoding="utf-8")
    else:
        data = bytearray((store / "records.bin").read_bytes())
        data[40:44] = b"\xff\x00\xff\x00"
        (store / "records.bin").write_bytes(bytes(data))
    caplog.set_level("INFO")
    engine = SearchEngine.load(settings)
    # Both are found by the start-up check (issue 26 item 6: the id files' digests, a sample
    # of records), so the store is rebuilt before the first answer; the digest check after
    # start-up finds anything it misses and rebuilds the engine in place.
    assert engine.wait_verified(timeout=60)
    found = {
        "swapped_ids": "ids.txt is damaged (checksum)",
        "bad_bytes": "records.bin: paper 1 does not decode",
    }
    assert f"re-reading the corpus: {store}: {found[damage]}" in caplog.text
    assert engine.damaged is None
    wanted = papers[0]
    assert engine.paper(wanted.id) == wanted
    assert [engine.papers[i] for i in range(len(engine.papers))] == papers
    # Rebuilt on disk: the next start trusts the store again.
    caplog.clear()
    assert SearchEngine.load(settings).wait_verified(timeout=60)
    assert "damaged" not in caplog.text


def test_half_written_folders_are_removed_at_the_next_start(tmp_path: Path) -> None:
    from bot.papers.files import remove_stale

    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(ICML.read_bytes())
    settings = settings_for(tmp_path, [corpus])
    SearchEngine.load(settings)
    (folder,) = [p for p in (tmp_path / "idx").iterdir() if p.is_dir()]
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    dead_pid = int(dead.stdout)
    half_index = tmp_path / "idx" / f"{folder.name}.tmp-{dead_pid}-abc123"
    half_store = folder / f"papers.tmp-{dead_pid}-def456"
    live = tmp_path / "idx" / f"other.tmp-{os.getpid()}-ghi789"
    for path in (half_index, half_store, live):
        path.mkdir()
        (path / "doc_ids.npy").write_bytes(b"\0" * 1024)
    SearchEngine.load(settings)
    assert not half_index.exists()
    assert not half_store.exists()
    assert live.exists()  # a writer still running (here: this process) keeps its folder
    assert folder.exists()
    assert remove_stale(tmp_path / "missing") == []

"""benchmarks.known_items and benchmarks.similar end to end on the small samples: every
system's row is printed and the figures are in range."""

import shutil

import pytest

from benchmarks import known_items, similar
from tests.conftest import TEST_DATA


@pytest.fixture
def lists(tmp_path):
    shutil.copy(TEST_DATA / "iclr2018_sample.json", tmp_path / "iclr2018.json")
    return tmp_path


def test_known_items_prints_every_kind_split_and_system(lists, capsys):
    pytest.importorskip("bm25s")
    pytest.importorskip("tantivy")
    beir = TEST_DATA / "beir_tiny"
    args = ["--paperlists", str(lists), "--beir", str(beir), "--beir-split", "test"]
    assert known_items.main(args) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    systems = [row.split(" | ")[1] for row in rows[1:]]
    assert systems.count("bot") == systems.count("bm25s") == systems.count("tantivy")
    names = {row.split(" | ")[0] for row in rows[1:]}
    assert any("tldr (train)" in n for n in names), names
    assert any("tldr (test)" in n for n in names)
    assert any("beir_tiny (test)" in n for n in names)
    for row in rows[1:]:
        figures = [float(x) for x in row.strip("| ").split(" | ")[2:]]
        assert all(0.0 <= f <= 1.0 for f in figures), row


def test_similar_benchmark_prints_each_list(lists, capsys):
    assert similar.main(["--paperlists", str(lists)]) == 0
    out = capsys.readouterr().out
    for name in ("abstract BM25", "before", "after", "keywords held out"):
        assert name in out

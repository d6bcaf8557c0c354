"""The benchmark runs end to end on a tiny corpus it makes itself (no ../shared needed).

No timing is asserted: only that every stage runs and that the top 10 agree with rank_bm25.
"""

import pytest

pytest.importorskip("rank_bm25", reason="benchmarks compare against rank_bm25")
pytest.importorskip("bm25s", reason="the `bench` extra (bm25s) is not installed")
pytest.importorskip("psutil", reason="the `bench` extra (psutil) is not installed")
pytest.importorskip("tantivy", reason="the `bench` extra (tantivy) is not installed")

from benchmarks import tantivy_engine
from benchmarks.run import main
from bot.search.index.postings import BM25Index
from bot.search.ranking import kernel


def test_benchmark_runs_end_to_end_on_a_tiny_corpus(tmp_path):
    out = tmp_path / "report.md"
    assert (
        main(
            [
                "--tiny",
                "--work",
                str(tmp_path),
                "--queries",
                "40",
                "--bot-queries",
                "10",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    report = out.read_text()
    assert "| synthetic-tiny (600) | index build from tokens (s) |" in report
    assert "**MET** top 10 identical to rank_bm25 up to exact ties: 40/40" in report
    assert "bot start-up to serving" in report
    # Issue 17: the pruned path is timed beside bm25s and checked against exhaustive scoring.
    assert "| query p50, pruned top 10 (ms) |" in report
    assert "| query p50, pruned top 10, numpy traversal (ms) |" in report
    assert "**MET** pruned top 10 identical to exhaustive scoring (ids, scores, order)" in report
    assert "0 mismatches in 80 answers" in report
    # Issue 25: tantivy beside bm25s, from the same texts and the same queries, in one run.
    assert "| bm25s | tantivy | project / rank-bm25 | project / bm25s | project / tantivy |" in (
        report
    )
    for metric in (
        "query p50, pruned top 10 (ms)",
        "query p99, pruned top 10 (ms)",
        "index build from text, saved (s)",
        "on disk, index (MB)",
        "on disk, index + paper store (MB)",
        "RSS after loading the index (MB)",
    ):
        row = next(line for line in report.splitlines() if f"| {metric} |" in line)
        tantivy, to_tantivy = row.split("|")[6], row.split("|")[9]
        assert float(tantivy.replace(",", "")) > 0, row
        assert float(to_tantivy) > 0, row


def test_query_only_benchmark_reports_latency_and_pruning(tmp_path, monkeypatch):
    """Also the run without tantivy installed: it says so and goes on."""
    monkeypatch.setattr(tantivy_engine, "installed", lambda: False)
    out = tmp_path / "report.md"
    args = ["--tiny", "--work", str(tmp_path), "--queries", "20", "--query-only"]
    assert main([*args, "--out", str(out), "--quiet"]) == 0
    report = out.read_text()
    assert "tantivy: not installed (pip install .[bench])" in report
    assert "| query p50, pruned top 10 (ms) |" in report
    assert "0 mismatches in 40 answers" in report
    assert f"pruned rows: {kernel.describe()}" in report
    assert "bot start-up to serving" not in report


def test_parallel_build_is_identical_to_the_serial_build(monkeypatch):
    import bot.search.index.build

    docs = [[f"t{(i * 7 + j) % 50}" for j in range(i % 13)] for i in range(3000)]
    monkeypatch.setattr(bot.search.index.build, "PARALLEL_MIN_DOCS", 100)
    monkeypatch.setattr(bot.search.index.build, "PARALLEL_CHUNK", 500)
    serial = BM25Index.build(docs)
    parallel = BM25Index.build_parallel(docs, list, workers=2)
    assert serial.vocab == parallel.vocab
    for name in ("indptr", "doc_ids", "tfs", "doc_len"):
        assert (getattr(serial, name) == getattr(parallel, name)).all(), name


def test_serving_targets_run_end_to_end_on_a_tiny_corpus(tmp_path):
    """Issue 17's figures from fresh processes: the build, two bots on one index."""
    out = tmp_path / "targets.md"
    argv = ["--tiny", "--work", str(tmp_path), "--targets-only", "--queries", "40"]
    assert main([*argv, "--bot-queries", "10", "--out", str(out), "--quiet"]) == 0
    report = out.read_text()
    for what in (
        "bot memory serving and after 1,000 searches + 200 autocompletes",
        "start-up from the saved index",
        "autocomplete p99",
        "/search full path p50",
        "build from text",
        "build peak memory",
        "a second bot process on the same index adds",
        "the bot serving inside a 512 MB memory cgroup",
    ):
        assert f"| {what}" in report, what
    assert "digest check after it: passed" in report
    contained = next(line for line in report.splitlines() if "memory cgroup" in line)
    # Run where a memory cgroup can be made (root in a container), said why not elsewhere.
    assert "0 OOM kills" in contained or "not run: " in contained, contained


def test_build_only_measures_the_build_from_text(tmp_path):
    """`--build-only`: issue 17's build row alone, in the same fresh process as the targets."""
    out = tmp_path / "build.md"
    assert main(["--tiny", "--work", str(tmp_path), "--build-only", "--out", str(out)]) == 0
    report = out.read_text()
    assert "synthetic-tiny: build from text (parse, tokenise in 2 processes" in report
    assert "peak memory (summed PSS of the build and its workers)" in report


def test_ratios_to_tantivy_are_checked_at_100k_and_1m():
    """Issue 25's targets stated as ratios to tantivy in the same run, from the table's rows."""
    from benchmarks.report import _versus_tantivy
    from benchmarks.run import Result

    rows = {
        "query p50, pruned top 10 (ms)": (0.4, None, 1.0, 1.0),
        "query p99, pruned top 10 (ms)": (0.6, None, 1.0, 1.0),
        "on disk, index (MB)": (400.0, None, None, 300.0),
        "on disk, index + paper store (MB)": (950.0, None, None, 300.0),
        "index build from text, saved (s)": (50.0, None, None, 60.0),
    }
    lines: list[tuple[bool | None, str]] = []
    results = [Result("small", 5_000, rows), Result("100k", 100_000, rows)]
    results.append(Result("1M", 1_000_000, rows))
    _versus_tantivy(results, 100_000, lambda ok, text: lines.append((ok, text)))
    got = [(ok, text.split(": ")[1]) for ok, text in lines]
    assert got == [
        (True, "pruned query p50 at most 1.0 x tantivy"),
        (True, "pruned query p99 at most 1.0 x tantivy"),
        (True, "pruned query p50 at most 0.5 x tantivy"),
        (False, "pruned query p99 at most 0.5 x tantivy"),
        (True, "index on disk at most 1.5 x tantivy"),
        (False, "index + paper store at most 900 MB"),
        (True, "build from text at most 1.0 x tantivy"),
    ]

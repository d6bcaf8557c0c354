"""Issue 26 item 15: the console's peak RSS after 2,000 and after 20,000 distinct queries.

    .venv/bin/python -m benchmarks.query_memory                 # the configured corpus (~7 min)
    .venv/bin/python -m benchmarks.query_memory --papers 100000 # synthetic 100k papers
    .venv/bin/python -m benchmarks.query_memory --corpus FILE --queries 200 2000   # quick

A fresh process loads the saved engine (the first run builds it), opens the token-less
console (`bot.console.repl.Console`, output thrown away) and types `/search` lines into it:
every query distinct, each 1-3 real words from an abstract and two words never seen before
(misspellings, names, an attacker's noise), so every cache keyed by what a user types meets
new keys all the time. After each mark (`--queries`) it prints the peak RSS (`ru_maxrss`) and
the size of every cache keyed by user input next to its bound. The bar: under 10 % growth
from the first mark to the last.

The synthetic corpus is `benchmarks/synth.py`'s (seeded), from ../shared/data/paperlists.
Indexes are built under `--work` (the configured `index_dir` is left alone).
"""

from __future__ import annotations

import argparse
import io
import json
import random
import resource
import subprocess
import sys
from pathlib import Path

from benchmarks.stress import SHARED, WORK, abstract_runs, novel_word, settings_for
from benchmarks.synth import paperlists_corpus
from bot.config import PROJECT_ROOT, load_settings

NOVEL = 2  # never-seen words per query


class Sink(io.TextIOBase):
    """Console output, thrown away (a terminal would not keep it either)."""

    def write(self, text: str) -> int:
        return len(text)


def peak_rss_mb() -> float:
    """The process's peak resident set so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(corpus: Path, index_dir: Path, marks: list[int]) -> dict[str, object]:
    from bot.console.repl import Console
    from bot.search.engine import SearchEngine

    engine = SearchEngine.load(settings_for(corpus, index_dir))
    engine.wait_verified(timeout=600)
    console = Console(engine, Sink(), page_size=5, rng=random.Random(1))
    runs = abstract_runs(engine, max(marks), (1, 3), seed=7)
    loaded = peak_rss_mb()
    out: list[dict[str, object]] = []
    done = 0
    for mark in marks:
        for i in range(done, mark):
            novel = " ".join(novel_word(i * NOVEL + j) for j in range(NOVEL))
            console.handle(f"/search {runs[i]} {novel}")
        done = mark
        out.append({"queries": mark, "peak_mb": peak_rss_mb(), "caches": engine.cache_sizes()})
    console.close()
    return {"loaded_mb": loaded, "marks": out}


def main(argv: list[str] | None = None) -> int:
    if argv is None and sys.argv[1:2] == ["--child"]:
        corpus, index_dir, marks = sys.argv[2], sys.argv[3], sys.argv[4]
        result = child(Path(corpus), Path(index_dir), [int(m) for m in marks.split(",")])
        print(json.dumps(result))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, help="a synthetic corpus of this many papers")
    parser.add_argument("--corpus", type=Path, help="corpus file (default: the configured one)")
    parser.add_argument("--queries", type=int, nargs="+", default=[2_000, 20_000])
    parser.add_argument("--work", type=Path, default=WORK)
    args = parser.parse_args(argv)
    if args.papers:
        corpus = paperlists_corpus(args.papers, args.work / "corpora", SHARED)
        if corpus is None:
            return 1
    else:
        corpus = args.corpus or load_settings(env={}).corpus.files[0]
    index_dir = args.work / "query-memory-index"
    marks = ",".join(str(n) for n in sorted(args.queries))
    command = [sys.executable, "-m", "benchmarks.query_memory", "--child"]
    done = subprocess.run(
        [*command, str(corpus), str(index_dir), marks],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"corpus {corpus.name}; peak RSS after loading {result['loaded_mb']:.1f} MB")
    first = result["marks"][0]["peak_mb"]
    for mark in result["marks"]:
        caches = ", ".join(f"{k} {n:,}/{b:,}" for k, (n, b) in mark["caches"].items())
        print(
            f"after {mark['queries']:>6,} distinct queries: peak RSS {mark['peak_mb']:.1f} MB "
            f"({(mark['peak_mb'] - first) / first:+.1%}); caches (size/bound): {caches}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

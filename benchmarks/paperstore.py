"""The paper store's size on disk and what reading it costs a request (issue 25: records
compressed in blocks). Prints one JSON object:

- `store_mb`: every file of the saved store; `records_mb`: the records and their index
  (records.bin with offsets.npy before, or with blocks.npy and record_at.npy after);
- `/paper` p50/p99: `engine.paper(id)` for distinct random ids (one store read each: the
  paper cache misses, and at 100k papers so does the block cache nearly always);
- search p50/p99: `SearchEngine.search` (snippets included) over the benchmark's queries.

    python -m benchmarks.paperstore --papers 100000 --work benchmarks/.work

The index is built on the first run (not timed) and served from the saved files.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.run import SHARED, make_queries, percentile_ms
from benchmarks.synth import paperlists_corpus
from bot.config import load_settings
from bot.papers.corpus import load_corpus
from bot.search.engine import SearchEngine
from bot.search.files.paperstore import PaperStore

RECORD_FILES = ("records.bin", "offsets.npy", "blocks.npy", "record_at.npy")


def measure(corpus: Path, index_dir: Path, queries: list[str], n_ids: int, seed: int) -> dict:
    settings = load_settings(env={}).with_corpus([corpus])
    settings = replace(settings, corpus=replace(settings.corpus, index_dir=index_dir))
    SearchEngine.load(settings)  # builds and saves once
    engine = SearchEngine.load(settings)  # served from the saved store
    store = engine.papers
    assert isinstance(store, PaperStore)
    files = [f for f in store.folder.iterdir() if f.is_file()]
    rng = random.Random(seed)
    ids = [store.ids[i] for i in rng.sample(range(len(store)), n_ids)]
    paper = []
    for pid in ids:
        t0 = time.perf_counter()
        engine.paper(pid)
        paper.append(time.perf_counter() - t0)
    search = []
    for text in queries:
        t0 = time.perf_counter()
        engine.search(text, limit=10)
        search.append(time.perf_counter() - t0)
    return {
        "papers": len(store),
        "store_mb": round(sum(f.stat().st_size for f in files) / 1e6, 1),
        "records_mb": round(
            sum(f.stat().st_size for f in files if f.name in RECORD_FILES) / 1e6, 1
        ),
        "paper_p50_ms": round(percentile_ms(paper, 50), 3),
        "paper_p99_ms": round(percentile_ms(paper, 99), 3),
        "search_p50_ms": round(percentile_ms(search, 50), 3),
        "search_p99_ms": round(percentile_ms(search, 99), 3),
        "cache_sizes": engine.cache_sizes(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--work", type=Path, default=Path("benchmarks/.work"))
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--ids", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    work = args.work.resolve()
    corpus = paperlists_corpus(args.papers, work / "corpora", args.shared / "paperlists")
    if corpus is None:
        return 1
    real = load_corpus(sorted((args.shared / "paperlists").glob("*.json"))).papers
    half = args.queries // 2
    queries = [text for _kind, text in make_queries(real, half, args.queries - half, args.seed)]
    result = measure(corpus, work / f"store-idx-{args.papers}", queries, args.ids, args.seed)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

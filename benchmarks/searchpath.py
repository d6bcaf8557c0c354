"""`/search` full-path latency on an already-saved index, without building anything.

    .venv/bin/python -m benchmarks.searchpath --index benchmarks/.work/index1m/<key> \\
        --corpus benchmarks/.work/corpora/synth-v1-1000000-seed0.jsonl --compare

The `--targets-only` run measures the same thing (`SearchEngine.search`, snippets on, the
settings' page size, the same 1,000 queries: `benchmarks.run.make_queries` from the paper lists)
but first builds the index from text (~10 min at 1M). This loads a saved index folder (memory-
mapped, as the bot does) and refuses one whose analyzer or BM25 settings differ from today's.

`--compare` also runs every query through the exhaustive path (`exhaustive=True`: every posting
scored, the exact total) in the same process, and checks that both give the same page: ids,
scores, ranks. Both paths are timed alternately, query by query, so the machine's load weighs on
both alike.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.run import EXCLUDE, SHARED, make_queries, percentile_ms
from bot.config import SearchSettings
from bot.papers.corpus import load_corpus
from bot.search.analysis.analyzer import Analyzer
from bot.search.engine import SearchEngine
from bot.search.files.paperstore import PaperStore
from bot.search.index.postings import BM25Index, BM25Params
from bot.search.ranking import kernel


def load_saved(folder: Path, settings: SearchSettings) -> SearchEngine:
    """The engine over a saved index folder; ValueError when it was built with other settings."""
    meta = json.loads((folder / "meta.json").read_text())
    expect = {k: meta[k] for k in ("corpus", "analyzer", "title_weight", "params")}
    today = {
        "analyzer": Analyzer().signature,
        "title_weight": settings.title_weight,
        "params": BM25Params(settings.k1, settings.b, settings.epsilon, settings.idf).saved(),
    }
    differ = {k: (expect[k], v) for k, v in today.items() if expect[k] != v}
    if differ:
        raise ValueError(f"{folder} was built with other settings: {differ}")
    index = BM25Index.load(folder, expect, mmap=True)
    return SearchEngine(PaperStore(folder / "papers", expect), settings=settings, index=index)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, required=True, help="a saved index folder")
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compare", action="store_true", help="also the exhaustive path")
    parser.add_argument(
        "--cold",
        action="store_true",
        help="no warm-up pass (by default every query runs once untimed first, so the index "
        "pages are in the page cache as after the build of a --targets-only run)",
    )
    args = parser.parse_args(argv)
    settings = SearchSettings()
    t0 = time.perf_counter()
    engine = load_saved(args.index, settings)
    loaded = time.perf_counter() - t0
    lists = sorted((args.shared / "paperlists").glob("*.json"))
    real = load_corpus(lists, exclude_status=EXCLUDE).papers
    half = args.queries // 2
    analyzer = engine.analyzer
    texts = [
        text
        for _kind, text in make_queries(real, half, args.queries - half, seed=args.seed)
        if analyzer(text)
    ]
    limit = settings.page_size
    traversal = kernel.describe()
    paths = {"default": False, "exhaustive": True} if args.compare else {"default": False}
    if not args.cold:
        for text in texts:
            for exhaustive in paths.values():
                engine.search(text, limit=limit, **({"exhaustive": True} if exhaustive else {}))
    seconds: dict[str, list[float]] = {name: [] for name in paths}
    mismatches, lower_bounds = [], 0
    for text in texts:
        pages = {}
        for name, exhaustive in paths.items():
            kwargs = {"exhaustive": True} if exhaustive else {}
            t0 = time.perf_counter()
            result = engine.search(text, limit=limit, **kwargs)
            seconds[name].append(time.perf_counter() - t0)
            pages[name] = result
        result = pages["default"]
        lower_bounds += not getattr(result, "total_exact", True)
        if args.compare:
            want = pages["exhaustive"]
            same = [(h.paper.id, h.score, h.rank) for h in result.hits] == [
                (h.paper.id, h.score, h.rank) for h in want.hits
            ]
            exact_ok = (
                result.total == want.total if result.total_exact else (result.total <= want.total)
            )
            if not (same and exact_ok):
                mismatches.append(text)
    print(f"index {args.index} ({len(engine.papers):,} papers) loaded in {loaded:.2f} s")
    print(f"{len(texts)} queries, page size {limit}, snippets on; top-k: {traversal}")
    for name, samples in seconds.items():
        print(
            f"/search {name}: p50 {percentile_ms(samples, 50):.2f} ms, "
            f"p99 {percentile_ms(samples, 99):.1f} ms, mean {np.mean(samples) * 1000:.2f} ms"
        )
    print(f"totals given as a lower bound (N+): {lower_bounds} of {len(texts)}")
    if args.compare:
        print(f"pages different from the exhaustive path: {len(mismatches)} of {len(texts)}")
        for text in mismatches[:10]:
            print(f"  MISMATCH {text!r}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())

"""The grid the [search] ranking defaults were chosen on: the bot alone, TRAIN halves only.

    .venv/bin/python -m benchmarks.ranking_grid [--grid idf=okapi,lucene k1=1.2,1.5 ...]

Every combination of the `--grid` values (any [search] setting) is run over the train half of
every known-item kind and SciFact's train split, reading the data once; one line per
combination with nDCG@10 (and MRR@10, Recall@100 for SciFact). The test halves are never
read here, so choosing on this table keeps them unseen (`benchmarks.known_items --split
test` reports them).
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

from benchmarks.known_items import EXCLUDE, SHARED
from bot.config import SearchSettings
from bot.evaluation.harness import apply_overrides, read_beir, run_queries
from bot.evaluation.knownitem import KINDS, known_item_set
from bot.evaluation.metrics import mean_scores
from bot.papers.corpus import load_file
from bot.papers.records import Paper
from bot.search.analysis.analyzer import Analyzer
from bot.search.engine import SearchEngine


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ranking_grid")
    parser.add_argument("--paperlists", type=Path, default=SHARED / "paperlists")
    parser.add_argument("--beir", type=Path, default=SHARED / "scifact")
    parser.add_argument("--grid", nargs="*", default=["idf=okapi,lucene"])
    args = parser.parse_args(argv)
    papers: list[Paper] = []
    for path in sorted(args.paperlists.glob("*.json")):
        papers += load_file(path, exclude_status=EXCLUDE).papers
    sets = [known_item_set(papers, kind, "train") for kind in KINDS]
    beir = read_beir(args.beir, "train")
    scifact = load_file(beir.corpus, exclude_status=()).papers
    keys = [g.partition("=")[0] for g in args.grid]
    values = [g.partition("=")[2].split(",") for g in args.grid]
    print("| " + " | ".join([*keys, *KINDS, "SciFact nDCG@10 / MRR@10 / R@100"]) + " |")
    print("|" + "---|" * (len(keys) + len(KINDS) + 1))
    for combo in itertools.product(*values):
        pairs = [f"{k}={v}" for k, v in zip(keys, combo, strict=True)]
        settings = apply_overrides(SearchSettings(), pairs)
        engine = SearchEngine(papers, analyzer=Analyzer(), settings=settings)
        cells = []
        for data in sets:
            run = run_queries(engine, data.queries)[0]
            s = mean_scores(run, data.qrels)
            cells.append(f"{s['ndcg@10']:.4f} / {s['mrr@10']:.4f}")
        engine = SearchEngine(scifact, analyzer=Analyzer(), settings=settings)
        s = mean_scores(run_queries(engine, beir.queries)[0], beir.qrels)
        cells.append(f"{s['ndcg@10']:.4f} / {s['mrr@10']:.4f} / {s['recall@100']:.4f}")
        print("| " + " | ".join([*combo, *cells]) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

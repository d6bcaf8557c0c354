"""The "weak matches" notice: its cut on a corpus, its false alarms on known-item title queries,
and what it says on topic queries with and without good matches.

    .venv/bin/python -m benchmarks.weak_matches [--corpus FILE ...] [--split all]

A false alarm is a title query (`bot.evaluation.knownitem`, the paper's own title looking for
it) whose page carries the notice: the paper is there, so the notice must not be. The topic
queries below are a researcher's: `GOOD` have papers about them in the six paper lists (the
notice must stay off), `OFF_TOPIC` have none (it should be on; "graph neural networks
over-smoothing" is issue 27's example). The cut is the engine's own (`bot.search.query.notices`),
derived from the corpus when the first query runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from bot.config import PROJECT_ROOT
from bot.evaluation.knownitem import known_item_set
from bot.papers.corpus import load_file
from bot.search.engine import SearchEngine
from bot.search.query.notices import (
    WEAK_FRACTION,
    WEAK_NOTICE,
    WEAK_PERCENTILE,
    strength,
    weak_cut,
)

GOOD = (
    "optimal transport",
    "diffusion policy",
    "reinforcement learning from human feedback",
    "graph neural networks",
    "contrastive learning",
    "mixup",
    "world models",
    "sinkhorn",
    "language model agents",
    "adversarial examples",
    "variational autoencoder",
    "bayesian optimization",
    "meta learning few shot",
    "neural architecture search",
    "robot manipulation grasping",
    "federated learning privacy",
    "gaussian processes",
    "knowledge distillation",
    "in-context learning",
    "sparse attention long context",
    "offline reinforcement learning",
    "sim-to-real transfer",
    "chain of thought reasoning",
    "differential privacy",
    "causal inference",
)
OFF_TOPIC = (
    "graph neural networks over-smoothing",
    "quantum chromodynamics lattice",
    "protein folding cryo-em",
    "stock market prediction twitter sentiment",
    "covid vaccine trial",
    "earthquake forecasting seismic",
    "medieval poetry meter",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.weak_matches")
    parser.add_argument("--corpus", type=Path, action="append", default=[])
    parser.add_argument("--split", default="all", choices=("train", "test", "all"))
    args = parser.parse_args(argv)
    files = args.corpus or sorted((PROJECT_ROOT.parent / "shared/data/paperlists").glob("*.json"))
    if not files:
        print("no corpus: pass --corpus FILE", file=sys.stderr)
        return 1
    papers = [p for path in files for p in load_file(path).papers]
    engine = SearchEngine(papers)
    started = time.perf_counter()
    cut = weak_cut(engine._parts)
    print(
        f"corpus: {len(papers)} papers; cut {cut:.3f} = {WEAK_FRACTION} x the "
        f"{WEAK_PERCENTILE:g}th percentile of title strengths, "
        f"derived in {(time.perf_counter() - started) * 1000:.0f} ms"
    )
    items = known_item_set(papers, "title", args.split)
    alarms, shown, strengths = 0, 0, []
    for query in items.queries.values():
        result = engine.search(query, limit=1, snippets=False, suggest=False)
        if not result.hits:
            continue
        shown += 1
        strengths.append(strength(engine.index, engine.plan(query), result.hits[0].score))
        alarms += WEAK_NOTICE in result.notices
    low = np.percentile(strengths, [0.5, 1, 5, 50]).round(3).tolist() if strengths else []
    print(
        f"title queries ({args.split}): {alarms}/{shown} flagged weak "
        f"({alarms / max(1, shown):.2%}); strength percentiles 0.5/1/5/50: {low}"
    )
    print("\n| query | best strength | notice |\n|---|---|---|")
    for kind, queries in (("good", GOOD), ("off-topic", OFF_TOPIC)):
        for query in queries:
            result = engine.search(query, limit=1, snippets=False, suggest=False)
            best = result.hits[0].score if result.hits else 0.0
            value = strength(engine.index, engine.plan(query), best)
            weak = WEAK_NOTICE in result.notices
            print(f"| {query} ({kind}) | {value:.3f} | {'weak' if weak else '-'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

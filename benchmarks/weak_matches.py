"""The "weak matches" notice: its cut on a corpus, its false alarms on known-item title queries,
and what it says on topic queries with and without good matches.

    .venv/bin/python -m benchmarks.weak_matches [--corpus FILE ...] [--split all] [--kind title]

A false alarm is a known-item query (`bot.evaluation.knownitem`: the paper's own title by
default, `--kind` repeats, looking for that paper) whose page carries the notice: the paper is
there, so the notice must not be. The topic
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
from bot.evaluation.knownitem import KINDS, known_item_set, split_of
from bot.papers.corpus import load_file
from bot.search.engine import SearchEngine
from bot.search.query.notices import (
    WEAK_FRACTION,
    WEAK_NOTICE,
    WEAK_PERCENTILE,
    plain_scores,
    strength,
)
from bot.search.results import SearchResult

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
    parser.add_argument("--kind", action="append", choices=(*KINDS, "tldr"), help="default: title")
    args = parser.parse_args(argv)
    files = args.corpus or sorted((PROJECT_ROOT.parent / "shared/data/paperlists").glob("*.json"))
    if not files:
        print("no corpus: pass --corpus FILE", file=sys.stderr)
        return 1
    papers = [p for path in files for p in load_file(path).papers]
    engine = SearchEngine(papers)
    started = time.perf_counter()
    found = engine._parts.calibration
    cuts = ", ".join(f"{n} terms {found.cut(n):.3f}" for n in (2, 4, 8, 16, 32))
    print(
        f"corpus: {len(papers)} papers; {found.strengths.shape[0]} calibration queries "
        f"(titles, first sentences) in {(time.perf_counter() - started) * 1000:.0f} ms; cut = "
        f"{WEAK_FRACTION} x the {WEAK_PERCENTILE:g}th percentile of those of about the "
        f"length: {cuts}"
    )
    print(
        "\n| queries | found in the top 10 | flagged weak there (false alarms) "
        "| not found | flagged weak there | strength percentiles 1/5/50 |\n"
        "|---|---|---|---|---|---|"
    )
    for kind in args.kind or ["title"]:
        if kind == "tldr":  # the authors' one-sentence summary (OpenReview venues carry it)
            pairs = [
                (p.id, " ".join(p.tldr.split()))
                for p in papers
                if p.tldr.strip() and args.split in ("all", split_of(p.id))
            ]
        else:
            pairs = list(known_item_set(papers, kind, args.split).queries.items())
        found_n, found_weak, missed_n, missed_weak, strengths = 0, 0, 0, 0, []
        for paper_id, query in pairs:
            result = engine.search(query, limit=10, snippets=False, suggest=False)
            if result.hits:
                strengths.append(best_strength(engine, query, result))
            weak = WEAK_NOTICE in result.notices
            if any(h.paper.id == paper_id for h in result.hits):
                found_n, found_weak = found_n + 1, found_weak + weak
            else:
                missed_n, missed_weak = missed_n + 1, missed_weak + weak
        low = np.percentile(strengths, [1, 5, 50]).round(3).tolist() if strengths else []
        print(
            f"| {kind} ({args.split}, {len(pairs)}) | {found_n} | {found_weak} "
            f"({found_weak / max(1, found_n):.2%}) | {missed_n} | {missed_weak} | {low} |"
        )
    print("\n| query | best strength | notice |\n|---|---|---|")
    for kind, queries in (("good", GOOD), ("off-topic", OFF_TOPIC)):
        for query in queries:
            result = engine.search(query, limit=1, snippets=False, suggest=False)
            value = best_strength(engine, query, result) if result.hits else 0.0
            weak = WEAK_NOTICE in result.notices
            print(f"| {query} ({kind}) | {value:.3f} | {'weak' if weak else '-'} |")
    return 0


def best_strength(engine: SearchEngine, query: str, result: SearchResult) -> float:
    """The strength the engine judged: the hits' plain BM25 (no word-order bonus), as
    `bot.search.query.notices.finish` measures it."""
    plan = engine.plan(query)
    docs = [engine.lookups.find_id(hit.paper.id) for hit in result.hits]
    scores = plain_scores(engine.index, plan, np.array([d for d in docs if d is not None]))
    return strength(engine.index, plan, float(scores.max()) if scores.shape[0] else 0.0)


if __name__ == "__main__":
    raise SystemExit(main())

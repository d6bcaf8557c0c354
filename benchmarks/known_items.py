"""Known-item retrieval on the paper lists: the bot vs rank_bm25 and bm25s, same tokens.

    .venv/bin/python -m benchmarks.known_items [--paperlists DIR] [--split test] [--set KEY=VALUE]

Every library indexes the same token lists — the bot's analyzer over title, abstract and
keywords once (`doc_text(paper, 1)`) — and gets the same query tokens. The bot runs as
`/search` does, with its shipped [search] defaults (title weighted, hyphen weighting, idf
floor, the weak-match cut, the word-order bonus); rank_bm25 is BM25Okapi (k1 1.5, b 0.75,
epsilon 0.25), bm25s its Lucene variant with the same k1 and b. Prints nDCG@10 / MRR@10 /
Recall@100 per set.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from bot.config import PROJECT_ROOT, SearchSettings
from bot.evaluation.harness import apply_overrides, run_queries
from bot.evaluation.knownitem import KINDS, known_item_set
from bot.evaluation.metrics import mean_scores
from bot.papers.corpus import load_file
from bot.search.analysis.analyzer import Analyzer
from bot.search.engine import SearchEngine
from bot.search.parts import doc_text

EXCLUDE = ("Reject", "Withdraw", "Desk Reject")
DEPTH = 100


def _ranked(scores: np.ndarray, ids: list[str]) -> list[str]:
    order = np.lexsort((np.arange(scores.shape[0]), -scores))[:DEPTH]
    return [ids[i] for i in order.tolist() if scores[i] > 0]


def compare(papers, settings: SearchSettings, split: str) -> list[tuple[str, str, dict]]:
    """(set name, system, scores) rows for every known-item kind."""
    import bm25s
    from rank_bm25 import BM25Okapi

    analyzer = Analyzer()
    tokens = [analyzer(doc_text(p, 1)) for p in papers]
    ids = [p.id for p in papers]
    okapi = BM25Okapi(tokens)
    lucene = bm25s.BM25(k1=1.5, b=0.75)
    lucene.index(tokens, show_progress=False)
    engine = SearchEngine(papers, analyzer=analyzer, settings=settings)
    rows = []
    for kind in KINDS:
        data = known_item_set(papers, kind, split)
        runs = {"bot": run_queries(engine, data.queries)[0], "rank_bm25": {}, "bm25s": {}}
        for qid, text in data.queries.items():
            q = analyzer(text)
            runs["rank_bm25"][qid] = _ranked(np.asarray(okapi.get_scores(q)), ids) if q else []
            runs["bm25s"][qid] = _ranked(np.asarray(lucene.get_scores(q)), ids) if q else []
        for system, run in runs.items():
            rows.append(
                (f"{data.name}, n={len(data.queries)}", system, mean_scores(run, data.qrels))
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.known_items")
    parser.add_argument(
        "--paperlists", type=Path, default=PROJECT_ROOT.parent / "shared" / "data" / "paperlists"
    )
    parser.add_argument("--split", default="test", choices=("train", "test", "all"))
    parser.add_argument("--set", action="append", default=[], dest="overrides")
    args = parser.parse_args(argv)
    files = sorted(args.paperlists.glob("*.json"))
    if not files:
        print(f"no paper lists in {args.paperlists}", file=sys.stderr)
        return 1
    papers = []
    for path in files:
        papers += load_file(path, exclude_status=EXCLUDE).papers
    settings = apply_overrides(SearchSettings(), args.overrides)
    print("| set | system | nDCG@10 | MRR@10 | R@100 |")
    print("|---|---|---|---|---|")
    for name, system, s in compare(papers, settings, args.split):
        figures = " | ".join(f"{s[k]:.4f}" for k in ("ndcg@10", "mrr@10", "recall@100"))
        print(f"| {name} | {system} | {figures} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

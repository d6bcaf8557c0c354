"""Known-item retrieval and SciFact: the bot beside bm25s and tantivy, in one run.

    .venv/bin/python -m benchmarks.known_items [--paperlists DIR] [--beir DIR]
        [--split train|test|both] [--kinds title,keywords,...] [--set KEY=VALUE ...] [--merged]

One command prints the whole comparison of docs/search-quality.md: nDCG@10, MRR@10 and
Recall@100 on every known-item kind (title, keywords, first sentence, TL;DR; the train and
test halves of `bot.evaluation.knownitem`) and on SciFact's train split (BEIR; its test split
is held outside this repository). The systems:

- bot: `SearchEngine.search` with the shipped [search] defaults (plus any `--set`), exactly
  as `/search` and `python -m bot eval` run it;
- bm25s: its Lucene BM25 (k1 1.5, b 0.75) over the very same token lists as the bot (the
  bot's analyzer over title + abstract + keywords once, `doc_text(paper, 1)`) and the same
  query tokens, so only the scoring differs;
- tantivy: the Rust engine with its own `en_stem` tokenizer over the same text (BM25, k1 1.2,
  b 0.75, Lucene's idf), the query's words OR-ed as its query parser does.

The sets are built from each list's records as read (`load_file`: 3,477 papers, the versions
of one work in two lists counted twice, which the tables before the versions merge used);
`--merged` reads the lists as the bot serves them (`load_corpus`: versions merged, 3,472).

Tune with `--split train` only; `--split test` (or `both`) is for the final report.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from benchmarks import tantivy_engine
from bot.config import PROJECT_ROOT, SearchSettings
from bot.evaluation.harness import apply_overrides, evaluate, read_beir, run_queries
from bot.evaluation.knownitem import KINDS, known_item_set
from bot.evaluation.metrics import mean_scores
from bot.papers.corpus import load_corpus, load_file
from bot.papers.records import Paper
from bot.search.analysis.analyzer import Analyzer
from bot.search.engine import SearchEngine
from bot.search.parts import doc_text

EXCLUDE = ("Reject", "Withdraw", "Desk Reject")
DEPTH = 100
SHARED = PROJECT_ROOT.parent / "shared" / "data"
Ranker = Callable[[str], list[str]]
Row = tuple[str, str, dict[str, float]]


def _ranked(scores: np.ndarray, ids: Sequence[str]) -> list[str]:
    order = np.lexsort((np.arange(scores.shape[0]), -scores))[:DEPTH]
    return [ids[i] for i in order.tolist() if scores[i] > 0]


def bm25s_ranker(texts: Sequence[str], ids: Sequence[str], analyzer: Analyzer) -> Ranker:
    """bm25s (Lucene BM25, k1 1.5, b 0.75) over the bot's tokens of `texts`."""
    import bm25s

    model = bm25s.BM25(k1=1.5, b=0.75)
    model.index([analyzer(t) for t in texts], show_progress=False)

    def rank(query: str) -> list[str]:
        tokens = analyzer(query)
        return _ranked(np.asarray(model.get_scores(tokens)), ids) if tokens else []

    return rank


def tantivy_ranker(texts: Sequence[str], ids: Sequence[str]) -> Ranker:
    """tantivy (`benchmarks.tantivy_engine`: `en_stem`) over `texts`, in memory."""
    engine = tantivy_engine.build(texts)

    def rank(query: str) -> list[str]:
        return [ids[engine.doc_number(address)] for _score, address in engine.search(query, DEPTH)]

    return rank


def _rows(
    name: str,
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    bot_run: dict[str, list[str]],
    libraries: Mapping[str, Ranker],
) -> list[Row]:
    runs = {"bot": bot_run}
    for system, rank in libraries.items():
        runs[system] = {qid: rank(text) for qid, text in queries.items()}
    label = f"{name}, n={len(queries)}"
    return [(label, system, mean_scores(run, qrels)) for system, run in runs.items()]


def known_item_rows(
    papers: Sequence[Paper], settings: SearchSettings, splits: Sequence[str], kinds: Sequence[str]
) -> list[Row]:
    """Rows for every kind and split over the paper lists."""
    analyzer = Analyzer()
    ids = [p.id for p in papers]
    texts = [doc_text(p, 1) for p in papers]
    libraries = {
        "bm25s": bm25s_ranker(texts, ids, analyzer),
        "tantivy": tantivy_ranker(texts, ids),
    }
    engine = SearchEngine(papers, analyzer=Analyzer(), settings=settings)
    rows: list[Row] = []
    for kind in kinds:
        for split in splits:
            data = known_item_set(papers, kind, split)
            bot_run = run_queries(engine, data.queries)[0]
            rows += _rows(data.name, data.queries, data.qrels, bot_run, libraries)
    return rows


def scifact_rows(folder: Path, settings: SearchSettings, split: str = "train") -> list[Row]:
    """The bot (`python -m bot eval`'s own run) and the libraries on a BEIR collection."""
    report = evaluate(folder, split, settings)
    data = read_beir(folder, split)
    corpus = load_file(data.corpus, exclude_status=()).papers
    ids = [p.id for p in corpus]
    texts = [f"{p.title} {p.abstract}" for p in corpus]
    libraries = {
        "bm25s": bm25s_ranker(texts, ids, Analyzer()),
        "tantivy": tantivy_ranker(texts, ids),
    }
    name = f"{folder.name} ({split})"
    return _rows(name, data.queries, data.qrels, report.per_query, libraries)


def print_table(rows: Sequence[Row]) -> None:
    print("| set | system | nDCG@10 | MRR@10 | R@100 |")
    print("|---|---|---|---|---|")
    for name, system, s in rows:
        figures = " | ".join(f"{s[k]:.4f}" for k in ("ndcg@10", "mrr@10", "recall@100"))
        print(f"| {name} | {system} | {figures} |", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.known_items")
    parser.add_argument("--paperlists", type=Path, default=SHARED / "paperlists")
    parser.add_argument("--beir", type=Path, default=SHARED / "scifact", help="'' to skip")
    parser.add_argument("--beir-split", default="train")
    parser.add_argument("--split", default="both", choices=("train", "test", "both"))
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--set", action="append", default=[], dest="overrides")
    parser.add_argument(
        "--merged", action="store_true", help="versions merged, as the bot serves the lists"
    )
    args = parser.parse_args(argv)
    files = sorted(args.paperlists.glob("*.json"))
    if not files:
        print(f"no paper lists in {args.paperlists}", file=sys.stderr)
        return 1
    if args.merged:
        papers = load_corpus(files, exclude_status=EXCLUDE).papers
    else:
        papers = [p for path in files for p in load_file(path, exclude_status=EXCLUDE).papers]
    settings = apply_overrides(SearchSettings(), args.overrides)
    splits = ("train", "test") if args.split == "both" else (args.split,)
    kinds = [k for k in args.kinds.split(",") if k]
    rows = known_item_rows(papers, settings, splits, kinds)
    if str(args.beir) not in ("", ".") and (args.beir / "corpus.jsonl").is_file():
        rows += scifact_rows(args.beir, settings, args.beir_split)
    print_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How related "more like this" (`/similar`) lists are, on the paper lists' author keywords.

    .venv/bin/python -m benchmarks.similar [--paperlists DIR] [--split train|test|both]

The measure (issue 27): for every accepted paper with at least two author keywords, the share
of its top 5 similar papers that share at least two keywords with it (keywords compared
lower-cased); the mean over those papers. Authors choose keywords to say what a paper is about,
so two shared keywords is a researcher's "related". Papers are split by `knownitem.split_of`:
the field weights of `bot.search.query.similar` were chosen on `train`.

Rows:
- abstract BM25: the whole abstract as the query (every analysed word, weight 1), the baseline
  the issue asks to beat;
- before: the previous /similar (MoreLikeThis's 25 most distinctive terms of the indexed
  text, weight 1 each);
- after: `SearchEngine.similar` as shipped;
- after, keywords held out: the same, built without the paper's own keywords, so the figure
  cannot come from matching the keywords it is scored on.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from benchmarks.known_items import EXCLUDE, SHARED
from bot.config import SearchSettings
from bot.evaluation.knownitem import split_of
from bot.papers.corpus import load_file
from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from bot.search.query.feedback import distinctive_terms
from bot.search.query.similar import similar_query
from bot.search.results import Plan

TOP = 5
LEAST = (2, 1)
Lister = Callable[[Paper, int], list[str]]


def keyword_set(paper: Paper) -> frozenset[str]:
    return frozenset(" ".join(k.lower().split()) for k in paper.keywords if k.strip())


def listers(engine: SearchEngine) -> dict[str, Lister]:
    """Each way of listing the papers like one paper (its position `doc`), as paper ids."""
    index, analyzer, limit = engine.index, engine.analyzer, engine.settings.similar_terms

    def run(plan: Plan) -> list[str]:
        return [h.paper.id for h in engine._run(plan, TOP, 0, snippets=False).hits]

    def abstract(paper: Paper, doc: int) -> list[str]:
        return run(Plan("abstract", tuple(analyzer(paper.abstract)), skip=doc))

    def before(paper: Paper, doc: int) -> list[str]:
        chosen = distinctive_terms(Counter(engine._doc_terms(doc)), index.doc_freq, index.n_docs)
        return run(Plan("before", tuple(t for t, _s in chosen[:25]), skip=doc))

    def after(paper: Paper, doc: int) -> list[str]:
        like = similar_query(paper, analyzer, index.doc_freq, index.n_docs, limit)
        return run(Plan("after", like.terms, like.weights, skip=doc))

    def held_out(paper: Paper, doc: int) -> list[str]:
        return after(replace(paper, keywords=()), doc)

    return {
        "abstract BM25": abstract,
        "before (MoreLikeThis, 25 terms)": before,
        "after": after,
        "after, keywords held out": held_out,
    }


def measure(engine: SearchEngine, split: str) -> dict[str, dict[int, float]]:
    """Per lister, {k: mean share of the top 5 sharing >= k keywords} for k = 1, 2, over the
    papers of `split` with at least two keywords."""
    keywords = {p.id: keyword_set(p) for p in engine.papers}
    sources = [
        (p, d)
        for d, p in enumerate(engine.papers)
        if len(keywords[p.id]) >= 2 and split in ("both", split_of(p.id))
    ]
    out: dict[str, dict[int, float]] = {}
    for name, lister in listers(engine).items():
        totals = dict.fromkeys(LEAST, 0.0)
        for paper, doc in sources:
            shared = [len(keywords[i] & keywords[paper.id]) for i in lister(paper, doc)]
            for least in LEAST:
                totals[least] += sum(n >= least for n in shared) / TOP
        out[name] = {k: v / max(1, len(sources)) for k, v in totals.items()}
    out["papers"] = dict.fromkeys(LEAST, float(len(sources)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.similar")
    parser.add_argument("--paperlists", type=Path, default=SHARED / "paperlists")
    parser.add_argument("--split", default="both", choices=("train", "test", "both"))
    args = parser.parse_args(argv)
    papers: list[Paper] = []
    for path in sorted(args.paperlists.glob("*.json")):
        papers += load_file(path, exclude_status=EXCLUDE).papers
    if not papers:
        print(f"no paper lists in {args.paperlists}", file=sys.stderr)
        return 1
    engine = SearchEngine(papers, settings=SearchSettings())
    splits = ("train", "test") if args.split == "both" else (args.split,)
    results = {split: measure(engine, split) for split in splits}
    heads = [f"{s}: top {TOP} sharing >= {k} keywords" for s in splits for k in LEAST]
    print("| /similar list | " + " | ".join(heads) + " |")
    print("|---|" + "---|" * len(heads))
    for name in results[splits[0]]:
        cells = [f"{results[s][name][k]:.4f}" for s in splits for k in LEAST]
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

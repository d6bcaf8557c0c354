"""For you, measured offline: simulated members from the conference paper lists.

    .venv/bin/python -m benchmarks.foryou [--paperlists DIR] [--speed]

A member is an author. Their earlier papers are their library (what they saved); their later
papers, held out, are what they would want. Every paper of the later lists is "new", and each
system ranks all of them for the member. Reported: MRR@100 and nDCG@10 of the held-out papers,
mean over members (bot.evaluation.metrics, trec_eval's definitions), for

- `follow (best)`: the member's best follow query among those a member could write from their
  library (each saved paper's 3 most distinctive terms, and the library's 3 strongest terms):
  the one that finds most of their own library among the earlier papers (top 100), as a member
  picks the follow that covers what they read;
- `follow (hindsight)`: the same candidates, but each member's best on the held-out papers
  themselves: an upper bound no real follow reaches (it is chosen with the answers);
- `more like this`: BM25 more-like-this of the saved papers (the engine's `/similar` query, the
  25 most distinctive terms of each saved paper, summed into one query);
- `for you`: the profile of `bot.foryou` (Rocchio over BM25 term weights, with the background).

Two splits: ICLR 2018 + NeurIPS 2018 libraries -> ICML 2019 new papers, and 2018/19 libraries ->
AISTATS/COLM/CoRL 2025 new papers. Authors with at least 3 earlier and 2 later papers.

`--speed` builds a synthetic index of 20,000 papers and times one member's profile and the
scoring of 10,000 new papers (best of 20).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from bot.config import SearchSettings
from bot.evaluation.metrics import mrr_at, ndcg_at
from bot.foryou.model import build_profile, score
from bot.papers.corpus import load_file
from bot.papers.records import Paper
from bot.search import SearchEngine
from bot.search.query.feedback import distinctive_terms

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SPLITS = {
    "2018 -> ICML 2019": (("iclr2018", "nips2018"), ("icml2019",)),
    "2018/19 -> 2025": (
        ("iclr2018", "nips2018", "icml2019"),
        ("aistats2025", "colm2025", "corl2025"),
    ),
}
Ranker = Callable[[Sequence[Paper]], np.ndarray]


def members(
    lists: dict[str, Sequence[Paper]], old: Sequence[str], new: Sequence[str]
) -> list[tuple[list[Paper], set[str]]]:
    """(library, held-out ids) per author with >= 3 earlier and >= 2 later papers."""
    earlier: defaultdict[str, list[Paper]] = defaultdict(list)
    later: defaultdict[str, set[str]] = defaultdict(set)
    for name in old:
        for paper in lists[name]:
            for author in paper.authors:
                earlier[author].append(paper)
    for name in new:
        for paper in lists[name]:
            for author in paper.authors:
                later[author].add(paper.id)
    return [
        (earlier[a], later[a])
        for a in sorted(earlier)
        if len(earlier[a]) >= 3 and len(later.get(a, ())) >= 2
    ]


def terms_of(engine: SearchEngine, paper: Paper, count: int) -> list[str]:
    index = engine.index
    counts = Counter(engine.analyzer(f"{paper.title} {paper.abstract}"))
    chosen = distinctive_terms(counts, index.doc_freq, index.n_docs, count)
    return [term for term, _weight in chosen]


def bm25(engine: SearchEngine, terms: Sequence[str], positions: np.ndarray) -> np.ndarray:
    counted = Counter(terms)
    found_ids, found = engine.index.score_docs(
        list(counted), [float(n) for n in counted.values()], positions
    )
    dense = np.zeros(positions.shape[0])
    dense[np.searchsorted(positions, found_ids)] = found
    return dense


def ranked(scores: np.ndarray, ids: Sequence[str]) -> list[str]:
    order = np.lexsort((np.arange(scores.shape[0]), -scores))[:100]
    return [ids[i] for i in order.tolist() if scores[i] > 0]


def evaluate(
    engine: SearchEngine,
    lists: dict[str, Sequence[Paper]],
    splits: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = SPLITS,
) -> None:
    print("| split | members | system | MRR@100 | nDCG@10 |")
    print("|---|---|---|---|---|")
    for split, (old, new) in splits.items():
        people = members(lists, old, new)
        new_papers = [p for name in new for p in lists[name]]
        positions = np.sort(
            np.array([engine.lookups.lookup.find(p.id) for p in new_papers], dtype=np.int32)
        )
        ids = [engine.ids[i] for i in positions.tolist()]
        old_positions = np.sort(
            np.array(
                [engine.lookups.lookup.find(p.id) for name in old for p in lists[name]],
                dtype=np.int32,
            )
        )
        old_ids = [engine.ids[i] for i in old_positions.tolist()]
        totals: defaultdict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        for library, wanted in people:
            judged = dict.fromkeys(wanted, 1)
            queries = [terms_of(engine, p, 3) for p in library]
            whole = build_profile(engine, library).top_terms(3)
            hindsight, chosen, coverage = (0.0, 0.0), (0.0, 0.0), -1
            own = {p.id for p in library}
            for query in [*queries, whole]:
                run = ranked(bm25(engine, query, positions), ids)
                figures = (mrr_at(run, judged, 100), ndcg_at(run, judged, 10))
                hindsight = max(hindsight, figures)
                covered = len(own.intersection(ranked(bm25(engine, query, old_positions), old_ids)))
                if covered > coverage:
                    chosen, coverage = figures, covered
            mlt = [t for p in library for t in terms_of(engine, p, 25)]
            runs = {
                "more like this": ranked(bm25(engine, mlt, positions), ids),
                "for you": ranked(score(engine, build_profile(engine, library), positions), ids),
            }
            for name, figures in (("follow (best)", chosen), ("follow (hindsight)", hindsight)):
                totals[name][0] += figures[0]
                totals[name][1] += figures[1]
            for name, run in runs.items():
                totals[name][0] += mrr_at(run, judged, 100)
                totals[name][1] += ndcg_at(run, judged, 10)
        for name, (mrr, ndcg) in totals.items():
            n = len(people)
            print(f"| {split} | {n} | {name} | {mrr / n:.4f} | {ndcg / n:.4f} |")


def speed(real: Sequence[Paper], size: int = 20_000) -> None:
    """One member's profile and the scoring of 10,000 new papers, over an index of `size`
    synthetic papers recombined from the real ones (`benchmarks.synth`); best of 20 runs."""
    from benchmarks.synth import Source, records

    papers = [
        Paper(
            id=r["id"],
            title=r["title"],
            abstract=r["abstract"],
            venue=r["venue"],
            year=r["year"],
            authors=tuple(r["authors"]),
        )
        for r in records(Source.from_papers(real), size)
    ]
    engine = SearchEngine(papers, settings=SearchSettings())
    library, disliked = real[:40], real[40:50]
    positions = np.arange(size - 10_000, size, dtype=np.int32)
    best_build = best_score = float("inf")
    profile = build_profile(engine, library, disliked)
    for _ in range(20):
        start = time.perf_counter()
        profile = build_profile(engine, library, disliked)
        built = time.perf_counter()
        score(engine, profile, positions)
        done = time.perf_counter()
        best_build = min(best_build, built - start)
        best_score = min(best_score, done - built)
    print(f"index of {size:,} papers; profile of {len(profile.terms)} terms")
    print(f"profile from 40 saved + 10 disliked papers: {best_build * 1000:.1f} ms")
    print(f"scoring 10,000 new papers: {best_score * 1000:.1f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.foryou")
    parser.add_argument(
        "--paperlists", type=Path, default=PROJECT_ROOT.parent / "shared" / "data" / "paperlists"
    )
    parser.add_argument("--speed", action="store_true", help="time the model instead")
    args = parser.parse_args(argv)
    files = sorted(args.paperlists.glob("*.json"))
    if not files:
        print(f"no paper lists in {args.paperlists}", file=sys.stderr)
        return 1
    lists = {path.stem: load_file(path, exclude_status=()).papers for path in files}
    if args.speed:
        speed([p for papers in lists.values() for p in papers])
        return 0
    engine = SearchEngine(
        [p for papers in lists.values() for p in papers], settings=SearchSettings()
    )
    evaluate(engine, lists)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

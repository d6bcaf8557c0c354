"""Phrase queries at 100k or 1M papers: positions with frequent pairs (now), positions alone
(before, index format 5) and format 3's term sequences, same phrases, same process, and the
same documents matched.

    .venv/bin/python -m benchmarks.phrases                  # 100k synthetic papers
    flock /work/bench.lock .venv/bin/python -m benchmarks.phrases --million --phrases 100  # 1M

Phrases are quoted runs of 2-3 non-stopword words from the corpus's abstracts (as in
`benchmarks.stress`). Printed, each as p50/p99/max over the phrases:
- `search`: `SearchEngine.search('"..."', limit=5)`, everything a user waits for (scoring, the
  phrase check, top-k, snippets), with the check through pairs of frequent terms
  (`bot.search.index.pairs`, now), with term positions alone (before) and with format 3's check
  (every candidate's term ids gathered, or one pass over all 4 bytes per token), each phrase
  every way in turn after an untimed pass (no order or warm cache favours one);
- `check`: the phrase check alone, each way;
and whether all checks matched the same documents for every phrase (they must).
The format-3 sequences are rebuilt from the positions for the comparison only; they are not
part of the index any more. The corpus is `benchmarks/synth.py`'s (seeded), under --work, so
`benchmarks.run --million --synth` and this share the 1M file.
"""

from __future__ import annotations

import argparse
import sys
import time
import types
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from benchmarks.stress import SHARED, WORK, abstract_runs, ms, settings_for
from benchmarks.synth import paperlists_corpus
from bot.search.index.pairs import MIN_SHARE, PairIndex
from bot.search.query.phrases import PositionIndex

GATHER = 16  # format 3: gather candidates' sequences below 1/16 of all tokens, else scan


def sequences(index) -> tuple[np.ndarray, np.ndarray]:
    """(forward, starts): format 3's term ids of every document end to end, from positions."""
    starts = np.zeros(index.n_docs + 1, dtype=np.int64)
    np.cumsum(index.doc_len, out=starts[1:])
    forward = np.empty(int(starts[-1]), dtype=np.int32)
    step = 1 << 16
    n_terms = index.indptr.shape[0] - 1
    for a in range(0, n_terms, step):
        b = min(n_terms, a + step)
        lo, hi = int(index.indptr[a]), int(index.indptr[b])
        tfs = np.asarray(index.tfs[lo:hi], dtype=np.int64)
        docs = np.repeat(np.asarray(index.doc_ids[lo:hi], dtype=np.int64), tfs)
        terms = np.repeat(np.arange(a, b, dtype=np.int32), np.diff(index.pos_indptr[a : b + 1]))
        pos = np.asarray(index.positions[index.pos_indptr[a] : index.pos_indptr[b]])
        forward[starts[docs] + pos] = terms
    return forward, starts


def format3_matches(index, forward, starts, docs: np.ndarray, phrase: Sequence[str]):
    """Format 3's `BM25Index.phrase_matches`, as it was (the baseline)."""
    tids = [index.vocab.get(t) for t in phrase]
    keep = np.zeros(docs.shape[0], dtype=bool)
    if not tids or any(t is None for t in tids) or not docs.shape[0]:
        return keep
    n = len(tids)
    at = docs.astype(np.int64)
    first = starts[at]
    counts = np.maximum(starts[at + 1] - first - (n - 1), 0)
    total = int(counts.sum())
    if total * GATHER > forward.shape[0]:
        pos = np.flatnonzero(forward == tids[0])
        pos = pos[pos + n <= forward.shape[0]]
        for j in range(1, n):
            pos = pos[forward[pos + j] == tids[j]]
        doc = np.searchsorted(starts, pos, side="right") - 1
        return np.isin(docs, np.unique(doc[pos + n <= starts[doc + 1]]))
    if not total:
        return keep
    owner = np.repeat(np.arange(docs.shape[0]), counts)
    pos = np.repeat(first - np.cumsum(counts) + counts, counts) + np.arange(total)
    hit = forward[pos] == tids[0]
    for j in range(1, n):
        hit[hit] = forward[pos[hit] + j] == tids[j]
    keep[np.unique(owner[hit])] = True
    return keep


def format3_select(engine, forward, starts):
    """Format 3's `SearchEngine._select`, as it was: every document holding a query word
    scored, filtered, then the candidates' runs checked in the term sequences."""

    def select(self, plan):
        if plan.terms:
            ids, scores = self.index.score([*plan.terms, *plan.extra], plan.weights)
            keep = scores > 0
        else:
            ids = np.arange(self.index.n_docs, dtype=np.int32)
            scores = np.zeros(ids.shape[0], dtype=np.float64)
            keep = np.ones(ids.shape[0], dtype=bool)
        if plan.phrases:  # format 3 checked after the filters: none in these queries
            present = np.zeros(self.index.n_docs, dtype=bool)
            for term in {t for phrase in plan.phrases for t in phrase}:
                present[:] = False
                present[self.index.postings(term)[0]] = True
                keep &= present[ids]
            for phrase in plan.phrases:
                keep[keep] = format3_matches(self.index, forward, starts, ids[keep], phrase)
        return self._narrow(plan, ids, scores, keep)

    return types.MethodType(select, engine)


def interleaved(engine, phrases: list[str], variants: dict[str, Callable[[], None]]):
    """Search latency per variant (each a function that switches the engine to it), each
    phrase run every way in turn, after one untimed pass each: no order or warm cache favours
    one. Every variant must give the same results (checked)."""
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for timed in (False, True):
        for text in phrases:
            results = []
            for name, switch in variants.items():
                switch()
                started = time.perf_counter()
                results.append(engine.search(f'"{text}"', limit=5))
                if timed:
                    samples[name].append(time.perf_counter() - started)
            for other in results[1:]:
                if (other.total, other.hits) != (results[0].total, results[0].hits):
                    raise SystemExit(f"different results for {text!r}: {results}")
    return samples


def line(label: str, samples: list[float]) -> str:
    return (
        f"{label:44s} p50 {ms(samples, 50):7.1f} ms  p99 {ms(samples, 99):7.1f} ms  "
        f"max {max(samples) * 1000:7.1f} ms"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--million", action="store_true", help="1,000,000 papers")
    parser.add_argument("--phrases", type=int, default=500)
    parser.add_argument("--work", type=Path, default=WORK)
    args = parser.parse_args(argv)
    n_papers = 1_000_000 if args.million else args.papers

    from bot.search.engine import SearchEngine

    corpus = paperlists_corpus(n_papers, args.work / "corpora", SHARED)
    if corpus is None:
        return 1
    started = time.perf_counter()
    engine = SearchEngine.load(settings_for(corpus, args.work / "phrase-index"))
    index = engine.index
    print(
        f"corpus: {index.n_docs:,} papers ({corpus.name}), ready in "
        f"{time.perf_counter() - started:.1f} s"
    )
    tokens = int(np.asarray(index.doc_len, dtype=np.int64).sum())
    added = index.positions.nbytes + index.pos_indptr.nbytes
    print(
        f"positions: {index.positions.shape[0]:,} x {index.positions.dtype} + pos_indptr "
        f"= {added / 2**20:.0f} MB on disk (format 3's sequences: {tokens * 4 / 2**20:.0f} MB)"
    )
    pairs = index.pairs
    print(
        f"pairs: {pairs.keys.shape[0]:,} adjacent pairs of {pairs.frequent.shape[0]:,} terms "
        f"held by >= {MIN_SHARE:.0%} of the papers, {pairs.runs.positions.shape[0]:,} "
        f"occurrences = {sum(a.nbytes for a in pairs.arrays().values()) / 2**20:.0f} MB on disk"
    )
    phrases = abstract_runs(engine, args.phrases, (2, 3), seed=11)
    plans = [engine.plan(f'"{text}"', suggest=False) for text in phrases]
    engine.search('"warm up"', limit=5)

    with_pairs = index.phrases
    # Before (index format 5): the same positions, no pairs.
    positions_only = PositionIndex(
        with_pairs.terms, index.doc_len, PairIndex.build(with_pairs.terms, index.doc_len, share=2.0)
    )
    checkers = {"pairs (now)": with_pairs, "positions only (before)": positions_only}
    found: dict[str, list] = {}
    check: dict[str, list[float]] = {}
    for name, checker in checkers.items():
        index.phrases = checker
        for plan in plans:  # untimed: the positions' pages are read once, as in a serving bot
            [index.phrase_docs(p) for p in plan.phrases]
        found[name], check[name] = [], []
        for plan in plans:
            t0 = time.perf_counter()
            found[name].append([index.phrase_docs(p) for p in plan.phrases])
            check[name].append(time.perf_counter() - t0)
    index.phrases = with_pairs

    forward, starts = sequences(index)
    everyone = np.arange(index.n_docs, dtype=np.int32)
    check["term sequences (format 3)"] = []
    same = 0
    for plan, now, before in zip(
        plans, found["pairs (now)"], found["positions only (before)"], strict=True
    ):
        # As format 3 ran it: the candidates hold every term of the phrase.
        old = []
        for phrase in plan.phrases:
            holders = everyone
            for term in set(phrase):
                holders = np.intersect1d(holders, index.postings(term)[0])
            t1 = time.perf_counter()
            old.append(holders[format3_matches(index, forward, starts, holders, phrase)])
            check["term sequences (format 3)"].append(time.perf_counter() - t1)
        same += all(
            np.array_equal(a, b) and np.array_equal(a, c)
            for a, b, c in zip(old, now, before, strict=True)
        )
    new_select = engine._select
    old_select = format3_select(engine, forward, starts)

    def switch(checker, select):
        def to() -> None:
            index.phrases, engine._select = checker, select

        return to

    search = interleaved(
        engine,
        phrases,
        {
            "pairs (now)": switch(with_pairs, new_select),
            "positions only (before)": switch(positions_only, new_select),
            "term sequences (format 3)": switch(with_pairs, old_select),
        },
    )
    switch(with_pairs, new_select)()

    print(f"\n# {len(phrases)} phrase queries at {index.n_docs:,} papers")
    for name, samples in search.items():
        print(line(f"search, {name}", samples))
    for name, samples in check.items():
        print(line(f"check alone, {name}", samples))
    print(f"same documents matched: {same}/{len(plans)} phrases")
    return 0 if same == len(plans) else 1


if __name__ == "__main__":
    sys.exit(main())

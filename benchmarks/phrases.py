"""Phrase queries at 100k or 1M papers: term positions (now) against format 3's term sequences
(before), same phrases, same process, and the same documents matched.

    .venv/bin/python -m benchmarks.phrases                  # 100k synthetic papers
    flock /work/bench.lock .venv/bin/python -m benchmarks.phrases --million   # 1M (long)

Phrases are quoted runs of 2-3 non-stopword words from the corpus's abstracts (as in
`benchmarks.stress`). Printed, each as p50/p99/max over the phrases:
- `search`: `SearchEngine.search('"..."', limit=5)`, everything a user waits for (scoring, the
  phrase check, top-k, snippets), with the positional check (now) and with format 3's check
  (before: every candidate's term ids gathered, or one pass over all 4 bytes per token),
  each phrase both ways in turn after an untimed pass (no order or warm cache favours one);
- `check`: the phrase check alone, now and before;
and whether both checks matched the same documents for every phrase (they must).
The format-3 sequences are rebuilt from the positions for the comparison only; they are not
part of the index any more. The corpus is `benchmarks/synth.py`'s (seeded), under --work, so
`benchmarks.run --million --synth` and this share the 1M file.
"""

from __future__ import annotations

import argparse
import sys
import time
import types
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks.stress import SHARED, WORK, abstract_runs, ms, settings_for
from benchmarks.synth import paperlists_corpus

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


def interleaved(engine, phrases: list[str], old_select) -> tuple[list[float], list[float]]:
    """Search latency now and with format 3's selection (before), each phrase run both ways
    in turn, after one untimed pass each: no order or warm cache favours either. Both
    selections must give the same results (checked)."""
    new_select = engine._select
    samples: dict[bool, list[float]] = {True: [], False: []}
    for timed in (False, True):
        for text in phrases:
            results = []
            for is_new, select in ((True, new_select), (False, old_select)):
                engine._select = select
                started = time.perf_counter()
                results.append(engine.search(f'"{text}"', limit=5))
                if timed:
                    samples[is_new].append(time.perf_counter() - started)
            now, before = results
            if (now.total, now.hits) != (before.total, before.hits):
                raise SystemExit(f"different results for {text!r}: {now} vs {before}")
    engine._select = new_select
    return samples[True], samples[False]


def line(label: str, samples: list[float]) -> str:
    return (
        f"{label:34s} p50 {ms(samples, 50):7.1f} ms  p99 {ms(samples, 99):7.1f} ms  "
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
    phrases = abstract_runs(engine, args.phrases, (2, 3), seed=11)
    plans = [engine.plan(f'"{text}"', suggest=False) for text in phrases]
    engine.search('"warm up"', limit=5)

    for plan in plans:  # untimed: the positions' pages are read once, as in a serving bot
        [index.phrase_docs(p) for p in plan.phrases]
    check_now = []
    found_now = []
    for plan in plans:
        t0 = time.perf_counter()
        found_now.append([index.phrase_docs(p) for p in plan.phrases])
        check_now.append(time.perf_counter() - t0)

    forward, starts = sequences(index)
    everyone = np.arange(index.n_docs, dtype=np.int32)
    check_before = []
    same = 0
    for plan, found in zip(plans, found_now, strict=True):
        # As format 3 ran it: the candidates hold every term of the phrase.
        old = []
        for phrase in plan.phrases:
            holders = everyone
            for term in set(phrase):
                holders = np.intersect1d(holders, index.postings(term)[0])
            t1 = time.perf_counter()
            old.append(holders[format3_matches(index, forward, starts, holders, phrase)])
            check_before.append(time.perf_counter() - t1)
        same += all(np.array_equal(a, b) for a, b in zip(old, found, strict=True))
    now, before = interleaved(engine, phrases, format3_select(engine, forward, starts))

    print(f"\n# {len(phrases)} phrase queries at {index.n_docs:,} papers")
    print(line("search, positions (now)", now))
    print(line("search, term sequences (before)", before))
    print(line("check alone, positions (now)", check_now))
    print(line("check alone, term sequences (before)", check_before))
    print(f"same documents matched: {same}/{len(plans)} phrases")
    return 0 if same == len(plans) else 1


if __name__ == "__main__":
    sys.exit(main())

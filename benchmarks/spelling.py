"""Did-you-mean lookup time and hit rate on a corpus's vocabulary, vs the scalar scan it replaced.

    .venv/bin/python -m benchmarks.spelling [--corpus FILE] [--typos 400] [--pad-to 200000]

Typos are made from frequent written words of the corpus (seeded): one or two edits (drop,
swap, replace, insert) at a word's start, middle or end. For each, `Speller.correct` is timed
(distance-1 and distance-2 paths as the bot runs them, caches cleared) and counted as a hit
when it returns the word the typo was made from (or another word as close). The baseline in the
same run is a plain Python Damerau-Levenshtein scan over the same lexicon (the way a
non-vectorised corrector compares every term). `--pad-to` adds random letter strings with the
vocabulary's length distribution up to the lexicon's cap, to time the worst case a very large
vocabulary can reach (the lexicon never holds more than `LEXICON_TERMS` terms).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from bot.config import PROJECT_ROOT
from bot.papers.corpus import load_file
from bot.search.engine import SearchEngine
from bot.search.suggest.spelling import MAX_EDITS, Lexicon, Speller, edit_distance

LETTERS = "etaoinshrdlcumwfgypbvkjxqz"


def typo(word: str, edits: int, where: str, rng: random.Random) -> str:
    """`word` with `edits` edits near its start, middle or end."""
    out = word
    for _ in range(edits):
        n = len(out)
        centre = {"start": 1, "middle": n // 2, "end": n - 2}[where]
        i = max(0, min(n - 2, centre + rng.randint(-1, 1)))
        kind = rng.choice(("drop", "swap", "replace", "insert"))
        if kind == "drop":
            out = out[:i] + out[i + 1 :]
        elif kind == "swap":
            out = out[:i] + out[i + 1] + out[i] + out[i + 2 :]
        elif kind == "replace":
            out = out[:i] + rng.choice(LETTERS.replace(out[i], "")) + out[i + 1 :]
        else:
            out = out[:i] + rng.choice(LETTERS) + out[i:]
    return out


def padded(lexicon: Lexicon, size: int, rng: random.Random) -> Lexicon:
    """The lexicon with random strings appended (df 2) up to `size` terms."""
    extra = size - len(lexicon.words)
    if extra <= 0:
        return lexicon
    lengths = rng.choices(lexicon.lengths.tolist(), k=extra)
    words = ["".join(rng.choices(LETTERS, k=n)) for n in lengths]
    matrix = np.zeros((extra, lexicon.terms.shape[1]), dtype=np.uint8)
    for row, w in enumerate(words):
        matrix[row, : len(w)] = np.frombuffer(w.encode(), dtype=np.uint8)
    return Lexicon(
        np.vstack([lexicon.terms, matrix]),
        np.concatenate([lexicon.lengths, np.array(lengths, dtype=np.int16)]),
        np.concatenate([lexicon.df, np.full(extra, 2, dtype=np.int64)]),
        lexicon.words + tuple(words),
    )


def scalar_near(lexicon: Lexicon, word: str) -> list[str]:
    """The baseline: every term of a plausible length compared in Python."""
    return [
        t
        for t in lexicon.words
        if abs(len(t) - len(word)) <= MAX_EDITS and edit_distance(word, t, MAX_EDITS) <= MAX_EDITS
    ]


def percentiles(values: list[float]) -> str:
    q = statistics.quantiles(values, n=100)
    return f"p50 {q[49] * 1000:.2f} ms, p99 {q[98] * 1000:.2f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.spelling")
    parser.add_argument("--corpus", type=Path, action="append", default=[])
    parser.add_argument("--typos", type=int, default=400)
    parser.add_argument("--pad-to", type=int, default=0)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args(argv)
    files = args.corpus or sorted((PROJECT_ROOT.parent / "shared/data/paperlists").glob("*.json"))
    if not files:
        print("no corpus: pass --corpus FILE", file=sys.stderr)
        return 1
    rng = random.Random(args.seed)
    started = time.perf_counter()
    papers = [p for path in files for p in load_file(path).papers]
    engine = SearchEngine(papers)
    print(
        f"corpus: {len(papers)} papers, {len(engine.index.vocab)} terms, "
        f"built in {time.perf_counter() - started:.1f} s"
    )
    speller: Speller = engine.speller
    started = time.perf_counter()
    lexicon = speller.lexicon
    print(
        f"lexicon: {len(lexicon.words)} terms (df >= 2), built in "
        f"{time.perf_counter() - started:.2f} s, matrix {lexicon.terms.nbytes / 1e6:.1f} MB"
    )
    # Frequent written words: the words of a sample of abstracts, most documents first.
    counts: Counter[str] = Counter()
    for paper in rng.sample(papers, min(2000, len(papers))):
        counts.update({w for w in paper.abstract.lower().split() if w.isalpha() and len(w) >= 7})
    words = [w for w, _n in counts.most_common(3000) if speller.known(w)]
    cases = []
    for _ in range(args.typos):
        word = rng.choice(words)
        edits, where = rng.choice((1, 2)), rng.choice(("start", "middle", "end"))
        wrong = typo(word, edits, where, rng)
        if edit_distance(wrong, word, 2) == edits and not speller.known(wrong):
            cases.append((word, wrong, edits, where))
    times: dict[str, list[float]] = {}
    hits: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    for word, wrong, edits, where in cases:
        speller._cache.clear()
        t0 = time.perf_counter()
        found = speller.correct(wrong)
        times.setdefault(f"distance {edits}", []).append(time.perf_counter() - t0)
        key = f"distance {edits}, {where}"
        totals[key] += 1
        stem = engine.analyzer.stem_word
        if found is not None and (
            stem(found) == stem(word) or edit_distance(wrong, found, 2) <= edits
        ):
            hits[key] += 1
    print(f"\n{len(cases)} typos of frequent words (seed {args.seed})\n")
    print("| typo | found the word (its stem) or one as close | time |")
    print("|---|---|---|")
    for key in sorted(totals):
        print(f"| {key} | {hits[key]}/{totals[key]} | |")
    for key, values in sorted(times.items()):
        print(f"| {key}, whole `correct` | | {percentiles(values)} |")
    sizes = [lexicon]
    if args.pad_to:
        sizes.append(padded(lexicon, args.pad_to, rng))
    sample = [wrong for _w, wrong, _e, _where in cases[:60]]
    print("\n| lexicon terms | vectorised `near` | scalar scan (baseline) |")
    print("|---|---|---|")
    for lex in sizes:
        fast, slow = [], []
        for wrong in sample:
            t0 = time.perf_counter()
            lex.near(wrong)
            fast.append(time.perf_counter() - t0)
        for wrong in sample[:20]:
            t0 = time.perf_counter()
            scalar_near(lex, wrong)
            slow.append(time.perf_counter() - t0)
        print(f"| {len(lex.words)} | {percentiles(fast)} | {percentiles(slow)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Did-you-mean: precision and recall on typos of a corpus's words and author names and on
correct queries, and the lookup time on its vocabulary vs the scalar scan it replaced.

    .venv/bin/python -m benchmarks.spelling [--corpus FILE] [--typos 400] [--pad-to 200000]
    .venv/bin/python -m benchmarks.spelling --quality-only   # precision and recall alone

Precision and recall (`quality_report`) are measured on whole queries as `/search`
runs them. Timing:
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
import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bot.config import PROJECT_ROOT
from bot.evaluation.knownitem import query_for
from bot.papers.corpus import load_file
from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from bot.search.suggest.spelling import MAX_EDITS, RARE_DF, Lexicon, Speller, edit_distance

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


def any_typo(word: str, edits: int, rng: random.Random) -> str:
    """`word` with `edits` edits anywhere but its first letter (people rarely miss it)."""
    return typo(word, edits, rng.choice(("start", "middle", "end")), rng)


@dataclass
class Tally:
    """Suggestions made on one set of queries: right, wrong, and none."""

    right: int = 0
    wrong: int = 0
    silent: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, query: str, found: str | None, ok: bool) -> None:
        if found is None:
            self.silent += 1
        elif ok:
            self.right += 1
        else:
            self.wrong += 1
            if len(self.examples) < 6:
                self.examples.append(f"{query!r} -> {found!r}")

    @property
    def total(self) -> int:
        return self.right + self.wrong + self.silent


def typo_sets(
    engine: SearchEngine, papers: list[Paper], rng: random.Random, n: int
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(word typos, author typos), each (query, what it should have been).

    Word typos: one or two edits (drop, swap, replace, insert) of words papers write often
    (in more than `RARE_DF` papers, five letters or more), alone or beside another such word;
    a typo that is itself a word papers use often, or a name the author index knows, is a
    word, not a typo, and is left out. Author typos: `author:"First Last"` of a listed name,
    one edit in a word of four letters or fewer, one or two in longer ones; a typo that still
    matches an author is left out."""
    speller, authors = engine.speller, engine.lookups.authors
    counts: Counter[str] = Counter()
    for paper in rng.sample(papers, min(2000, len(papers))):
        text = f"{paper.title} {paper.abstract}".lower()
        counts.update({w for w in re.findall(r"[a-z]+", text) if len(w) >= 5})
    words = [w for w, _n in counts.most_common(4000) if speller.seen_in(w) > RARE_DF]
    word_cases: list[tuple[str, str]] = []
    while len(word_cases) < n:
        word, edits = rng.choice(words), rng.choice((1, 1, 2))
        wrong = any_typo(word, edits, rng)
        if (
            edit_distance(wrong, word, 2) != edits
            or speller.seen_in(wrong) > RARE_DF
            or wrong in authors.by_word
        ):
            continue
        if rng.random() < 0.5:
            word_cases.append((wrong, word))
        else:
            other = rng.choice(words)
            word_cases.append((f"{other} {wrong}", f"{other} {word}"))
    names = [
        i
        for i, w in enumerate(authors.words)
        if len(w) >= 2 and all(x.isascii() and x.isalpha() and len(x) >= 3 for x in w)
    ]
    author_cases: list[tuple[str, str]] = []
    while len(author_cases) < n:
        pos = rng.choice(names)
        listed = list(authors.words[pos])
        at = rng.randrange(len(listed))
        edits = 1 if len(listed[at]) <= 4 else rng.choice((1, 2))
        listed[at] = any_typo(listed[at], edits, rng)
        wrong = " ".join(listed)
        if edit_distance(wrong, " ".join(authors.words[pos]), 2) != edits:
            continue
        if authors.matching_names(wrong):
            continue
        author_cases.append((f'author:"{wrong}"', authors.names[pos]))
    return word_cases, author_cases


def correct_sets(
    engine: SearchEngine, papers: list[Paper], rng: random.Random, n: int
) -> dict[str, list[str]]:
    """Queries that must get no suggestion: titles, words papers use, author names."""
    authors = engine.lookups.authors
    titled = [p for p in papers if not p.title_derived]
    names = [authors.names[i] for i in rng.sample(range(len(authors.names)), n)]
    return {
        "paper titles": [query_for(p, "title") for p in rng.sample(titled, n)],
        'author:"name"': [f'author:"{name}"' for name in names],
        "author names as words": names,
    }


def quality_report(engine: SearchEngine, papers: list[Paper], seed: int, n: int = 300) -> str:
    """Precision (right suggestions / all suggestions, a needless one on a correct query
    counting against it) and recall (right suggestions / typos) of did-you-mean."""
    rng = random.Random(seed)
    word_cases, author_cases = typo_sets(engine, papers, rng, n)
    stem = engine.analyzer.stem_word
    tallies: dict[str, Tally] = {}
    for name, cases in (("word typos", word_cases), ("author typos", author_cases)):
        tally = tallies[name] = Tally()
        for wrong, meant in cases:
            found = engine.plan(wrong, suggest=True).suggestion
            if name == "author typos":
                value = (found or "").removeprefix("author:").strip('"')
                matched = engine.lookups.authors.matching_names(value) if value else []
                ok = any(engine.lookups.authors.names[i] == meant for i in matched)
            else:
                ok = found is not None and [stem(w) for w in found.split()] == [
                    stem(w) for w in meant.split()
                ]
            tally.add(wrong, found, ok)
    for name, queries in correct_sets(engine, papers, rng, n).items():
        tally = tallies[f"correct: {name}"] = Tally()
        for query in queries:
            tally.add(query, engine.plan(query, suggest=True).suggestion, False)
    right = sum(t.right for t in tallies.values())
    made = sum(t.right + t.wrong for t in tallies.values())
    typos = len(word_cases) + len(author_cases)
    lines = [
        f"\ndid-you-mean on {typos} typos and {n * 3} correct queries (seed {seed})\n",
        "| set | queries | right | wrong or needless | none |",
        "|---|---|---|---|---|",
    ]
    for name, t in tallies.items():
        lines.append(f"| {name} | {t.total} | {t.right} | {t.wrong} | {t.silent} |")
    lines.append(
        f"\nprecision {right / max(1, made):.3f} ({right}/{made}), "
        f"recall {right / max(1, typos):.3f} ({right}/{typos})"
    )
    for name, t in tallies.items():
        if t.examples:
            lines.append(f"{name}, wrong: " + "; ".join(t.examples))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.spelling")
    parser.add_argument("--corpus", type=Path, action="append", default=[])
    parser.add_argument("--typos", type=int, default=400)
    parser.add_argument("--pad-to", type=int, default=0)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--quality-only", action="store_true")
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
    print(quality_report(engine, papers, args.seed))
    if args.quality_only:
        return 0
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

"""Issue 12 items 15 and 16 at 100k papers: memory over many distinct queries, phrase latency.

    .venv/bin/python -m benchmarks.stress                       # 100k papers, 20,000 queries
    .venv/bin/python -m benchmarks.stress --papers 2000 --queries 2000 --warmup 200  # quick

Each figure is printed next to a baseline measured in the same run:
- **RSS over distinct queries** (item 15): a fresh process loads the saved engine, runs
  `--warmup` distinct searches, then `--queries` more, every one with real words and ten
  words never seen before (as an attacker or a long-running bot would), and reports RSS every
  5,000. The baseline is the same run with the stem cache unbounded (what the bot did before).
- **Phrase queries** (item 16): p50/p99 of `SearchEngine.search` over `--phrases` quoted runs of
  2-3 words from real abstracts; the baseline checks every candidate by analysing its text
  again (what the bot did before), on the first `--baseline-phrases` only: each costs seconds.

The synthetic corpus is `benchmarks/synth.py`'s (seeded), from ../shared/data/paperlists.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import re
import subprocess
import sys
import time
import types
from dataclasses import replace
from pathlib import Path

import numpy as np

from benchmarks.synth import paperlists_corpus
from bot.config import PROJECT_ROOT, Settings

SHARED = PROJECT_ROOT.parent / "shared" / "data" / "paperlists"
WORK = PROJECT_ROOT / "benchmarks" / ".work"
_WORD = re.compile(r"[A-Za-z]{3,}")
NOVEL = 10  # never-seen words per query: 20,000 queries bring 200,000 new words


def rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def settings_for(corpus: Path, index_dir: Path) -> Settings:
    base = Settings().with_corpus([corpus])
    return replace(base, corpus=replace(base.corpus, index_dir=index_dir))


def abstract_runs(engine, n: int, size: tuple[int, int], seed: int) -> list[str]:
    """`n` runs of consecutive non-stopword words from the corpus's abstracts."""
    rng = random.Random(seed)
    stop = engine.analyzer.stopwords
    out: list[str] = []
    while len(out) < n:
        paper = engine.papers[rng.randrange(len(engine.papers))]
        words = [w for w in _WORD.findall(paper.abstract) if w.lower() not in stop]
        k = rng.randint(*size)
        if len(words) < k:
            continue
        start = rng.randrange(len(words) - k + 1)
        out.append(" ".join(words[start : start + k]))
    return out


def novel_word(i: int) -> str:
    """A made-up word, different for every i (letters only, so the analyzer keeps it)."""
    letters = []
    i += 26**3
    while i:
        i, r = divmod(i, 26)
        letters.append(chr(97 + r))
    return "zq" + "".join(letters)


def child_memory(corpus: Path, index_dir: Path, warmup: int, queries: int, unbounded: bool) -> dict:
    from bot.search.engine import SearchEngine
    from bot.search.results import SearchError

    engine = SearchEngine.load(settings_for(corpus, index_dir))
    if unbounded:
        engine.analyzer._cache.size = 10**12  # the baseline: every word ever seen is kept
    words = abstract_runs(engine, warmup + queries, (1, 3), seed=7)

    def run(start: int, stop: int) -> None:
        for i in range(start, stop):
            novel = " ".join(novel_word(i * NOVEL + j) for j in range(NOVEL))
            with contextlib.suppress(SearchError):  # a query of stopwords only
                engine.search(f"{words[i]} {novel}", limit=5)

    run(0, warmup)
    marks = [(0, rss_mb())]
    step = 5000
    for start in range(warmup, warmup + queries, step):
        stop = min(start + step, warmup + queries)
        run(start, stop)
        marks.append((stop - warmup, rss_mb()))
    return {"marks": marks, "cache": len(engine.analyzer._cache)}


def memory(corpus: Path, index_dir: Path, warmup: int, queries: int, unbounded: bool) -> dict:
    args = [
        sys.executable,
        "-m",
        "benchmarks.stress",
        "--child-memory",
        str(corpus),
        str(index_dir),
        str(warmup),
        str(queries),
        "1" if unbounded else "0",
    ]
    done = subprocess.run(args, cwd=PROJECT_ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def reanalysing_every_candidate(engine, phrases):
    """The phrase check as it was before issue 12 (as `SearchEngine._phrase_docs`): every
    document holding the phrases' words has its text analysed again."""
    from bot.search.parts import doc_text

    ids = np.arange(engine.index.n_docs, dtype=np.int32)
    keep = np.ones(ids.shape[0], dtype=bool)
    for term in {t for phrase in phrases for t in phrase}:
        keep &= np.isin(ids, engine.index.postings(term)[0])
    for j in np.flatnonzero(keep):
        tokens = engine.analyzer(doc_text(engine.papers[int(ids[j])]))
        keep[j] = all(
            any(tuple(tokens[i : i + len(p)]) == p for i in range(len(tokens) - len(p) + 1))
            for p in phrases
        )
    return ids[keep]


def phrase_latency(engine, phrases: list[str]) -> list[float]:
    samples = []
    for text in phrases:
        started = time.perf_counter()
        engine.search(f'"{text}"', limit=5)
        samples.append(time.perf_counter() - started)
    return samples


def ms(samples: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples) * 1000, q))


def main(argv: list[str] | None = None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--child-memory":
        corpus, index_dir, warmup, queries, unbounded = sys.argv[2:7]
        result = child_memory(
            Path(corpus), Path(index_dir), int(warmup), int(queries), unbounded == "1"
        )
        print(json.dumps(result))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--warmup", type=int, default=2_000)
    parser.add_argument("--phrases", type=int, default=500)
    parser.add_argument("--baseline-phrases", type=int, default=20)
    parser.add_argument("--work", type=Path, default=WORK)
    parser.add_argument("--no-memory", action="store_true", help="phrase latency only")
    args = parser.parse_args(argv)

    from bot.search.engine import SearchEngine

    corpus = paperlists_corpus(args.papers, args.work / "corpora", SHARED)
    if corpus is None:
        return 1
    index_dir = args.work / "stress-index"
    started = time.perf_counter()
    engine = SearchEngine.load(settings_for(corpus, index_dir))
    print(
        f"corpus: {len(engine.papers):,} papers ({corpus.name}), ready in "
        f"{time.perf_counter() - started:.1f} s"
    )

    memory_runs = (
        ()
        if args.no_memory
        else (("bounded stem cache (now)", False), ("unbounded (before)", True))
    )
    if memory_runs:
        print(f"\n# RSS over {args.queries:,} distinct queries after {args.warmup:,} of warm-up")
    for label, unbounded in memory_runs:
        result = memory(corpus, index_dir, args.warmup, args.queries, unbounded)
        marks = result["marks"]
        first, last = marks[0][1], marks[-1][1]
        trail = ", ".join(f"{n:,}: {mb:.0f}" for n, mb in marks)
        print(
            f"{label:26s} RSS MB after warm-up {first:.0f} -> {last:.0f} "
            f"({(last - first) / first:+.1%}); stem cache {result['cache']:,} words; [{trail}]"
        )

    print(f"\n# Phrase queries at {len(engine.papers):,} papers")
    phrases = abstract_runs(engine, args.phrases, (2, 3), seed=11)
    engine.search('"warm up"', limit=5)
    now = phrase_latency(engine, phrases)
    print(
        f"term positions in the index (now): p50 {ms(now, 50):.1f} ms, p99 {ms(now, 99):.1f} ms, "
        f"max {max(now) * 1000:.1f} ms over {len(now)} phrases"
    )
    few = phrases[: args.baseline_phrases]
    now_few = phrase_latency(engine, few)
    engine._phrase_docs = types.MethodType(reanalysing_every_candidate, engine)
    before = phrase_latency(engine, few)
    print(
        f"same first {len(few)} phrases: now p50 {ms(now_few, 50):.1f} ms / p99 "
        f"{ms(now_few, 99):.1f} ms; every candidate re-analysed (before) p50 "
        f"{ms(before, 50):.1f} ms / p99 {ms(before, 99):.1f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

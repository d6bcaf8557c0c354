"""The project's saved index against tantivy's on one synthetic corpus, for docs/decisions.md:
size on disk, build time, query latency, and what adding papers costs.

Two halves, each in its own environment (tantivy goes in a throwaway venv, never the project's):

    cd /work/main
    .venv/bin/python -m benchmarks.synth --papers 100000 --out /tmp/eng/synth-100000.jsonl
    .venv/bin/python -m benchmarks.decisions.engine_vs_tantivy project /tmp/eng/synth-100000.jsonl
    python3 -m venv /tmp/tv && /tmp/tv/bin/pip install tantivy
    /tmp/tv/bin/python -m benchmarks.decisions.engine_vs_tantivy tantivy /tmp/eng/synth-100000.jsonl

`project` builds the bot's saved index from text (`SearchEngine.load` with an empty index folder:
parse, tokenise in 2 forked processes, build, save), sizes its files (postings and the rest of
the index apart from the paper store), times `engine.search(q, 10, snippets=False,
suggest=False)` over the queries, and writes the queries next to the corpus. `tantivy` indexes
the same papers (title and abstract with tantivy's `en_stem` tokenizer and positions; once
without stored fields, once storing every field of the record, as the paper store does), times
`parse_query` + `search(q, 10)` over the same queries, and times adding 1,000 more papers with
one commit. Queries: 1,000 titles and 1,000 runs of 1-5 consecutive words from abstracts of
random papers (seed 0), letters and digits only, so both query languages read them as plain
words (tantivy ORs them, as BM25 over the bag of words does).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

WORD = re.compile(r"[A-Za-z0-9]+")


def folder_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


def read_corpus(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def make_queries(records: list[dict], n: int = 2000, seed: int = 0) -> list[str]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        paper = rnd.choice(records)
        if i % 2 == 0:
            words = WORD.findall(paper["title"])
        else:
            text = WORD.findall(paper.get("abstract") or paper["title"])
            size = rnd.randint(1, 5)
            at = rnd.randrange(max(1, len(text) - size + 1))
            words = text[at : at + size]
        if words:
            out.append(" ".join(words))
    return out


def latency(run, queries: list[str]) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    for q in queries[:100]:  # untimed warm-up pass over a few
        run(q)
    times = []
    for q in queries:
        t0 = time.perf_counter()
        run(q)
        times.append(time.perf_counter() - t0)
    times.sort()
    return statistics.median(times) * 1000, times[int(0.99 * (len(times) - 1))] * 1000


def project(corpus: Path, work: Path, reuse: bool = False) -> None:
    from dataclasses import replace

    from bot.config import Settings
    from bot.search import EmptyQuery, SearchEngine

    index_dir = work / "project-index"
    if not reuse:
        shutil.rmtree(index_dir, ignore_errors=True)
    settings = Settings().with_corpus([corpus])
    settings = replace(settings, corpus=replace(settings.corpus, index_dir=index_dir))
    t0 = time.perf_counter()
    engine = SearchEngine.load(settings)
    build = time.perf_counter() - t0
    engine.wait_verified()
    records = read_corpus(corpus)
    queries = make_queries(records)
    (work / "queries.json").write_text(json.dumps(queries))
    print(f"project: {len(records):,} papers, corpus file {corpus.stat().st_size / 2**20:.0f} MB")
    what = (
        "load of the saved index (--reuse)"
        if reuse
        else "build from text (SearchEngine.load, empty index folder)"
    )
    print(f"  {what}: {build:.1f} s")
    print(f"  saved folder: {folder_mb(index_dir):.1f} MB")
    for sub in sorted(p for p in index_dir.rglob("*") if p.is_dir()):
        files = sorted((p for p in sub.iterdir() if p.is_file()), key=lambda p: -p.stat().st_size)
        if files:
            biggest = ", ".join(f"{p.name} {p.stat().st_size / 2**20:.1f}" for p in files[:6])
            print(f"    {sub.relative_to(index_dir)}: {folder_mb(sub):.1f} MB ({biggest} ...)")

    def run(q: str) -> None:
        with contextlib.suppress(EmptyQuery):  # only very common words: the bot says so
            engine.search(q, 10, snippets=False, suggest=False)

    p50, p99 = latency(run, queries)
    print(
        f"  engine.search(q, 10, snippets=False, suggest=False), {len(queries)} queries: "
        f"p50 {p50:.3f} ms, p99 {p99:.3f} ms"
    )


def tantivy_schema(stored: bool):  # type: ignore[no-untyped-def]
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_text_field("id", stored=stored, tokenizer_name="raw")
    sb.add_text_field("title", stored=stored, tokenizer_name="en_stem")
    sb.add_text_field("abstract", stored=stored, tokenizer_name="en_stem")
    if stored:  # the rest of the record, as the paper store keeps it
        sb.add_text_field("authors", stored=True, index_option="basic")
        sb.add_text_field("venue", stored=True, tokenizer_name="raw")
        sb.add_integer_field("year", stored=True, indexed=True)
    return sb.build()


def tantivy_doc(r: dict, stored: bool):  # type: ignore[no-untyped-def]
    import tantivy

    fields = {"id": r["id"], "title": r["title"], "abstract": r.get("abstract") or ""}
    if stored:
        fields.update(
            authors=" ; ".join(r.get("authors") or []),
            venue=r.get("venue") or "",
            year=int(r.get("year") or 0),
        )
    return tantivy.Document(**fields)


def tantivy_half(corpus: Path, work: Path, reuse: bool = False) -> None:
    import tantivy

    records = read_corpus(corpus)
    queries = json.loads((work / "queries.json").read_text())
    print(f"{getattr(tantivy, '__version__', 'tantivy')}: {len(records):,} papers")
    for stored in (False, True):
        path = work / ("tantivy-stored" if stored else "tantivy-index")
        label = "every field stored" if stored else "no stored fields"
        if not (reuse and path.is_dir()):
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir(parents=True)
            index = tantivy.Index(tantivy_schema(stored), path=str(path))
            t0 = time.perf_counter()
            writer = index.writer(heap_size=256_000_000, num_threads=2)
            for r in records:
                writer.add_document(tantivy_doc(r, stored))
            writer.commit()
            writer.wait_merging_threads()
            build = time.perf_counter() - t0
            print(f"  {label}: build {build:.1f} s (2 threads, one commit)")
        index = tantivy.Index.open(str(path))
        print(f"  {label}: on disk {folder_mb(path):.1f} MB")
    index = tantivy.Index.open(str(work / "tantivy-index"))
    searcher = index.searcher()

    def run(q: str) -> None:
        searcher.search(index.parse_query(q, ["title", "abstract"]), 10)

    p50, p99 = latency(run, queries)
    print(
        f"  parse_query + search(q, 10) on the index without stored fields, {len(queries)} "
        f"queries: p50 {p50:.3f} ms, p99 {p99:.3f} ms"
    )
    if reuse:
        return
    extra = [dict(r, id=r["id"] + "-new") for r in records[:1000]]
    writer = index.writer(heap_size=256_000_000, num_threads=2)
    t0 = time.perf_counter()
    for r in extra:
        writer.add_document(tantivy_doc(r, False))
    writer.commit()
    added = time.perf_counter() - t0
    writer.wait_merging_threads()
    print(f"  adding 1,000 papers to it + commit: {added:.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", choices=("project", "tantivy"))
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--work", type=Path, help="default: the corpus's folder")
    parser.add_argument(
        "--reuse", action="store_true", help="keep the saved indexes: latency (and sizes) only"
    )
    args = parser.parse_args()
    work = (args.work or args.corpus.parent).resolve()
    work.mkdir(parents=True, exist_ok=True)
    if args.which == "project":
        project(args.corpus.resolve(), work, args.reuse)
    else:
        tantivy_half(args.corpus.resolve(), work, args.reuse)
    return 0


if __name__ == "__main__":
    sys.exit(main())

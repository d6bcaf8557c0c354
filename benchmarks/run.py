"""Speed, disk and memory of the project's search against rank_bm25, bm25s and tantivy, on real
and synthetic corpora; prints one markdown table and whether each target of issues 4, 17 and 25
is met.

    .venv/bin/python -m benchmarks.run                 # paperlists, scifact, synthetic 100k
    .venv/bin/python -m benchmarks.run --million       # ... and synthetic 1M (long)
    .venv/bin/python -m benchmarks.run --tiny --work /tmp/b   # seconds: the test suite's run

Every library gets the same tokens (the project's analyzer) and BM25 parameters, except
tantivy: the same texts and query texts through its own `en_stem` tokenizer
(`benchmarks/tantivy_engine.py`, also what `benchmarks.known_items` ranks with). Build time
and query latency are measured in this process; memory and start-up from the saved index in
a fresh subprocess per library (so one library's garbage is not another's RSS). See
benchmarks/README.md for what each number means.
"""

from __future__ import annotations

import argparse
import gc
import json
import pickle
import random
import re
import shutil
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from benchmarks import tantivy_engine
from benchmarks import targets as serving
from benchmarks.options import parse_args
from benchmarks.probes import bot_startup, run_child
from benchmarks.report import K, machine, table, targets
from benchmarks.synth import Source, cached_corpus
from bot.config import EXCLUDED_STATUSES, Settings
from bot.papers.corpus import load_corpus
from bot.search.analysis.analyzer import Analyzer
from bot.search.engine import SearchEngine
from bot.search.index.postings import BM25Index
from bot.search.parts import doc_text
from bot.search.ranking import kernel
from bot.search.ranking.pruning import search_top_k
from bot.search.ranking.topk import top_k

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
EXCLUDE = EXCLUDED_STATUSES
_WORD = re.compile(r"[A-Za-z][A-Za-z-]{2,}")


# --- corpora and queries -------------------------------------------------------------------


@dataclass
class Corpus:
    name: str
    files: list[Path]
    queries_from: list  # papers whose titles and abstracts make the queries
    n: int = 0


def make_queries(papers, n_titles: int, n_keywords: int, seed: int) -> list[tuple[str, str]]:
    """(kind, text): real titles, and 1-5 consecutive words of a real abstract."""
    rng = random.Random(seed)
    stop = Analyzer().stopwords
    titles = [p.title for p in papers if p.title]
    out = [("title", titles[rng.randrange(len(titles))]) for _ in range(n_titles)]
    abstracts = [p.abstract for p in papers if p.abstract]
    while len(out) < n_titles + n_keywords:
        words = [
            w
            for w in _WORD.findall(abstracts[rng.randrange(len(abstracts))])
            if w.lower() not in stop
        ]
        if not words:
            continue
        size = rng.randint(1, 5)
        start = rng.randrange(max(1, len(words) - size + 1))
        out.append(("keywords", " ".join(words[start : start + size])))
    return out


def percentile_ms(samples: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples) * 1000, q)) if samples else float("nan")


def dense_top(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top k of a dense score array, best first, ties in corpus order (as `top_k`)."""
    ids = np.flatnonzero(scores > 0)
    return top_k(ids.astype(np.int32), scores[ids].astype(np.float64), k)


def same_up_to_ties(ours: tuple, ref_scores: np.ndarray, k: int) -> tuple[bool, bool]:
    """(identical ids in order, identical up to exact ties) against rank_bm25's dense scores."""
    ids, scores = ours
    ref_ids, ref_top = dense_top(ref_scores, k)
    exact = np.array_equal(ids, ref_ids)
    if exact:
        return True, True
    if ids.shape != ref_ids.shape:
        return False, False
    # Same scores at every rank, and each of our docs truly has its score in rank_bm25.
    ok = np.allclose(scores, ref_top, rtol=1e-9, atol=0) and np.allclose(
        ref_scores[ids], scores, rtol=1e-9, atol=0
    )
    return False, bool(ok)


# --- one corpus ----------------------------------------------------------------------------


def write_settings(work: Path, corpus: Corpus, index_dir: Path) -> Path:
    """A settings file (PAPERBOT_CONFIG) for the bot processes the benchmark starts."""
    settings_path = work / f"settings-{corpus.name}.toml"
    files = ", ".join(json.dumps(str(f)) for f in corpus.files)
    settings_path.write_text(
        f"[corpus]\nfiles = [{files}]\nindex_dir = {json.dumps(str(index_dir))}\n"
        f"exclude_status = {json.dumps(list(EXCLUDE))}\n"
        f"[storage]\ndatabase = {json.dumps(str(work / 'bench.sqlite3'))}\n"
    )
    return settings_path


def build_target(corpus: Corpus, work: Path, args: argparse.Namespace) -> list[str]:
    """Issue 17's build-from-text row alone, measured as `serving_targets` measures it."""
    index_dir = work / "index-targets" / corpus.name
    shutil.rmtree(index_dir, ignore_errors=True)
    build = serving.measure_build(write_settings(work, corpus, index_dir))
    return [
        f"- {corpus.name}: build from text (parse, tokenise in 2 processes, build, save) "
        f"{build['seconds']:.1f} s; peak memory (summed PSS of the build and its workers) "
        f"{build['peak_pss']:,.0f} MB (main process VmHWM {build['hwm']:,.0f} MB)"
    ]


def serving_targets(corpus: Corpus, work: Path, args: argparse.Namespace, command: str) -> list:
    """Issue 17's targets for one corpus, every figure from fresh processes
    (benchmarks/targets.py): build from text, then two bots serving the saved index."""
    index_dir = work / "index-targets" / corpus.name
    shutil.rmtree(index_dir, ignore_errors=True)
    settings_path = write_settings(work, corpus, index_dir)
    say = print if not args.quiet else (lambda *a, **k: None)
    say(f"## {corpus.name}: build from text", flush=True)
    build = serving.measure_build(settings_path)
    say(f"  {build}", flush=True)
    half = args.bot_queries // 2
    analyzer = Analyzer()
    texts = [
        text
        for _kind, text in make_queries(
            corpus.queries_from, half, args.bot_queries - half, seed=args.seed
        )
        if analyzer(text)
    ]
    spec = {
        "queries": texts,
        "prefixes": serving.prefixes_of(
            [p.title for p in corpus.queries_from], args.queries, args.seed
        ),
    }
    serve = serving.measure_serving(settings_path, spec, work, solo_runs=args.startup_runs)
    say(f"  {serve}", flush=True)
    return serving.report(corpus.name, serve["papers"], build, serve, command)


@dataclass
class Result:
    name: str
    n_docs: int = 0
    rows: dict = field(default_factory=dict)  # metric -> (project, rank_bm25, bm25s, tantivy)
    notes: list = field(default_factory=list)
    facts: dict = field(default_factory=dict)


def bench_corpus(corpus: Corpus, work: Path, args: argparse.Namespace) -> Result:
    import bm25s
    from rank_bm25 import BM25Okapi

    res = Result(corpus.name)
    say = print if not args.quiet else (lambda *a, **k: None)
    say(f"## {corpus.name}", flush=True)
    t0 = time.perf_counter()
    report = load_corpus(corpus.files, exclude_status=EXCLUDE)
    papers = report.papers
    res.n_docs = len(papers)
    res.facts["parse_s"] = time.perf_counter() - t0
    analyzer = Analyzer()

    if not args.query_only:
        # Full build from text, as the bot does it (parallel tokenising), saved like the bot.
        index_dir = work / "index" / corpus.name
        shutil.rmtree(index_dir, ignore_errors=True)
        settings = Settings().with_corpus(corpus.files)
        settings = replace(
            settings, corpus=replace(settings.corpus, index_dir=index_dir, exclude_status=EXCLUDE)
        )
        t0 = time.perf_counter()
        engine = SearchEngine.load(settings)
        res.facts["engine_build_s"] = time.perf_counter() - t0
        say(f"  engine built from text in {res.facts['engine_build_s']:.1f}s", flush=True)
        folder = next(p for p in index_dir.iterdir() if (p / "meta.json").exists())
        settings_path = write_settings(work, corpus, index_dir)

    # Same tokens for every library.
    t0 = time.perf_counter()
    tokens = [analyzer(doc_text(p)) for p in papers]
    res.facts["tokenize_s"] = time.perf_counter() - t0
    run_rank = len(papers) <= args.rank_bm25_max_docs
    timings = {}
    t0 = time.perf_counter()
    ours = BM25Index.build(tokens)
    ours.block_max  # noqa: B018 -- the pruning bounds are part of the build (and saved with it)
    timings["project"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    model_s = bm25s.BM25(method="atire", idf_method="robertson")
    model_s.index(tokens, show_progress=False)
    timings["bm25s"] = time.perf_counter() - t0
    model_r = None
    if run_rank:
        t0 = time.perf_counter()
        model_r = BM25Okapi(tokens)
        timings["rank_bm25"] = time.perf_counter() - t0
    res.rows["index build from tokens (s)"] = (
        timings["project"],
        timings.get("rank_bm25"),
        timings["bm25s"],
        None,
    )
    say(f"  built: {timings}", flush=True)

    # Queries: identical token lists for all three.
    qs = make_queries(
        corpus.queries_from, args.queries // 2, args.queries - args.queries // 2, seed=args.seed
    )
    qtokens = [(kind, text, analyzer(text)) for kind, text in qs]
    qtokens = [q for q in qtokens if q[2]]
    # Pruned rows: the traversal a bot takes (the C kernel where it was built); the numpy
    # traversal, its fallback, is timed too.
    res.facts["traversal"] = kernel.describe()
    say(f"  pruned top k: {res.facts['traversal']}", flush=True)
    lat = {"project": [], "pruned": [], "numpy": [], "rank_bm25": [], "bm25s": []}
    mismatches = 0
    n_rank = min(len(qtokens), args.rank_bm25_queries) if run_rank else 0
    exact = tie_ok = 0
    rank_sample = set(random.Random(args.seed).sample(range(len(qtokens)), n_rank))
    for qi, (_kind, _text, terms) in enumerate(qtokens):
        t0 = time.perf_counter()
        ids, scores = ours.score(terms)
        best = top_k(ids, scores, K)
        lat["project"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        pruned = search_top_k(ours, terms, K)
        lat["pruned"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        by_numpy = search_top_k(ours, terms, K, compiled=False)
        lat["numpy"].append(time.perf_counter() - t0)
        # Checked on every query: the same ids, scores and order as the exhaustive path.
        for got in (pruned, by_numpy):
            mismatches += not (np.array_equal(got[0], best[0]) and np.array_equal(got[1], best[1]))
        t0 = time.perf_counter()
        known = model_s.get_tokens_ids(terms)
        dense_s = model_s.get_scores(known) if known else np.zeros(len(papers), np.float32)
        top = np.argpartition(-dense_s, K)[:K] if dense_s.shape[0] > K else np.arange(len(dense_s))
        top = top[np.argsort(-dense_s[top], kind="stable")]
        lat["bm25s"].append(time.perf_counter() - t0)
        if qi in rank_sample:
            t0 = time.perf_counter()
            dense_r = model_r.get_scores(terms)
            dense_top(dense_r, K)
            lat["rank_bm25"].append(time.perf_counter() - t0)
            e, t = same_up_to_ties(best, dense_r, K)
            exact += e
            tie_ok += t
    res.facts.update(
        queries=len(qtokens),
        parity_checked=n_rank,
        parity_exact=exact,
        parity_ties=tie_ok,
        pruned_mismatches=mismatches,
    )
    # tantivy: its own tokenizer over the same texts, the same query texts, one at a time.
    tv = None
    if tantivy_engine.installed():
        tv_dir = work / "tantivy" / corpus.name
        texts = [doc_text(p) for p in papers]
        tv = tantivy_engine.measure(texts, [text for _k, text, _t in qtokens], tv_dir, K)
        lat["tantivy"] = tv.latencies
        say(f"  tantivy: built and saved in {tv.build_s:.1f}s, {tv.disk_mb:.1f} MB", flush=True)
    else:
        res.notes.append(tantivy_engine.NOT_INSTALLED)
        say(tantivy_engine.NOT_INSTALLED, flush=True)
    engines = ("project", "rank_bm25", "bm25s", "tantivy")
    for q, label in ((50, "p50"), (99, "p99")):
        res.rows[f"query {label}, score + top {K} (ms)"] = tuple(
            percentile_ms(lat[k], q) if lat.get(k) else None for k in engines
        )
    for q, label in ((50, "p50"), (99, "p99")):
        res.rows[f"query {label}, pruned top {K} (ms)"] = (
            percentile_ms(lat["pruned"], q),
            None,
            percentile_ms(lat["bm25s"], q),
            percentile_ms(lat["tantivy"], q) if tv else None,
        )
    for q, label in ((50, "p50"), (99, "p99")):
        res.rows[f"query {label}, pruned top {K}, numpy traversal (ms)"] = (
            percentile_ms(lat["numpy"], q),
            None,
            percentile_ms(lat["bm25s"], q),
            percentile_ms(lat["tantivy"], q) if tv else None,
        )
    say(
        f"  queries: {len(qtokens)}, parity {tie_ok}/{n_rank} (exact order {exact}), "
        f"pruned vs exhaustive mismatches {mismatches}",
        flush=True,
    )
    if tv is not None:  # the project's build from text: parse + tokenise + build + save
        res.rows["index build from text, saved (s)"] = (
            res.facts.get("engine_build_s"),
            None,
            None,
            res.facts["parse_s"] + tv.build_s,
        )
    if not args.query_only:
        store = folder / "papers"
        res.rows["on disk, index (MB)"] = (
            tantivy_engine.folder_mb(folder) - tantivy_engine.folder_mb(store),
            None,
            None,
            tv and tv.disk_mb,
        )
        res.rows["on disk, index + paper store (MB)"] = (
            tantivy_engine.folder_mb(folder),
            None,
            None,
            tv and tv.disk_mb,
        )
    if args.query_only:
        return res

    # The project's whole search (parse, analyze, score, filters, top k, snippets).
    full = []
    for _kind, text, _terms in qtokens:
        t0 = time.perf_counter()
        engine.search(text, limit=K)
        full.append(time.perf_counter() - t0)
    res.rows["SearchEngine.search, with snippets, p50 (ms)"] = (
        percentile_ms(full, 50),
        None,
        None,
        None,
    )
    res.rows["SearchEngine.search, with snippets, p99 (ms)"] = (
        percentile_ms(full, 99),
        None,
        None,
        None,
    )

    # Autocomplete over every title: prefixes of real titles, 1 to 25 characters.
    rng = random.Random(args.seed + 1)
    titles = [p.title for p in corpus.queries_from]
    prefixes = []
    for _ in range(args.queries):
        title = titles[rng.randrange(len(titles))]
        start = 0 if rng.random() < 0.7 else rng.randrange(max(1, len(title) - 3))
        prefixes.append(title[start : start + rng.randint(1, 25)])
    ac = []
    for prefix in prefixes:
        t0 = time.perf_counter()
        engine.suggest(prefix)
        ac.append(time.perf_counter() - t0)
    res.rows["autocomplete p50 (ms)"] = (percentile_ms(ac, 50), None, None, None)
    res.rows["autocomplete p99 (ms)"] = (percentile_ms(ac, 99), None, None, None)

    # Saved forms for the start-up children.
    bm25s_dir = work / "bm25s" / corpus.name
    shutil.rmtree(bm25s_dir, ignore_errors=True)
    model_s.save(str(bm25s_dir), show_progress=False)
    rank_path = work / "rank_bm25" / f"{corpus.name}.pkl"
    if model_r is not None:
        rank_path.parent.mkdir(parents=True, exist_ok=True)
        with rank_path.open("wb") as handle:
            pickle.dump(model_r, handle, protocol=pickle.HIGHEST_PROTOCOL)
    del model_r, model_s, tokens, ours, engine
    gc.collect()
    loads = {
        "project": run_child("project", str(folder)),
        "bm25s": run_child("bm25s", str(bm25s_dir)),
    }
    if run_rank:
        loads["rank_bm25"] = run_child("rank_bm25", str(rank_path))
    if tv is not None:
        loads["tantivy"] = run_child("tantivy", str(tv_dir))
    pick = [loads.get(k) for k in engines]
    res.rows["load saved index (s)"] = tuple(x and x["seconds"] for x in pick)
    res.rows["RSS after loading the index (MB)"] = tuple(x and x["rss"] for x in pick)
    res.rows["  of which the index (MB, RSS - RSS before load)"] = tuple(
        x and x["rss"] - x["base"] for x in pick
    )
    say(
        "  loads: "
        + ", ".join(f"{k} {v['seconds']:.3f}s {v['rss']:.0f}MB" for k, v in loads.items()),
        flush=True,
    )

    bot_queries = [text for _k, text, _t in qtokens[: args.bot_queries]]
    bot = bot_startup(settings_path, bot_queries, work, runs=max(1, args.startup_runs))
    res.rows["bot start-up to serving, saved index (s)"] = (bot["startup"], None, None, None)
    res.rows["bot RSS when serving (MB)"] = (bot["rss"], None, None, None)
    res.rows[f"bot RSS after {bot['queries']} searches (MB)"] = (bot["rss_after"], None, None, None)
    res.facts["bot_mode"] = bot["mode"]
    res.facts["bot_wall"] = bot["wall"]
    say(
        f"  bot: {bot['startup']:.2f}s, {bot['rss']:.0f} MB -> {bot['rss_after']:.0f} MB "
        f"({bot['mode']})",
        flush=True,
    )
    return res


# --- report --------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.startup_runs is None:  # the tests' run: fewer processes, the same checks
        args.startup_runs = 0 if args.tiny else 2
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)

    corpora: list[Corpus] = []
    if args.tiny:
        seed_papers = load_corpus([ROOT / "data" / "icml2026.jsonl"]).papers
        path = cached_corpus(Source.from_papers(seed_papers), 600, work / "corpora", args.seed)
        corpora.append(Corpus("synthetic-tiny", [path], seed_papers))
    else:
        lists = sorted((args.shared / "paperlists").glob("*.json"))
        real = load_corpus(lists, exclude_status=EXCLUDE).papers
        if not args.no_real:
            corpora.append(Corpus("paperlists", lists, real))
            scifact = args.shared / "scifact" / "corpus.jsonl"
            corpora.append(Corpus("scifact", [scifact], load_corpus([scifact]).papers))
        source = Source.from_papers(real)
        sizes = list(args.synth) + ([1_000_000] if args.million else [])
        for n in sizes:
            t0 = time.perf_counter()
            path = cached_corpus(source, n, work / "corpora", args.seed)
            if not args.quiet:
                print(f"synthetic {n:,}: {path.name} ({time.perf_counter() - t0:.0f}s)", flush=True)
            corpora.append(Corpus(f"synthetic-{n // 1000}k", [path], real))

    command = "python -m benchmarks.run " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.build_only:
        lines = [f"Command: `{command.strip()}`", "", f"Machine: {machine()}", ""]
        for corpus in corpora:
            lines += [*build_target(corpus, work, args), ""]
        print("\n".join(lines))
        if args.out:
            args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return 0
    if args.targets_only:
        lines = [f"Machine: {machine()}", ""]
        for corpus in corpora:
            lines += [*serving_targets(corpus, work, args, command.strip()), ""]
        print("\n".join(lines))
        if args.out:
            args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return 0
    results = [bench_corpus(c, work, args) for c in corpora]
    report = "\n".join(
        [
            f"Command: `{command.strip()}`",
            "",
            f"Machine: {machine()}",
            "",
            table(results),
            "",
            "Targets:",
            "",
            *targets(results),
            "",
            "Notes:",
            "",
            *[
                f"- {r.name}: {r.facts['queries']} queries; corpus parse "
                f"{r.facts['parse_s']:.1f} s, tokenising {r.facts['tokenize_s']:.1f} s "
                f"(1 process)"
                + (
                    "; --query-only: no engine, autocomplete, loads or bot start-up measured"
                    if "engine_build_s" not in r.facts
                    else f", SearchEngine.load from text {r.facts['engine_build_s']:.1f} s "
                    f"(tokenise in parallel + build + save); bot start-up measured as: "
                    f"{r.facts['bot_mode']}"
                )
                + "".join(f"; {note}" for note in r.notes)
                for r in results
            ],
        ]
    )
    print(report)
    if args.out:
        args.out.write_text(report + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

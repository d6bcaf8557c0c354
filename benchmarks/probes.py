"""Measurements made in fresh interpreters: loading a saved index, and the bot's start-up.

A child process per measurement keeps each library's memory and import cost its own.
"""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

from bot.search.engine import SearchEngine
from bot.search.index.postings import BM25Index

ROOT = Path(__file__).resolve().parent.parent


def rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def child(kind: str, arg: str) -> dict:
    """Run in a fresh interpreter: load a saved index; report load time and RSS."""
    if kind == "project":
        folder = Path(arg)
        expect = {
            k: v
            for k, v in json.loads((folder / "meta.json").read_text()).items()
            if k in ("corpus", "analyzer", "title_weight", "params")
        }
        base = rss_mb()
        t0 = time.perf_counter()
        index = BM25Index.load(folder, expect, mmap=True)
        seconds = time.perf_counter() - t0
        assert index.n_docs > 0
        return {"seconds": seconds, "rss": rss_mb(), "base": base}
    if kind == "bm25s":
        import bm25s

        base = rss_mb()
        t0 = time.perf_counter()
        model = bm25s.BM25.load(arg, show_progress=False)
        seconds = time.perf_counter() - t0
        assert model.scores
        return {"seconds": seconds, "rss": rss_mb(), "base": base}
    if kind == "rank_bm25":
        import rank_bm25  # noqa: F401  (the pickle needs the class)

        base = rss_mb()
        t0 = time.perf_counter()
        with open(arg, "rb") as handle:
            model = pickle.load(handle)
        seconds = time.perf_counter() - t0
        assert model.corpus_size > 0
        return {"seconds": seconds, "rss": rss_mb(), "base": base}
    if kind == "tantivy":
        from benchmarks import tantivy_engine

        base = rss_mb()
        t0 = time.perf_counter()
        engine = tantivy_engine.open_saved(Path(arg))
        seconds = time.perf_counter() - t0
        assert engine.searcher.num_docs > 0
        return {"seconds": seconds, "rss": rss_mb(), "base": base}
    if kind == "bot":
        return bot_child(arg)
    raise ValueError(kind)


def serving_engine() -> tuple[SearchEngine, int, object]:
    """The bot's start-up to serving: import it, load the engine (saved index) and the cogs;
    the engine, the page size `/search` uses, and the bot (keep it: it holds the cogs).

    This is `PaperBot.setup_hook` without the network part (no login, no command sync).
    """
    from bot.app.client import PaperBot
    from bot.config import load_settings

    settings = load_settings()  # PAPERBOT_CONFIG points at the benchmark's settings

    async def setup() -> PaperBot:
        bot = PaperBot(settings)
        bot.engine = await asyncio.to_thread(SearchEngine.load, settings)
        bot.storage = await bot._open_storage()
        for name in bot.extensions_to_load:
            await bot.load_extension(name)
        if bot.storage is not None:  # close() would need a login; the engine stays
            await bot.storage.close()
        return bot

    bot = asyncio.run(setup())
    return bot.engine, settings.search.page_size, bot


def bot_child(queries_path: str) -> dict:
    """Start-up to serving (`serving_engine`), then RSS after searches and autocompletes."""
    mode = "PaperBot setup_hook path (engine + storage + cogs), not connected"
    engine, page_size, _bot = serving_engine()
    ready = time.perf_counter()
    rss_ready = rss_mb()
    queries = json.loads(Path(queries_path).read_text())
    for text in queries:
        engine.search(text, limit=page_size)
    for text in queries[:200]:
        engine.suggest(text[:8])
    return {
        "ready": ready,
        "rss": rss_ready,
        "rss_after": rss_mb(),
        "mode": mode,
        "papers": len(engine.papers),
        "queries": len(queries),
    }


def run_child(kind: str, arg: str, env: dict | None = None) -> dict:
    code = (
        "import json,sys,time; t=time.perf_counter(); from benchmarks.probes import child; "
        "r=child(sys.argv[1], sys.argv[2]); r['t0']=t; print(json.dumps(r))"
    )
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code, kind, arg],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} child failed:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["wall"] = wall
    return result


def bot_startup(settings_path: Path, queries: list[str], work: Path, runs: int = 2) -> dict:
    """Wall time from launching `python` to the engine serving, measured `runs` times (best
    kept)."""
    qpath = work / "bot-queries.json"
    qpath.write_text(json.dumps(queries))
    env = dict(os.environ, PAPERBOT_CONFIG=str(settings_path))
    results = []
    for _ in range(runs):
        code = (
            "import time; T=time.perf_counter(); import json,sys; "
            "from benchmarks.probes import child; r=child('bot', sys.argv[1]); "
            "r['startup']=r['ready']-T; print(json.dumps(r))"
        )
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", code, str(qpath)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        out, err = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"bot child failed:\n{err[-3000:]}")
        result = json.loads(out.strip().splitlines()[-1])
        result["wall"] = time.perf_counter() - started
        results.append(result)
    return min(results, key=lambda r: r["startup"])

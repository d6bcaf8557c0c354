"""Issue 17's serving targets at a given corpus size, each measured in fresh processes.

    .venv/bin/python -m benchmarks.run --million --no-real --synth --targets-only

What it measures (no rank_bm25, no bm25s, and the corpus is never loaded into this process,
so the 1M run fits beside other work):

- build from text: `SearchEngine.load` with an empty index folder in a fresh interpreter
  (parse, tokenise in forked workers, build, save); wall time, and the peak of the summed
  PSS of that process and its workers (sampled every 0.2 s; PSS shares copy-on-write pages
  between them instead of counting them in each) and its own VmHWM.
- the bot serving the saved index (the PaperBot setup_hook path of `benchmarks.probes`):
  start-up, memory when serving and after 1,000 searches + 200 autocompletes, split into
  anonymous memory (what a container's OOM killer sees: it cannot be dropped) and file-backed
  pages (the memory-mapped index and store: clean pages the kernel reclaims under pressure);
  `/search` full-path latency (`SearchEngine.search` with snippets) over those searches, and
  autocomplete latency over 2,000 prefixes afterwards.
- a second bot process on the same index while the first still runs: what it adds, as the
  growth of the two processes' summed PSS, and its own private memory (USS).
- the same serving run inside a 512 MB memory cgroup (`benchmarks/cgroup.py`), where a writable
  one can be made: whether the kernel kills it, and its `/search` latency under that limit.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from benchmarks.cgroup import Cage, cage

ROOT = Path(__file__).resolve().parent.parent
MB = 1024.0  # /proc reports kB
CONTAINER_MB = 512  # the container the memory target is about


def memory(pid: int | str = "self") -> dict[str, float]:
    """MB: rss, anon, file, shmem, hwm (peak rss) from status; pss, uss from smaps_rollup."""
    out: dict[str, float] = {}
    names = {"VmRSS": "rss", "RssAnon": "anon", "RssFile": "file", "RssShmem": "shmem"}
    names["VmHWM"] = "hwm"
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in names:
            out[names[key]] = int(value.split()[0]) / MB
    rollup: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        key, _, value = line.partition(":")
        rollup[key] = int(value.split()[0]) / MB
    out["pss"] = rollup.get("Pss", 0.0)
    out["uss"] = rollup.get("Private_Clean", 0.0) + rollup.get("Private_Dirty", 0.0)
    return out


def percentile_ms(samples: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples) * 1000, q)) if samples else float("nan")


# --- in the child processes ------------------------------------------------------------------


def serve_child(spec_path: str, started: float) -> None:
    """A bot serving the saved index: print one JSON line of figures, then (when asked) stay
    alive until stdin closes, so a second process can be measured beside it."""
    from benchmarks.probes import serving_engine

    spec = json.loads(Path(spec_path).read_text())
    engine, page_size, _bot = serving_engine()
    ready = time.perf_counter()
    at_ready = memory()
    search_s = []
    for text in spec["queries"]:
        t0 = time.perf_counter()
        engine.search(text, limit=page_size)
        search_s.append(time.perf_counter() - t0)
    for prefix in spec["prefixes"][:200]:
        engine.suggest(prefix)
    after = memory()
    complete_s = []
    for prefix in spec["prefixes"]:
        t0 = time.perf_counter()
        engine.suggest(prefix)
        complete_s.append(time.perf_counter() - t0)
    verified = engine.wait_verified(timeout=600)
    figures = {
        "pid": os.getpid(),
        "startup": ready - started,
        "ready": at_ready,
        "after": after,
        "searches": len(search_s),
        "search_p50": percentile_ms(search_s, 50),
        "search_p99": percentile_ms(search_s, 99),
        "complete_p50": percentile_ms(complete_s, 50),
        "complete_p99": percentile_ms(complete_s, 99),
        "verified": verified and engine.damaged is None,
        "papers": len(engine.papers),
    }
    print(json.dumps(figures), flush=True)
    if spec.get("hold"):
        sys.stdin.readline()


def build_child(started: float) -> None:
    """`SearchEngine.load` from text (the caller gives an empty index folder)."""
    from bot.config import load_settings
    from bot.search.engine import SearchEngine

    engine = SearchEngine.load(load_settings())
    print(json.dumps({"seconds": time.perf_counter() - started, "papers": len(engine.papers)}))


def _spawn(
    fn: str, args: list[str], env: dict[str, str], within: Cage | None = None
) -> subprocess.Popen[str]:
    code = (
        "import time; T=time.perf_counter(); import sys; from benchmarks import targets; "
        f"targets.{fn}(*sys.argv[1:], started=T)"
    )
    argv = [sys.executable, "-c", code, *args]
    return subprocess.Popen(
        within.wrap(argv) if within is not None else argv,
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _tree_pss(pid: int) -> float:
    import psutil

    total = 0.0
    try:
        procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return 0.0
    for proc in procs:
        try:
            total += memory(proc.pid)["pss"]
        except OSError:
            continue
    return total


# --- in the benchmark process ----------------------------------------------------------------


def measure_build(settings_path: Path) -> dict[str, float]:
    env = dict(os.environ, PAPERBOT_CONFIG=str(settings_path))
    proc = _spawn("build_child", [], env)
    peak = {"pss": 0.0, "hwm": 0.0}

    def sample() -> None:
        while proc.poll() is None:
            peak["pss"] = max(peak["pss"], _tree_pss(proc.pid))
            with contextlib.suppress(OSError):
                peak["hwm"] = max(peak["hwm"], memory(proc.pid)["hwm"])
            time.sleep(0.2)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    out, err = proc.communicate()
    watcher.join()
    if proc.returncode != 0:
        raise RuntimeError(f"build child failed:\n{err[-3000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    return {"seconds": result["seconds"], "peak_pss": peak["pss"], "hwm": peak["hwm"]}


def measure_serving(settings_path: Path, spec: dict, work: Path, solo_runs: int = 2) -> dict:
    """Two bot processes on one saved index: the first alone (best start-up of `solo_runs`
    runs; with 0, the figures of the first held process, printed while it was still alone),
    then a second beside it."""
    env = dict(os.environ, PAPERBOT_CONFIG=str(settings_path))
    spec_path = work / "serve-spec.json"
    spec_path.write_text(json.dumps(dict(spec, hold=False)))
    runs = []
    for _ in range(solo_runs):
        proc = _spawn("serve_child", [str(spec_path)], env)
        out, err = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"serve child failed:\n{err[-3000:]}")
        runs.append(json.loads(out.strip().splitlines()[-1]))
    spec_path.write_text(json.dumps(dict(spec, hold=True)))
    first = _spawn("serve_child", [str(spec_path)], env)
    second = None
    try:
        assert first.stdout is not None
        held = json.loads(first.stdout.readline())
        runs = runs or [held]
        alone = memory(first.pid)
        second = _spawn("serve_child", [str(spec_path)], env)
        assert second.stdout is not None
        json.loads(second.stdout.readline())
        both = (memory(first.pid), memory(second.pid))
    finally:
        for proc in (first, second):
            if proc is not None:
                proc.communicate(input="\n", timeout=120)
    best = min(runs, key=lambda r: r["startup"])
    best["contained"] = measure_contained(spec_path, spec, env)
    best["second"] = {
        "added_pss": both[0]["pss"] + both[1]["pss"] - alone["pss"],
        "uss": both[1]["uss"],
        "anon": both[1]["anon"],
        "rss": both[1]["rss"],
    }
    return best


def measure_contained(spec_path: Path, spec: dict, env: dict[str, str]) -> dict:
    """The same serving run inside a 512 MB memory cgroup: killed or not, and how fast."""
    spec_path.write_text(json.dumps(dict(spec, hold=False)))
    found = cage(CONTAINER_MB)
    if isinstance(found, str):
        return {"skipped": found}
    try:
        proc = _spawn("serve_child", [str(spec_path)], env, within=found)
        out, err = proc.communicate()
        figures = json.loads(out.strip().splitlines()[-1]) if proc.returncode == 0 else {}
        return {
            "returncode": proc.returncode,
            "oom_kills": found.oom_kills(),
            "peak_mb": found.peak_mb(),
            "search_p50": figures.get("search_p50", float("nan")),
            "error": err[-500:] if proc.returncode else "",
        }
    finally:
        found.close()


def _contained_row(contained: dict) -> tuple[str, str, bool | None, str]:
    what = (
        f"the bot serving inside a {CONTAINER_MB} MB memory cgroup (1,000 searches + 200 "
        "autocompletes; the page cache of the mapped index is charged to it)"
    )
    if "skipped" in contained:
        return what, "not killed", None, f"not run: {contained['skipped']}"
    alive = contained["returncode"] == 0 and contained["oom_kills"] == 0
    text = (
        f"exit code {contained['returncode']}, {contained['oom_kills']} OOM kills, cgroup peak "
        f"{contained['peak_mb']:.0f} MB; /search p50 {contained['search_p50']:.2f} ms inside it"
    )
    return what, "not killed", alive, text


def prefixes_of(titles: list[str], n: int, seed: int) -> list[str]:
    """Autocomplete input as in benchmarks.run: 1-25 characters of real titles, 30% mid-title."""
    rng = random.Random(seed + 1)
    out = []
    for _ in range(n):
        title = titles[rng.randrange(len(titles))]
        start = 0 if rng.random() < 0.7 else rng.randrange(max(1, len(title) - 3))
        out.append(title[start : start + rng.randint(1, 25)])
    return out


def report(name: str, n_docs: int, build: dict, serve: dict, command: str) -> list[str]:
    """The "1M targets" table and MET/MISSED lines (issue 17's numbers)."""
    ready, after, second = serve["ready"], serve["after"], serve["second"]
    worst_anon = max(ready["anon"] + ready["shmem"], after["anon"] + after["shmem"])
    rows = [
        (
            "bot memory serving and after 1,000 searches + 200 autocompletes (anonymous, "
            "what a 512 MB container cannot reclaim)",
            "≤ 512 MB",
            worst_anon <= 512,
            f"{ready['anon']:.0f} MB serving, {after['anon']:.0f} MB after (total RSS "
            f"{ready['rss']:.0f} / {after['rss']:.0f} MB, of which file-backed "
            f"{ready['file']:.0f} / {after['file']:.0f} MB)",
        ),
        _contained_row(serve["contained"]),
        (
            "start-up from the saved index (PaperBot setup_hook path)",
            "≤ 1.5 s",
            serve["startup"] <= 1.5,
            f"{serve['startup']:.2f} s (digest check after it: "
            f"{'passed' if serve['verified'] else 'NOT passed'})",
        ),
        (
            "autocomplete p99 (2,000 prefixes)",
            "≤ 10 ms",
            serve["complete_p99"] <= 10,
            f"{serve['complete_p99']:.2f} ms (p50 {serve['complete_p50']:.3f} ms)",
        ),
        (
            f"/search full path p50 ({serve['searches']} searches, snippets on)",
            "≤ 5 ms",
            serve["search_p50"] <= 5,
            f"{serve['search_p50']:.2f} ms (p99 {serve['search_p99']:.1f} ms)",
        ),
        (
            "build from text (parse, tokenise in 2 processes, build, save)",
            "≤ 180 s",
            build["seconds"] <= 180,
            f"{build['seconds']:.0f} s",
        ),
        (
            "build peak memory (summed PSS of the build and its workers)",
            "≤ 2,048 MB",
            build["peak_pss"] <= 2048,
            f"{build['peak_pss']:,.0f} MB (main process VmHWM {build['hwm']:,.0f} MB)",
        ),
        (
            "a second bot process on the same index adds (growth of the summed PSS)",
            "≤ 150 MB",
            second["added_pss"] <= 150,
            f"{second['added_pss']:.0f} MB (its USS {second['uss']:.0f} MB, anonymous "
            f"{second['anon']:.0f} MB, RSS {second['rss']:.0f} MB)",
        ),
    ]
    lines = [
        f"Command: `{command}`",
        "",
        f"{name} ({n_docs:,} papers)",
        "",
        "| target | goal | measured | |",
        "|---|---|---|---|",
    ]
    verdicts = {True: "MET", False: "MISSED", None: "n/a"}
    for what, goal, ok, text in rows:
        lines.append(f"| {what} | {goal} | {text} | {verdicts[ok]} |")
    lines.append("")
    for what, goal, ok, text in rows:
        lines.append(f"- **{verdicts[ok]}** {name}: {what} {goal}: {text}")
    return lines

"""Issue 12 item 14: how long `python -m bot` takes to exit on SIGTERM during an index build.

    .venv/bin/python -m benchmarks.shutdown                  # 100k synthetic papers
    .venv/bin/python -m benchmarks.shutdown --papers 40000 --repeat 5

The bot is started with a token and a loopback Discord address where nothing listens: it
builds the index before connecting, so the SIGTERM lands mid-build: once the log says the
corpus is read, and once every forked build worker runs (where a SIGTERM used to hang the
exit for good). Prints the seconds from SIGTERM to exit, the exit code and whether a worker
was left running, next to the build time of the same corpus in the same run (what the exit
waited for before: the build ran to its end, then the process failed with `RuntimeError:
Session is closed`, code 1).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.stress import SHARED, WORK
from benchmarks.synth import paperlists_corpus
from bot.config import PROJECT_ROOT


def _stat(pid: int | str) -> list[str]:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return ["gone", "0"]


def _alive(pid: int) -> bool:
    return _stat(pid)[0] not in ("gone", "Z")


def children(pid: int) -> list[int]:
    """Live child processes of `pid` (Linux /proc): the bot's forked build workers."""
    return [
        int(p.parent.name)
        for p in Path("/proc").glob("[0-9]*/stat")
        if int(_stat(p.parent.name)[1]) == pid and _alive(int(p.parent.name))
    ]


def run(
    corpus: Path, root: Path, *, terminate: bool, workers: int = 0
) -> tuple[float, int, str, int]:
    """(seconds, exit code, log, workers left running); `workers`: wait for that many
    forked build workers before the SIGTERM."""
    config = root / "settings.toml"
    config.write_text(
        f'[corpus]\nfiles = {json.dumps([str(corpus)])}\nindex_dir = "{root / "idx"}"\n'
        f'[storage]\ndatabase = "{root / "state.sqlite3"}"\n',
        encoding="utf-8",
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(PROJECT_ROOT),
        "PAPERBOT_CONFIG": str(config),
        "DISCORD_TOKEN": "bench.token.not-real",
        "PAPERBOT_API_BASE": "http://127.0.0.1:9/api/v10",
        "PAPERBOT_GATEWAY_URL": "ws://127.0.0.1:9/gateway",
    }
    log = root / "bot.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "-v"], env=env, stdout=out, stderr=out, cwd=root
        )
        while "loaded " not in log.read_text(errors="replace"):
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        while len(forked := children(proc.pid)) < workers and proc.poll() is None:
            time.sleep(0.005)
        started = time.monotonic()
        if terminate:
            proc.send_signal(signal.SIGTERM)
            try:
                code = proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                code = -1  # hung: reported as such
                for pid in [*children(proc.pid), proc.pid]:
                    os.kill(pid, signal.SIGKILL)
                proc.wait()
        else:  # the baseline: how long the build itself takes from there
            while "search engine ready" not in log.read_text(errors="replace"):
                time.sleep(0.05)
            code = 0
            proc.kill()
            proc.wait()
        took = time.monotonic() - started
    time.sleep(0.5)  # a worker the exit killed is reaped by now
    return took, code, log.read_text(errors="replace"), sum(map(_alive, forked))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="SIGTERM runs of each kind")
    parser.add_argument("--work", type=Path, default=WORK)
    args = parser.parse_args(argv)

    corpus = paperlists_corpus(args.papers, args.work / "corpora", SHARED)
    if corpus is None:
        return 1
    workers = min(len(os.sched_getaffinity(0)), -(-args.papers // 1000))
    with tempfile.TemporaryDirectory() as tmp:
        build, _code, _log, _left = run(corpus, _fresh(tmp, "build"), terminate=False)
        print(f"corpus: {args.papers:,} papers")
        print(
            "index build after the corpus is read (baseline: what SIGTERM waited for): "
            f"{build:.1f} s"
        )
        kinds = [("after the corpus is read", 0), (f"while {workers} build workers run", workers)]
        for label, wait in kinds:
            results = [
                run(corpus, _fresh(tmp, f"{wait}-{i}"), terminate=True, workers=wait)
                for i in range(args.repeat)
            ]
            codes = sorted({code for _took, code, _text, _left in results})
            times = ", ".join(f"{took:.2f}" for took, _code, _text, _left in results)
            print(
                f"SIGTERM {label}: exit codes {codes} (-1: hung, killed after 60 s); "
                f"seconds to exit: {times}; tracebacks: "
                f"{sum('Traceback' in text for _t, _c, text, _l in results)}; workers left "
                f"running: {sum(left for _t, _c, _text, left in results)}"
            )
    return 0


def _fresh(tmp: str, name: str) -> Path:
    folder = Path(tmp) / name
    folder.mkdir()
    return folder


if __name__ == "__main__":
    raise SystemExit(main())

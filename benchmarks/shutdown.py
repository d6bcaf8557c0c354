"""Issue 12 item 14: how long `python -m bot` takes to exit on SIGTERM during an index build.

    .venv/bin/python -m benchmarks.shutdown                  # 100k synthetic papers
    .venv/bin/python -m benchmarks.shutdown --papers 40000

The bot is started with a token and a loopback Discord address where nothing listens: it
builds the index before connecting, so the SIGTERM lands mid-build (sent once the log says
the corpus is read). Prints the seconds from SIGTERM to exit and the exit code, next to the
build time of the same corpus in the same run (what the exit waited for before: the build
ran to its end, then the process failed with `RuntimeError: Session is closed`, code 1).
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


def run(corpus: Path, root: Path, *, terminate: bool) -> tuple[float, int, str]:
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
        started = time.monotonic()
        if terminate:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=120)
        else:  # the baseline: how long the build itself takes from there
            while "search engine ready" not in log.read_text(errors="replace"):
                time.sleep(0.05)
            code = 0
            proc.kill()
            proc.wait()
        took = time.monotonic() - started
    return took, code, log.read_text(errors="replace")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--work", type=Path, default=WORK)
    args = parser.parse_args(argv)

    corpus = paperlists_corpus(args.papers, args.work / "corpora", SHARED)
    if corpus is None:
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        first, second = Path(tmp) / "build", Path(tmp) / "term"
        first.mkdir()
        second.mkdir()
        build, _code, _log = run(corpus, first, terminate=False)
        took, code, text = run(corpus, second, terminate=True)
    print(f"corpus: {args.papers:,} papers")
    print(
        f"index build after the corpus is read (baseline: what SIGTERM waited for): {build:.1f} s"
    )
    print(
        f"SIGTERM during that build: exit {code} after {took:.2f} s; traceback: "
        f"{'yes' if 'Traceback' in text else 'no'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The command line of `python -m benchmarks.run` (its options, documented in
benchmarks/README.md), apart from the run itself."""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Benchmark search speed and memory.")
    parser.add_argument(
        "--work",
        type=Path,
        default=ROOT / "benchmarks" / ".work",
        help="generated corpora, indexes and saved models (default: %(default)s)",
    )
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument(
        "--synth",
        type=int,
        nargs="*",
        default=[100_000],
        help="synthetic corpus sizes (default: 100000)",
    )
    parser.add_argument("--million", action="store_true", help="add a 1,000,000-paper corpus")
    parser.add_argument("--no-real", action="store_true", help="skip paperlists and scifact")
    parser.add_argument(
        "--tiny",
        action="store_true",
        help="a 600-paper corpus made from data/icml2026.jsonl; for the tests",
    )
    parser.add_argument(
        "--queries", type=int, default=2000, help="queries per corpus, half titles, half keywords"
    )
    parser.add_argument(
        "--rank-bm25-queries",
        type=int,
        default=1000,
        help="queries also run through rank_bm25 (parity + latency)",
    )
    parser.add_argument(
        "--rank-bm25-max-docs",
        type=int,
        default=200_000,
        help="skip rank_bm25 above this corpus size (it needs ~5 GB at 1M)",
    )
    parser.add_argument("--bot-queries", type=int, default=1000)
    parser.add_argument(
        "--query-only",
        action="store_true",
        help="only index build from tokens and query latency/parity (no engine, autocomplete, "
        "saved-index loads or bot start-up): the least a 1M latency comparison needs",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--targets-only",
        action="store_true",
        help="only issue 17's serving targets (build from text, bot memory, start-up, "
        "autocomplete, /search, a second process), in fresh processes; no rank_bm25/bm25s",
    )
    parser.add_argument(
        "--build-only",
        action="store_true",
        help="only the build from text of --targets-only (same fresh process and peak-PSS "
        "sampling): a few minutes at 1M instead of 20+",
    )
    parser.add_argument(
        "--startup-runs",
        type=int,
        help="bot start-ups measured alone, the best kept (default 2; --tiny: 0, the first "
        "of the two --targets-only processes is measured while alone, and 1 for bot start-up)",
    )
    parser.add_argument("--out", type=Path, help="also write the report here (markdown)")
    parser.add_argument("--quiet", action="store_true")
    return parser.parse_args(argv)

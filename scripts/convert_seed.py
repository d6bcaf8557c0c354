"""Rebuild data/icml2026.jsonl from the raw seed kept beside it: `python scripts/convert_seed.py`.

Optional arguments: SEED OUT (defaults: data/icml2026-abstracts.txt data/icml2026.jsonl).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.sources.seed import convert  # noqa: E402


def main(argv: list[str]) -> int:
    seed = Path(argv[0]) if argv else ROOT / "data" / "icml2026-abstracts.txt"
    out = Path(argv[1]) if len(argv) > 1 else ROOT / "data" / "icml2026.jsonl"
    count = convert(seed, out)
    print(f"wrote {count} papers to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""An extreme corpus, and what rendering one of its papers costs (issue 10, section 4).

    .venv/bin/python -m benchmarks.extreme

The records (`extreme_records`) are what `tests/app/test_extreme.py` runs the bot on: titles of
2,900 characters, LaTeX-dense abstracts of 170 KB with distinct math spans (each one new to the
converter's cache), 600 authors, mention/markdown payloads in every text field, ids and venue
names too long for a custom_id, malformed URLs. The script prints, for one such paper, the
baseline (the whole record's LaTeX converted, as every display did before the bound) against
what the bot does now: the loader's cap, the detail embed and the daily post with bounded
rendering, a search page's work, each timed here, in this process, on fresh spans.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

PAYLOAD = (
    "[click here](https://evil.example/login) <@123456789012345678> <@&42> <#1> @everyone "
    "@here <t:0:R> </help:1> ||spoiler|| `code` **bold** ~~x~~ __u__ "
)
LINE_PAYLOAD = "\n# HEADER\n-# subtext\n> quote\n```python\nprint(1)\n```\n"
BAD_URLS = (
    r"\url{https://github.com/foo/bar} https://. http://exa mple.com (see https://x.org/a). "
    "https://user@evil.example/x www.codeberg.org/a/b, "
)
LONG_VENUE = "NeurIPS 2025 Workshop: Optimal Transport and Machine Learning (OTML)"
VENUES = (LONG_VENUE, LONG_VENUE.replace("Optimal Transport", "Optimal Control"), "ICML 2026")
TITLE_CHARS = 2_900
ABSTRACT_CHARS = 170_000
AUTHORS = 600


def latex_text(rng: random.Random, size: int) -> str:
    """LaTeX-dense prose with distinct math spans, the payloads and malformed URLs mixed in."""
    pieces: list[str] = []
    total = 0
    i = 0
    while total < size:
        i += 1
        piece = rng.choice(
            [
                f"$\\alpha_{{{i}}}^{{{rng.randint(0, 99)}}}$ ",
                f"\\textbf{{term{i}}} \\cite{{ref{i}}} ",
                f"$\\mathcal{{O}}(n^{{{i % 97}}} \\log n)$ ",
                "optimal transport with $\\ell_1$ regularisation for models. ",
                PAYLOAD,
                LINE_PAYLOAD,
                BAD_URLS,
            ]
        )
        pieces.append(piece)
        total += len(piece)
    return "".join(pieces)[:size]


def extreme_records(papers: int = 8, seed: int = 10) -> list[dict[str, Any]]:
    """Project-format records; even ones have ids longer than a custom_id can hold."""
    rng = random.Random(seed)
    records = []
    for n in range(papers):
        records.append(
            {
                "id": f"https://example.org/{'x' * 110}/{n}:paper" if n % 2 == 0 else f"p{n}",
                "title": (PAYLOAD + latex_text(rng, TITLE_CHARS))[:TITLE_CHARS],
                "abstract": latex_text(rng, ABSTRACT_CHARS),
                "venue": VENUES[n % len(VENUES)],
                "year": 2026,
                "status": "Oral",
                "authors": [f"{PAYLOAD[:40]} Author_{i} *{i}*" for i in range(AUTHORS)],
                "keywords": [PAYLOAD, "# kw", "optimal transport"],
                "links": [
                    {"kind": "page", "url": "https://."},
                    {"kind": "pdf", "url": "https://openreview.net/pdf?id=" + "x" * 600},
                    {"kind": "code", "url": "https://github.com/a b/c"},
                    {"kind": "project", "url": "http://exa mple.com"},
                ],
            }
        )
    return records


def write_jsonl(records: list[dict[str, Any]], path: Path) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def _timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - started, out


def main() -> int:
    from bot.app import render
    from bot.app.exts.daily.embeds import daily_embed
    from bot.app.results.embeds import results_embed
    from bot.papers.corpus import load_corpus
    from bot.papers.latex import latex_to_unicode
    from bot.papers.records import Paper
    from bot.search.engine import SearchEngine

    def uncapped(seed: int) -> Paper:
        """A record as written (no loader cap), its spans new to the converter's cache."""
        raw = extreme_records(papers=1, seed=seed)[0]
        return Paper(id=raw["id"], title=raw["title"], abstract=raw["abstract"], venue="V")

    rows: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory() as work:
        path = write_jsonl(extreme_records(papers=4, seed=11), Path(work) / "x.jsonl")
        seconds, report = _timed(load_corpus, [path])
    rows.append(("load 4 records (cut to 1,000 / 20,000 characters)", seconds))
    baseline = uncapped(12).abstract
    rows.append(
        ("baseline: LaTeX of a whole 170 KB abstract", _timed(latex_to_unicode, baseline)[0])
    )
    rows.append(
        ("/paper embed, uncapped 170 KB paper", _timed(render.paper_embed, uncapped(13))[0])
    )
    day = date(2025, 3, 1)
    rows.append(("daily post embed, uncapped paper", _timed(daily_embed, uncapped(14), day)[0]))
    seconds, engine = _timed(SearchEngine, report.papers)
    rows.append(("index the 4 loaded papers", seconds))
    seconds, result = _timed(engine.search, "optimal transport", limit=4)
    rows.append(("search: a page of 4 hits with snippets", seconds))
    rows.append(("results embed of that page", _timed(results_embed, result)[0]))
    rows.append(("/paper embed, loaded paper", _timed(render.paper_embed, report.papers[1])[0]))
    width = max(len(name) for name, _ in rows)
    for name, seconds in rows:
        print(f"{name:<{width}}  {seconds * 1000:9.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

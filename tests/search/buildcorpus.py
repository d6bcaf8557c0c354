"""A corpus made from the test records (tests/data and data/icml2026.jsonl) for the build tests.

A few hundred papers that mix the records' titles, abstracts and keywords (LaTeX, accents,
hyphenated names, URLs, markdown), plus the bad lines the loader must report by `file:line`,
a duplicate id and a cut title. Deterministic: the pinned digests in test_buildtext depend
on every byte.
"""

from __future__ import annotations

import json
from pathlib import Path

from bot.papers.corpus import load_corpus
from tests.conftest import ICML, TEST_DATA

EXTRA = (
    "See https://example.org/code and WWW.Example.com/x for *code*; `ℓ₁` and naïve Schrödinger",
    "state-of-the-art AG-REPA k-means --- co-training -a- x-",
    "the of and a an in",  # stopwords only
    "Ｆｕｌｌｗｉｄｔｈ ﬁnite ligatures ² and Ångström, 80\\% of $O(\\log k)$ \\texttt{qPOTS}",
)


def write_build_corpus(folder: Path, n: int = 400) -> list[Path]:
    """The corpus files: a generated JSON Lines file, the LaTeX sample list and the ICML file."""
    sources = [ICML, TEST_DATA / "latex_sample.json", TEST_DATA / "iclr2018_sample.json"]
    papers = load_corpus(sources).papers
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(n):
        a, b, c = papers[i % len(papers)], papers[(i * 7 + 3) % len(papers)], papers[i * 5 % 11]
        words = b.abstract.split()
        abstract = " ".join(words[: 20 + i % 60]) + " " + EXTRA[i % len(EXTRA)] * (1 + i % 3)
        record = {
            "id": f"gen/{i:04d}-{a.id}",
            "venue": ["ICML 2026", "COLM 2025", "NeurIPS 2024"][i % 3],
            "year": 2024 + i % 3,
            "title": f"{a.title} {c.title.split()[0]}" if i % 4 else a.title,
            "authors": [*a.authors[:3], f"Author {i % 17}"],
            "abstract": abstract if i % 50 else (c.abstract + " ") * 30,
            "keywords": list(b.keywords[:2]) if i % 2 else [],
        }
        if i % 97 == 5:
            record["added"] = f"2026-11-0{1 + i % 9}T06:00:00Z"
        lines.append(json.dumps(record, ensure_ascii=i % 2 == 0))
        if i == 10:
            lines.append("{not json")
        if i == 20:
            lines.append("[1, 2]")
        if i == 30:
            lines.append(json.dumps(dict(record, title="dup")))  # duplicate id: dropped
        if i == 40:
            lines.append(json.dumps({"id": "gen/no-title", "abstract": "x"}))
        if i == 50:
            lines.append("")
    generated = folder / "generated.jsonl"
    generated.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [generated, TEST_DATA / "latex_sample.json", ICML]

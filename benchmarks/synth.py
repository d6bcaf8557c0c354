"""Synthetic paper corpora made from real abstracts, for benchmarks at 100k and 1M papers.

Each synthetic paper is recombined from the real papers (`Source`):
- its abstract has as many sentences as a randomly drawn real abstract, each sentence drawn
  from a random real abstract (so sentence and abstract lengths and the vocabulary stay real);
- its title is a real title drawn at random, its authors (1 to 8) real author names, its venue
  and year a real venue's.

Everything is drawn from one `random.Random(seed)`: the same seed and sources give the same
file, byte for byte. Written as the project's JSON Lines (`bot.papers.corpus` reads it as is).

    python -m benchmarks.synth --papers 100000 --out benchmarks/.work/synth-100000.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.papers.records import Paper

SYNTH_VERSION = "1"
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'$\\])")


@dataclass
class Source:
    """What synthetic papers are drawn from: real sentences, titles, authors and venues."""

    sentences: list[str]
    lengths: list[int]  # sentences per real abstract
    titles: list[str]
    authors: list[str]
    venues: list[tuple[str, int | None]]

    @classmethod
    def from_papers(cls, papers: Sequence[Paper]) -> Source:
        sentences: list[str] = []
        lengths: list[int] = []
        authors: set[str] = set()
        for paper in papers:
            parts = [s for s in _SENTENCE.split(paper.abstract.strip()) if s]
            if parts:
                sentences.extend(parts)
                lengths.append(len(parts))
            authors.update(paper.authors)
        if not sentences:
            raise ValueError("no abstract to draw sentences from")
        return cls(
            sentences=sentences,
            lengths=lengths,
            titles=[p.title for p in papers if p.title],
            authors=sorted(authors) or ["A. Author"],
            venues=sorted({(p.venue, p.year) for p in papers}, key=str),
        )


def records(source: Source, n: int, seed: int = 0):
    """`n` synthetic records (dicts in the project's JSONL shape), deterministic in `seed`."""
    rng = random.Random(seed)
    sentences, lengths = source.sentences, source.lengths
    titles, authors, venues = source.titles, source.authors, source.venues
    width = len(str(max(n - 1, 1)))
    for i in range(n):
        count = lengths[rng.randrange(len(lengths))]
        abstract = " ".join(sentences[rng.randrange(len(sentences))] for _ in range(count))
        venue, year = venues[rng.randrange(len(venues))]
        names = [authors[rng.randrange(len(authors))] for _ in range(rng.randint(1, 8))]
        paper_id = f"synth/{i:0{width}d}"
        yield {
            "id": paper_id,
            "venue": venue,
            "year": year,
            "title": titles[rng.randrange(len(titles))],
            "authors": names,
            "abstract": abstract,
            "links": [{"kind": "page", "url": f"https://example.org/{paper_id}"}],
        }


def write_corpus(source: Source, n: int, out: Path, seed: int = 0) -> Path:
    """Write `n` papers to `out` (atomically: a temporary file renamed at the end)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    with tmp.open("w", encoding="utf-8") as handle:
        batch: list[str] = []
        for record in records(source, n, seed):
            batch.append(json.dumps(record, ensure_ascii=False))
            if len(batch) >= 10_000:
                handle.write("\n".join(batch) + "\n")
                batch.clear()
        if batch:
            handle.write("\n".join(batch) + "\n")
    os.replace(tmp, out)
    return out


def cached_corpus(source: Source, n: int, folder: Path, seed: int = 0) -> Path:
    """The synthetic corpus of `n` papers under `folder`, written only when not there yet."""
    path = folder / f"synth-v{SYNTH_VERSION}-{n}-seed{seed}.jsonl"
    if not path.exists():
        write_corpus(source, n, path, seed)
    return path


def paperlists_corpus(n: int, folder: Path, paperlists: Path, seed: int = 0) -> Path | None:
    """The synthetic corpus of `n` papers recombined from the real paper lists in `paperlists`
    (written once into `folder`); None, with the reason printed, when the lists are absent."""
    from bot.config import EXCLUDED_STATUSES
    from bot.papers.corpus import load_corpus

    lists = sorted(paperlists.glob("*.json"))
    if not lists:
        print(f"no paper lists under {paperlists}: cannot build the synthetic corpus")
        return None
    real = load_corpus(lists, exclude_status=EXCLUDED_STATUSES).papers
    return cached_corpus(Source.from_papers(real), n, folder, seed)


def main(argv: list[str] | None = None) -> int:
    from bot.papers.corpus import load_corpus

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--from",
        dest="sources",
        type=Path,
        nargs="+",
        default=sorted(
            Path(__file__)
            .resolve()
            .parents[2]
            .joinpath("shared", "data", "paperlists")
            .glob("*.json")
        ),
    )
    args = parser.parse_args(argv)
    papers = load_corpus(args.sources)
    write_corpus(Source.from_papers(papers.papers), args.papers, args.out, args.seed)
    print(f"wrote {args.papers} papers to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

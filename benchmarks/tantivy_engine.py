"""tantivy, the comparison engine of the benchmarks (`bench` extra, never a runtime dependency).

One way to build and query it, shared by `benchmarks.known_items` (quality) and
`benchmarks.run` (speed, disk, memory), so both tables measure the same engine: a `body` text
field with tantivy's own `en_stem` tokenizer (BM25, k1 1.2, b 0.75, Lucene's idf) and a
stored integer `doc` (the position in the caller's list); a query's words OR-ed, as its
query parser does.
"""

from __future__ import annotations

import importlib.util
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NOT_INSTALLED = "tantivy: not installed (pip install .[bench])"
_NOT_WORD = re.compile(r"[^\w\s]|_")


def installed() -> bool:
    """Whether the `bench` extra's tantivy can be imported (checked without importing it)."""
    return importlib.util.find_spec("tantivy") is not None


@dataclass
class TantivyIndex:
    """A committed tantivy index and its searcher."""

    index: Any
    searcher: Any

    def search(self, query: str, k: int) -> list[tuple[float, Any]]:
        """(score, doc address) of the top `k`, best first; only words reach the query parser
        (no field:, quotes, +/- or boolean operators), so no query is a syntax error."""
        words = _NOT_WORD.sub(" ", query).lower().split()
        if not words:
            return []
        parsed = self.index.parse_query(" ".join(words), ["body"])
        hits: list[tuple[float, Any]] = self.searcher.search(parsed, k).hits
        return hits

    def doc_number(self, address: Any) -> int:
        """The position in the built list of the document at `address`."""
        return int(self.searcher.doc(address)["doc"][0])


def build(texts: Sequence[str], path: Path | None = None) -> TantivyIndex:
    """Index `texts` in memory, or in the empty folder `path` (created) when given."""
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", stored=False, tokenizer_name="en_stem")
    builder.add_integer_field("doc", stored=True, indexed=False)
    schema = builder.build()
    if path is not None:
        path.mkdir(parents=True, exist_ok=True)
    index = tantivy.Index(schema) if path is None else tantivy.Index(schema, path=str(path))
    writer = index.writer()
    for i, text in enumerate(texts):
        writer.add_document(tantivy.Document(body=text, doc=i))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return TantivyIndex(index, index.searcher())


def open_saved(path: Path) -> TantivyIndex:
    """A saved index, as a fresh process serving it would open it."""
    import tantivy

    index = tantivy.Index.open(str(path))
    return TantivyIndex(index, index.searcher())


def folder_mb(path: Path) -> float:
    """Bytes of every file under `path`, in MB."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


@dataclass
class Figures:
    """tantivy's side of one corpus in `benchmarks.run`."""

    build_s: float
    disk_mb: float
    latencies: list[float] = field(default_factory=list)  # seconds, one per query


def measure(texts: Sequence[str], queries: Sequence[str], folder: Path, k: int) -> Figures:
    """Build a saved index of `texts` in `folder` (emptied first), then time each query's top
    `k` one at a time (parse + search; the hits' addresses, no stored field read)."""
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    t0 = time.perf_counter()
    engine = build(texts, folder)
    figures = Figures(time.perf_counter() - t0, folder_mb(folder))
    for text in queries:
        t0 = time.perf_counter()
        engine.search(text, k)
        figures.latencies.append(time.perf_counter() - t0)
    return figures

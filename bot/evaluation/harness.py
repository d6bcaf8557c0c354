"""`python -m bot eval --beir DIR`: the bot's own search measured on a BEIR test collection.

The run goes through `SearchEngine.search` — the same query parsing, analyzer, indexed fields,
BM25 parameters and feedback as `/search` — so the figures describe what people get, not a
lookalike pipeline. Only snippets are skipped (they do not change the ranking). Metrics follow
trec_eval (`bot.evaluation.metrics`). Variants for experiments are chosen with
`--set key=value` (any [search] setting) and `--analyzer`, so every line of
docs/search-quality.md has its command.
"""

from __future__ import annotations

import csv
import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.config import ConfigError, SearchSettings, check_range
from bot.evaluation.metrics import mean_scores
from bot.papers.corpus import CorpusError, load_file
from bot.papers.records import Paper
from bot.search.analysis.analyzer import STOPWORDS, Analyzer
from bot.search.results import SearchError

if TYPE_CHECKING:
    from bot.search.engine import SearchEngine

log = logging.getLogger(__name__)

DEPTH = 100  # documents retrieved per query: Recall@100 needs the top 100
ANALYZERS = ("default", "plain", "stopwords", "stem")
# The [search] settings that change the ranking, echoed with every result.
RANKING_KEYS = (
    "k1",
    "b",
    "idf",
    "epsilon",
    "title_weight",
    "compound_weight",
    "prf_docs",
    "prf_terms",
    "prf_weight",
    "min_score_ratio",
    "proximity_weight",
)


class BeirError(CorpusError):
    """The folder is not a usable BEIR collection; the message names the file and the reason."""


@dataclass(frozen=True, slots=True)
class BeirSet:
    corpus: Path
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


@dataclass(slots=True)
class EvalReport:
    collection: str
    split: str
    settings: dict[str, object]
    analyzer: str
    docs: int
    queries: int
    scores: dict[str, float]
    index_seconds: float
    search_seconds: float
    failed: int = 0
    per_query: dict[str, list[str]] = field(default_factory=dict, repr=False)

    @property
    def ms_per_query(self) -> float:
        return 1000 * self.search_seconds / self.queries if self.queries else 0.0

    def to_json(self) -> dict[str, object]:
        names = ("collection", "split", "analyzer", "settings", "docs", "queries")
        return {
            **{name: getattr(self, name) for name in names},
            "failed_queries": self.failed,
            **{k: round(v, 4) for k, v in self.scores.items()},
            "index_seconds": round(self.index_seconds, 3),
            "search_seconds": round(self.search_seconds, 3),
            "ms_per_query": round(self.ms_per_query, 3),
        }

    def text(self) -> str:
        s = self.scores
        changed = " ".join(f"{k}={v}" for k, v in self.settings.items())
        return (
            f"{self.collection} ({self.split}): {self.docs} docs, {self.queries} queries "
            f"(analyzer {self.analyzer}: {changed})\n"
            f"nDCG@10   {s['ndcg@10']:.4f}\n"
            f"Recall@100 {s['recall@100']:.4f}\n"
            f"MRR@10    {s['mrr@10']:.4f}\n"
            f"index {self.index_seconds:.2f}s, search {self.search_seconds:.2f}s "
            f"({self.ms_per_query:.2f} ms/query)"
            + (f", {self.failed} queries left nothing to search" if self.failed else "")
            + "\n"
        )


def read_beir(folder: Path, split: str = "test") -> BeirSet:
    """corpus.jsonl, queries.jsonl and qrels/<split>.tsv of a BEIR folder; judged queries only."""
    corpus = folder / "corpus.jsonl"
    qrels_path = folder / "qrels" / f"{split}.tsv"
    for path in (corpus, folder / "queries.jsonl", qrels_path):
        if not path.is_file():
            raise BeirError(
                f"{path}: not found (a BEIR folder holds corpus.jsonl, "
                "queries.jsonl and qrels/<split>.tsv)"
            )
    qrels: dict[str, dict[str, int]] = {}
    with qrels_path.open(encoding="utf-8", newline="") as handle:
        for line_no, row in enumerate(csv.reader(handle, delimiter="\t"), start=1):
            if not row or (line_no == 1 and not row[-1].lstrip("-").isdigit()):
                continue  # blank line, or the header line
            if len(row) != 3 or not row[2].lstrip("-").isdigit():
                raise BeirError(f"{qrels_path}:{line_no}: expected query-id, corpus-id, score")
            qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    queries: dict[str, str] = {}
    with (folder / "queries.jsonl").open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                qid, text = str(record["_id"]), str(record["text"])
            except (ValueError, KeyError, TypeError) as exc:
                raise BeirError(f"{folder / 'queries.jsonl'}:{line_no}: {exc}") from exc
            if qid in qrels:
                queries[qid] = text
    missing = sorted(set(qrels) - set(queries))
    if missing:
        raise BeirError(
            f"{qrels_path}: {len(missing)} judged queries missing from "
            f"queries.jsonl (first: {missing[0]})"
        )
    return BeirSet(corpus, queries, qrels)


def make_analyzer(name: str) -> Analyzer:
    """The analyzer variants compared in docs/search-quality.md; `default` is the bot's."""
    if name == "default":
        return Analyzer()
    if name == "plain":
        return Analyzer(stopwords=frozenset(), stem=False)
    if name == "stopwords":
        return Analyzer(stopwords=STOPWORDS, stem=False)
    if name == "stem":
        return Analyzer(stopwords=frozenset(), stem=True)
    raise ValueError(f"unknown analyzer {name!r}; choose one of {', '.join(ANALYZERS)}")


def apply_overrides(settings: SearchSettings, pairs: Sequence[str]) -> SearchSettings:
    """`key=value` strings applied to [search] settings, typed like the settings file."""
    known = {f.name: f for f in fields(SearchSettings)}
    changes: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or key not in known:
            raise ConfigError(
                f"--set {pair!r}: expected KEY=VALUE with KEY one of " + ", ".join(known)
            )
        default = getattr(SearchSettings(), key)
        try:
            if isinstance(default, str):
                changes[key] = raw.strip()
            else:
                changes[key] = int(raw) if isinstance(default, int) else float(raw)
        except ValueError as exc:
            raise ConfigError(f"--set {pair!r}: {key} must be a number") from exc
        check_range("search", key, changes[key])
    return replace(settings, **changes)


def run_queries(
    engine: SearchEngine, queries: Mapping[str, str], depth: int = DEPTH
) -> tuple[dict[str, list[str]], float, int]:
    """Ranked paper ids per query through `engine.search`; seconds spent; empty queries."""
    run: dict[str, list[str]] = {}
    failed = 0
    started = time.perf_counter()
    for qid, text in queries.items():
        try:
            result = engine.search(text, limit=depth, snippets=False, suggest=False)
        except SearchError as exc:
            log.info("query %s left nothing to search (%s)", qid, exc)
            failed += 1
            run[qid] = []
            continue
        run[qid] = [hit.paper.id for hit in result.hits]
    return run, time.perf_counter() - started, failed


def _measure(
    name: str,
    split: str,
    papers: Sequence[Paper],
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    settings: SearchSettings,
    analyzer: str,
    started: float,
) -> EvalReport:
    """Index `papers` as the bot would, run `queries`, score the run against `qrels`."""
    from bot.search.engine import SearchEngine

    engine = SearchEngine(papers, analyzer=make_analyzer(analyzer), settings=settings)
    index_seconds = time.perf_counter() - started
    run, seconds, failed = run_queries(engine, queries)
    return EvalReport(
        collection=name,
        split=split,
        settings={key: getattr(settings, key) for key in RANKING_KEYS},
        analyzer=analyzer,
        docs=len(papers),
        queries=len(queries),
        scores=mean_scores(run, qrels),
        index_seconds=index_seconds,
        search_seconds=seconds,
        failed=failed,
        per_query=run,
    )


def evaluate_known_items(
    folder: Path,
    kind: str,
    split: str = "test",
    settings: SearchSettings | None = None,
    analyzer: str = "default",
) -> EvalReport:
    """The bot on a known-item set built from the paper lists in `folder` (accepted papers,
    as the bot loads them): each paper's `kind` of words as the query, the paper as answer."""
    from bot.evaluation.knownitem import known_item_set

    files = sorted(folder.glob("*.json"))
    if not files:
        raise BeirError(f"{folder}: no paper lists (*.json) found")
    started = time.perf_counter()
    papers: list[Paper] = []
    for path in files:
        papers += load_file(path, exclude_status=("Reject", "Withdraw", "Desk Reject")).papers
    data = known_item_set(papers, kind, split)
    name = f"{folder.name} known items: {kind}"
    settings = settings or SearchSettings()
    return _measure(name, split, papers, data.queries, data.qrels, settings, analyzer, started)


def evaluate(
    folder: Path,
    split: str = "test",
    settings: SearchSettings | None = None,
    analyzer: str = "default",
) -> EvalReport:
    """Index the collection as the bot would, run every judged query, score the run."""
    data = read_beir(folder, split)
    started = time.perf_counter()
    report = load_file(data.corpus, exclude_status=())
    for problem in report.problems[:5]:
        log.warning("%s", problem)
    settings = settings or SearchSettings()
    return _measure(
        folder.name, split, report.papers, data.queries, data.qrels, settings, analyzer, started
    )

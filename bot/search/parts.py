"""What a `SearchEngine` serves from: the papers and their columns (`PaperLookups`), the index,
the analyzer, the settings, the filters over them, and the caches built on them.

Built together (`EngineParts.build`) and held by the engine as one attribute, so an engine
whose saved files turn out damaged swaps every part for a rebuilt set in one store
(`SearchEngine._rebuild`), its caches (speller, document terms, authors) with them. Every cache
that what users type reaches is bounded (`bot.search.caches`); `cache_sizes` lists them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from typing import Any, Generic, TypeVar, cast

from bot.config import SearchSettings
from bot.papers.corpus import LoadReport
from bot.papers.latex import span_to_text
from bot.papers.records import Paper
from bot.search.analysis.analyzer import EXPAND_CACHE, Analyzer, raw_words
from bot.search.caches import LRU
from bot.search.files.integrity import IntegrityCheck
from bot.search.files.paperstore import PaperStore
from bot.search.index.postings import BM25Index, BM25Params
from bot.search.query.filters import PlanFilters
from bot.search.query.notices import Calibration, calibrate
from bot.search.query.proximity import run_starts_cache
from bot.search.suggest.lookups import PaperLookups
from bot.search.suggest.spelling import Speller

# Papers whose terms are kept, for feedback and /similar (~2 KB each at 100k papers): the
# top hits of recent queries.
DOC_TERMS_CACHE = 512
T = TypeVar("T")


def doc_text(paper: Paper, title_weight: int = 1) -> str:
    """What is indexed: the title and the keywords (each repeated `title_weight` times) and
    the abstract.

    Keywords are the authors' own words for the topic (OpenReview venues carry them): a
    search for `world models` should find a paper that lists it even if its abstract says
    "learned simulators". Like the title they name what the paper is about, so they weigh
    as much (keyword known-item set, train half: nDCG@10 0.9329 once, 0.9609 weighted).
    BEIR collections have none, so their figures do not move.
    """
    weight = max(1, title_weight)
    parts = [paper.title] * weight + [paper.abstract]
    if paper.keywords:
        parts += ["; ".join(paper.keywords)] * weight
    return " ".join(parts)


@dataclass(eq=False)
class EngineParts:
    """One corpus's parts: what its searches read, and what `SearchEngine.load` learns once
    they are built (how the corpus was read, the digest check of its saved files)."""

    settings: SearchSettings
    analyzer: Analyzer
    index: BM25Index
    lookups: PaperLookups
    filters: PlanFilters
    load_report: LoadReport | None = field(default=None)
    integrity: IntegrityCheck | None = field(default=None)

    @classmethod
    def build(
        cls,
        papers: Sequence[Paper],
        analyzer: Analyzer,
        settings: SearchSettings,
        index: BM25Index | None = None,
    ) -> EngineParts:
        """The parts over `papers` (a saved `PaperStore`, or any sequence), indexing them
        unless `index` is given."""
        lookups = PaperLookups.of(papers)
        s = settings
        index = index or BM25Index.build_parallel(
            lookups.papers,
            lambda p: raw_words(doc_text(p, s.title_weight)),
            BM25Params(s.k1, s.b, s.epsilon, s.idf),
            expand=analyzer.expand,
        )
        if index.n_docs != len(lookups.papers):
            raise ValueError("index and corpus disagree on the number of papers")
        analyzer.forget_expansions()
        filters = PlanFilters(index, analyzer, lookups)
        return cls(settings, analyzer, index, lookups, filters)

    @cached_property
    def speller(self) -> Speller:
        return Speller(self.analyzer, self.index, lambda doc: doc_text(self.lookups.papers[doc]))

    @cached_property
    def calibration(self) -> Calibration:
        """What a good match scores on this corpus, for the weak-match notice
        (`bot.search.query.notices`): computed on the first query with words, kept with the
        index it measured (a reload's new parts measure again)."""
        return calibrate(self)

    @cached_property
    def _doc_terms_cache(self) -> LRU[int, list[str]]:
        return LRU(DOC_TERMS_CACHE)

    def doc_terms(self, doc: int) -> list[str]:
        """Index terms of one paper, for feedback; cached because top hits repeat."""
        found = self._doc_terms_cache.get(doc)
        if found is None:
            text = doc_text(self.lookups.papers[doc], self.settings.title_weight)
            found = self._doc_terms_cache.put(doc, self.analyzer(text))
        return found

    def cache_sizes(self) -> dict[str, tuple[int, int]]:
        """Every cache that what users type reaches, as (size now, bound): for the test that
        holds them to their bounds and `benchmarks/query_memory.py`. The expansions are a
        build's (empty once it is done), the LaTeX spans those of queries and shown papers."""
        stems = self.analyzer._cache
        speller = self.__dict__.get("speller")  # built on first use
        papers = self.lookups.papers
        latex = span_to_text.cache_info()
        run_starts = run_starts_cache(self.index)
        sizes = {
            "stems": (len(stems), 2 * stems.size),
            "expansions": (len(self.analyzer._expanded), EXPAND_CACHE),
            "corrections": (len(speller._cache), speller._cache.bound) if speller else (0, 0),
            "doc terms": (len(self._doc_terms_cache), self._doc_terms_cache.bound),
            "run starts (bytes)": (run_starts.size, run_starts.bound),
            "latex spans": (latex.currsize, latex.maxsize or 0),
        }
        if isinstance(papers, PaperStore):
            sizes["papers"] = (len(papers._recent), papers._recent.bound)
            blocks = papers.records.cache
            sizes["paper blocks (bytes)"] = (blocks.size, blocks.bound)
        return sizes


class Part(Generic[T]):
    """An engine attribute read from its current parts (`engine._parts`), so a rebuild that
    swaps the parts swaps what every such attribute answers. `path` reaches inside a part
    (`lookups.papers`); a `settable` part (`load` fills it in once built) can be assigned
    through the engine, every other one is read-only."""

    def __init__(self, path: str = "", *, settable: bool = False) -> None:
        self.path = path
        self.settable = settable

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self.path = self.path or name

    def __get__(self, engine: Any, owner: type[Any] | None = None) -> T:
        return cast(T, attrgetter(self.path)(engine._parts))

    def __set__(self, engine: Any, value: T) -> None:
        if not self.settable:
            raise AttributeError(f"the engine's {self.path} is read-only")
        setattr(engine._parts, self.path, value)

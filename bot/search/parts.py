"""What a `SearchEngine` serves from: the papers and their columns (`PaperLookups`), the index,
the analyzer, the settings, the filters over them, and the caches built on them.

Built together (`EngineParts.build`) and held by the engine as one attribute, so an engine
whose saved files turn out damaged swaps every part for a rebuilt set in one store
(`SearchEngine._rebuild`), its caches (speller, document terms, authors) with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from typing import Any, Generic, TypeVar, cast

from bot.config import SearchSettings
from bot.papers.corpus import LoadReport
from bot.papers.records import Paper
from bot.search.analysis.analyzer import Analyzer, raw_words
from bot.search.files.integrity import IntegrityCheck
from bot.search.index.postings import BM25Index, BM25Params
from bot.search.query.filters import PlanFilters
from bot.search.suggest.lookups import PaperLookups
from bot.search.suggest.spelling import Speller

DOC_TERMS_CACHE = 4096
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
            BM25Params(s.k1, s.b, s.epsilon),
            expand=analyzer.expand,
        )
        if index.n_docs != len(lookups.papers):
            raise ValueError("index and corpus disagree on the number of papers")
        filters = PlanFilters(index, analyzer, lookups)
        return cls(settings, analyzer, index, lookups, filters)

    @cached_property
    def speller(self) -> Speller:
        return Speller(self.analyzer, self.index, lambda doc: doc_text(self.lookups.papers[doc]))

    @cached_property
    def _doc_terms_cache(self) -> dict[int, list[str]]:
        return {}

    def doc_terms(self, doc: int) -> list[str]:
        """Index terms of one paper, for feedback; cached because top hits repeat."""
        cache = self._doc_terms_cache
        found = cache.get(doc)
        if found is None:
            if len(cache) >= DOC_TERMS_CACHE:
                cache.clear()
            found = cache[doc] = self.analyzer(
                doc_text(self.lookups.papers[doc], self.settings.title_weight)
            )
        return found


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

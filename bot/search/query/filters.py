"""Which papers a plan may list: its filters (author, venue, year), its excluded words, and
the paper `/similar` leaves out. A part of `SearchEngine`, kept apart so that `/search`,
daily topic pools and `/similar` (`SearchEngine._narrow`) and pruned ranking
(`bot.search.ranking.pages`, which needs the restriction before scoring) share one filter.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bot.search.analysis.analyzer import Analyzer
from bot.search.index.postings import BM25Index
from bot.search.results import Plan
from bot.search.suggest.lookups import PaperLookups


class PlanFilters:
    """Filters over an index's documents: excluded words from its postings (analysed as the
    documents were), author/venue/year from the corpus's columns (`lookups`)."""

    def __init__(self, index: BM25Index, analyzer: Analyzer, lookups: PaperLookups) -> None:
        self.index = index
        self.analyzer = analyzer
        self.lookups = lookups

    def allowed(self, plan: Plan) -> np.ndarray | None:
        """Per paper, whether `plan`'s restrictions let it be listed: not the skipped paper,
        none of the excluded words (all words of an excluded phrase), the author/venue/year
        filters; None when there are none. The one filter of `/search`, pools and `/similar`
        (`_narrow`), also handed to pruned ranking (`bot.search.ranking.pages`)."""
        filters = plan.filters
        if plan.skip is None and not plan.excludes and filters.is_empty():
            return None
        keep = np.ones(self.index.n_docs, dtype=bool)
        if plan.skip is not None:
            keep[plan.skip] = False
        for value in plan.excludes:
            terms = sorted(set(self.analyzer(value)))
            if not terms:
                continue
            has_all = self.index.postings(terms[0])[0]
            for term in terms[1:]:
                has_all = np.intersect1d(has_all, self.index.postings(term)[0], assume_unique=True)
            keep[has_all] = False
        lookups = self.lookups
        if filters.venue:
            keep &= np.isin(lookups.venue_of, lookups.resolve_venues(filters.venue))
        if filters.year:
            keep &= np.asarray(lookups.year_of) == filters.year
        for author in filters.authors:
            wrote = np.zeros(self.index.n_docs, dtype=bool)
            wrote[lookups.authors.docs(author)] = True
            keep &= wrote
        return keep

    def without(self, ids: np.ndarray, excludes: Sequence[str]) -> np.ndarray:
        """Mask of documents containing none of the excluded words (all words of a phrase)."""
        allowed = self.allowed(Plan(query="", excludes=tuple(excludes)))
        return np.ones(ids.shape[0], dtype=bool) if allowed is None else allowed[ids]

"""Finding papers without a search: by id, by the end of an id, by title, by title prefix
(autocomplete), by venue, at random. A mixin of `SearchEngine`, kept apart because none of
it ranks: it reads the engine's columns (ids, titles, venues, years: memory-mapped arrays for
a saved store) and the id and title indexes (`columns`, `titleindex`), never a postings list.
"""

from __future__ import annotations

import random as random_module
import re
from collections.abc import Sequence

import numpy as np

from bot.papers.corpus import VENUE_NAMES
from bot.papers.records import Paper
from bot.search.analysis.analyzer import fold
from bot.search.files.columns import IdLookup
from bot.search.files.paperstore import PaperStore
from bot.search.results import BadFilter, IndexDamaged, UnknownPaper
from bot.search.suggest.authors import AuthorIndex
from bot.search.suggest.titles import TitleIndex


class PaperLookups:
    """Lookups over the columns `SearchEngine.__init__` sets."""

    papers: Sequence[Paper]
    _ids: Sequence[str]
    _titles: Sequence[str]
    _venues: list[str]
    _venue_of: np.ndarray
    _year_of: np.ndarray
    _lookup: IdLookup
    _title_index: TitleIndex
    _damaged: str | None

    def _refuse_if_damaged(self) -> None:
        if self._damaged is not None:
            raise IndexDamaged()

    # -- lookups ----------------------------------------------------------------------------

    def paper(self, ref: str) -> Paper:
        """Exact id, then an id without its venue prefix, then the title (exact, then prefix)."""
        self._refuse_if_damaged()
        ref = (ref or "").strip()
        if not ref:
            raise UnknownPaper(ref)
        pos = self._lookup.find(ref)
        if pos is not None:
            return self.papers[pos]
        suffix = self._lookup.ending_with("/" + ref)
        if len(suffix) == 1:
            return self.papers[suffix[0]]
        want = fold(ref).rstrip("…").strip()
        exact, prefix = self._title_index.title_match(want)
        if exact is not None:
            return self.papers[exact]
        if len(prefix) == 1 or (prefix and len(want) >= 20):
            return self.papers[prefix[0]]
        raise UnknownPaper(ref)

    @property
    def authors(self) -> AuthorIndex:
        """Author names and their papers, built on first use (most searches name no author)."""
        index: AuthorIndex | None = self.__dict__.get("_authors")
        if index is None:
            if isinstance(self.papers, PaperStore):
                lists: Sequence[Sequence[str]] = self.papers.author_lists()
            else:
                lists = [p.authors for p in self.papers]
            index = self.__dict__["_authors"] = AuthorIndex.build(lists)
        return index

    def suggest_authors(self, prefix: str, limit: int = 25) -> list[tuple[str, int]]:
        """(name, number of papers) for autocomplete where an option is an author."""
        return self.authors.complete(prefix, limit)

    def has_paper(self, paper_id: str) -> bool:
        return self._lookup.find(paper_id) is not None

    def venues(self) -> dict[str, int]:
        counts = np.bincount(self._venue_of, minlength=len(self._venues)).tolist()
        return dict(zip(self._venues, counts, strict=True))

    def resolve_venues(self, venue: str) -> list[int]:
        """Positions in `self._venues` matching `venue` (`colm`, `COLM 2025`, `iclr2018`),
        common names included (`nips` and `neurips2018` find "NeurIPS 2018")."""
        want = fold(venue).replace(" ", "")
        alias = re.fullmatch(r"([a-z]+)(\d*)", want)
        if alias and alias.group(1) in VENUE_NAMES:
            want = fold(VENUE_NAMES[alias.group(1)]) + alias.group(2)
        found = [i for i, v in enumerate(self._venues) if want in fold(v).replace(" ", "")]
        if not found:
            known = ", ".join(self._venues)
            raise BadFilter(f"Unknown venue {venue!r}. Venues in this corpus: {known}.")
        return found

    @property
    def ids(self) -> Sequence[str]:
        """Paper ids in corpus order (positions match `papers` and `added`)."""
        return self._ids

    def in_venue(self, venue: str) -> list[int]:
        """Positions of the papers of `venue`; BadFilter names the venues when none match."""
        return np.flatnonzero(np.isin(self._venue_of, self.resolve_venues(venue))).tolist()

    def suggest(self, prefix: str, limit: int = 25) -> list[tuple[str, str]]:
        """(id, title) pairs for autocomplete, from memory only: no paper is decoded or read,
        so Discord's 3 s autocomplete window is never at risk."""
        return [(self._ids[i], self._titles[i]) for i in self._complete_positions(prefix, limit)]

    def complete(self, prefix: str, limit: int = 25) -> list[Paper]:
        """The papers of `suggest`, for surfaces that show more than a title."""
        return [self.papers[i] for i in self._complete_positions(prefix, limit)]

    def _complete_positions(self, prefix: str, limit: int) -> list[int]:
        """Title prefix first, then word starts, then inside a title; an exact id first of all."""
        if self._damaged is not None:  # autocomplete offers nothing rather than an error
            return []
        want = fold(prefix or "").strip()
        if not want:
            return list(range(min(limit, len(self._ids))))
        pos = self._lookup.find(prefix.strip())
        return self._title_index.complete(want, limit, [pos] if pos is not None else [])

    def random(self, venue: str | None = None, rng: random_module.Random | None = None) -> Paper:
        self._refuse_if_damaged()
        rng = rng or random_module.Random()
        if venue:
            allowed = np.flatnonzero(np.isin(self._venue_of, self.resolve_venues(venue)))
            return self.papers[int(allowed[rng.randrange(len(allowed))])]
        return self.papers[rng.randrange(len(self.papers))]

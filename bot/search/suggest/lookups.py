"""Finding papers without a search: by id, by the end of an id, by title, by title prefix
(autocomplete), by venue, at random. A part of `SearchEngine`, kept apart because none of it
ranks: it reads the corpus's columns (ids, titles, venues, years: memory-mapped arrays for a
saved store) and the id and title indexes (`columns`, `titleindex`), never a postings list.
"""

from __future__ import annotations

import random as random_module
import re
from collections.abc import Sequence
from functools import cached_property

import numpy as np

from bot.papers.corpus import VENUE_NAMES
from bot.papers.records import Paper
from bot.search.analysis.analyzer import fold
from bot.search.files.columns import IdLookup
from bot.search.files.paperstore import PaperStore
from bot.search.results import BadFilter, UnknownPaper
from bot.search.suggest.authors import AuthorIndex
from bot.search.suggest.titles import TitleIndex


class PaperLookups:
    """The papers and their columns, in corpus order (`of` builds them), and the lookups
    over them. It never refuses: the engine says when its files are damaged."""

    def __init__(
        self,
        papers: Sequence[Paper],
        *,
        ids: Sequence[str],
        titles: Sequence[str],
        venue_names: list[str],
        venue_of: np.ndarray,
        year_of: np.ndarray,
        added: Sequence[str | None],
        lookup: IdLookup,
        title_index: TitleIndex,
        aliases: dict[str, str] | None = None,
    ) -> None:
        self.papers = papers
        self.ids = ids  # paper ids in corpus order (positions match `papers` and `added`)
        self.titles = titles
        self.venue_names = venue_names  # sorted; `venue_of` holds positions in it
        self.venue_of = venue_of
        self.year_of = year_of  # 0 where unknown
        self.added = added  # first-seen stamps (bot/search/recent)
        self.lookup = lookup
        self.title_index = title_index
        # Other ids of merged versions -> the merged paper's id (`bot.papers.versions`).
        self.aliases = aliases or {}

    @classmethod
    def of(cls, papers: Sequence[Paper]) -> PaperLookups:
        """The columns of `papers`: a saved store (`SearchEngine.load`) has them ready-made
        and decodes a paper only on access; a list gets them from one pass over it."""
        if isinstance(papers, PaperStore):
            return cls(
                papers,
                ids=papers.ids,
                titles=papers.titles,
                venue_names=list(papers.venues),
                venue_of=papers.venue_of,
                year_of=papers.year_of,
                added=papers.added,
                lookup=papers.lookup,
                title_index=papers.title_index,
                aliases=papers.aliases,
            )
        listed = list(papers)
        ids = [p.id for p in listed]
        titles = [p.title for p in listed]
        venue_names = sorted({p.venue for p in listed})
        venue_pos = {v: i for i, v in enumerate(venue_names)}
        return cls(
            listed,
            ids=ids,
            titles=titles,
            venue_names=venue_names,
            venue_of=np.array([venue_pos[p.venue] for p in listed], dtype=np.int32),
            year_of=np.array([p.year or 0 for p in listed], dtype=np.int32),
            added=[p.added for p in listed],
            lookup=IdLookup.of(ids),
            title_index=TitleIndex.of(titles),
            aliases={alias: p.id for p in listed for alias in p.aliases},
        )

    def paper(self, ref: str) -> Paper:
        """Exact id, then an id without its venue prefix, then the title (exact, then prefix)."""
        ref = (ref or "").strip()
        if not ref:
            raise UnknownPaper(ref)
        pos = self.find_id(ref)
        if pos is not None:
            return self.papers[pos]
        suffix = self.lookup.ending_with("/" + ref)
        if len(suffix) == 1:
            return self.papers[suffix[0]]
        want = fold(ref).rstrip("…").strip()
        exact, prefix = self.title_index.title_match(want)
        if exact is not None:
            return self.papers[exact]
        if len(prefix) == 1 or (prefix and len(want) >= 20):
            return self.papers[prefix[0]]
        raise UnknownPaper(ref)

    @cached_property
    def authors(self) -> AuthorIndex:
        """Author names and their papers, built on first use (most searches name no author)."""
        if isinstance(self.papers, PaperStore):
            lists: Sequence[Sequence[str]] = self.papers.author_lists()
        else:
            lists = [p.authors for p in self.papers]
        return AuthorIndex.build(lists)

    def suggest_authors(self, prefix: str, limit: int = 25) -> list[tuple[str, int]]:
        """(name, number of papers) for autocomplete where an option is an author."""
        return self.authors.complete(prefix, limit)

    def find_id(self, paper_id: str) -> int | None:
        """The position of the paper with this id, or of the merged paper it is a version of."""
        pos = self.lookup.find(paper_id)
        if pos is None and paper_id in self.aliases:
            pos = self.lookup.find(self.aliases[paper_id])
        return pos

    def has_paper(self, paper_id: str) -> bool:
        return self.find_id(paper_id) is not None

    def venues(self) -> dict[str, int]:
        counts = np.bincount(self.venue_of, minlength=len(self.venue_names)).tolist()
        return dict(zip(self.venue_names, counts, strict=True))

    def resolve_venues(self, venue: str) -> list[int]:
        """Positions in `venue_names` matching `venue` (`colm`, `COLM 2025`, `iclr2018`),
        common names included (`nips` and `neurips2018` find "NeurIPS 2018")."""
        want = fold(venue).replace(" ", "")
        alias = re.fullmatch(r"([a-z]+)(\d*)", want)
        if alias and alias.group(1) in VENUE_NAMES:
            want = fold(VENUE_NAMES[alias.group(1)]) + alias.group(2)
        found = [i for i, v in enumerate(self.venue_names) if want in fold(v).replace(" ", "")]
        if not found:
            known = ", ".join(self.venue_names)
            raise BadFilter(f"Unknown venue {venue!r}. Venues in this corpus: {known}.")
        return found

    def in_venue(self, venue: str) -> list[int]:
        """Positions of the papers of `venue`; BadFilter names the venues when none match."""
        return np.flatnonzero(np.isin(self.venue_of, self.resolve_venues(venue))).tolist()

    def suggest(self, prefix: str, limit: int = 25) -> list[tuple[str, str]]:
        """(id, title) pairs for autocomplete, from memory only: no paper is decoded or read,
        so Discord's 3 s autocomplete window is never at risk."""
        return [(self.ids[i], self.titles[i]) for i in self.complete_positions(prefix, limit)]

    def complete(self, prefix: str, limit: int = 25) -> list[Paper]:
        """The papers of `suggest`, for surfaces that show more than a title."""
        return [self.papers[i] for i in self.complete_positions(prefix, limit)]

    def complete_positions(self, prefix: str, limit: int) -> list[int]:
        """Title prefix first, then word starts, then inside a title; an exact id first of all."""
        want = fold(prefix or "").strip()
        if not want:
            return list(range(min(limit, len(self.ids))))
        pos = self.lookup.find(prefix.strip())
        return self.title_index.complete(want, limit, [pos] if pos is not None else [])

    def random(self, venue: str | None = None, rng: random_module.Random | None = None) -> Paper:
        rng = rng or random_module.Random()
        if venue:
            allowed = np.flatnonzero(np.isin(self.venue_of, self.resolve_venues(venue)))
            return self.papers[int(allowed[rng.randrange(len(allowed))])]
        return self.papers[rng.randrange(len(self.papers))]

"""What a search answers with: hits, pages of results, the plan a query runs as, and the
errors a user may see. Plain records, so the features and surfaces never import the engine's
internals to read an answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.papers.records import Paper


@dataclass(frozen=True, slots=True)
class Hit:
    """A ranked paper: `snippet` is one or two abstract sentences, matched words in **bold**."""

    paper: Paper
    score: float
    snippet: str
    rank: int
    # The paper's authors that the query's `author:` filter matched, in the paper's own spelling:
    # the hit line shows them instead of "three names et al." (issue 27).
    matched_authors: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = self.paper.to_json()
        data["score"] = self.score
        data["snippet"] = self.snippet
        data["rank"] = self.rank
        if self.matched_authors:
            data["matched_authors"] = list(self.matched_authors)
        return data


@dataclass(frozen=True, slots=True)
class Filters:
    """Restrictions on a search, matched case-insensitively (venue and author by substring)."""

    venue: str | None = None
    year: int | None = None
    authors: tuple[str, ...] = ()

    def is_empty(self) -> bool:
        return self.venue is None and self.year is None and not self.authors


@dataclass(slots=True)
class SearchResult:
    """One page of hits plus how many papers matched in all (for "page 1/N · M matches").

    `total` is exact when `total_exact`, else a true lower bound, shown as "M+ matches"
    (Lucene's TotalHits relation GREATER_THAN_OR_EQUAL_TO, Elasticsearch's "10000+"): the
    engine ranks the best hits without scoring every match (`bot.search.ranking.pages`) and never
    shows a count it has not proven. A lower bound always exceeds the last hit of the page,
    so the next page exists; a short page always has the exact total.
    """

    query: str
    hits: list[Hit]
    total: int
    offset: int = 0
    limit: int = 10
    terms: tuple[str, ...] = field(default=())
    # The query with out-of-vocabulary words corrected (`difusion` -> `diffusion`), if any.
    suggestion: str | None = None
    total_exact: bool = True
    # Plain-text lines a page shows above its hits, in order: e.g. that no paper has a quoted
    # phrase and these are the best matches for its words, or that every match is weak.
    notices: tuple[str, ...] = ()
    # The order of the hits: "relevance" (default), "new" or "old" (`sort:` in the query).
    sort: str = "relevance"

    @property
    def pages(self) -> int:
        """The number of pages (at least this many when the total is a lower bound)."""
        return max(1, -(-self.total // self.limit)) if self.limit else 1

    @property
    def page(self) -> int:
        return self.offset // self.limit + 1 if self.limit else 1

    @property
    def has_next(self) -> bool:
        """A page after this one holds hits."""
        return self.offset + self.limit < self.total

    @property
    def past_end(self) -> bool:
        """Papers matched, but this page starts after the last of them."""
        return not self.hits and self.total > 0 and self.offset >= self.total

    def matches_text(self) -> str:
        """ "1 match", "42 matches", or "1200+ matches" for a lower bound."""
        if self.total_exact:
            return "1 match" if self.total == 1 else f"{self.total} matches"
        return f"{self.total}+ matches"

    def pages_text(self) -> str:
        """The page count as shown after "page 2/": "7", or "40+" for a lower bound."""
        return str(self.pages) if self.total_exact else f"{self.pages}+"

    def empty_text(self) -> str:
        """What an empty page says, the same on every surface."""
        if self.past_end:
            return (
                f"{self.matches_text()}; page {self.page} is past the end "
                f"(last page {self.pages_text()})."
            )
        if self.suggestion:
            return f"No match for {self.query}; did you mean **{self.suggestion}**?"
        return f"No papers match {self.query!r}."


@dataclass(frozen=True, slots=True)
class Plan:
    """A query as the engine runs it: analysed terms, filters, and what was corrected.

    Built once (`SearchEngine.plan`) and used both to rank (`/search`) and to select (daily
    topic pools), so the two can never disagree on which papers match.
    """

    query: str
    terms: tuple[str, ...] = ()
    weights: tuple[float, ...] | None = None
    filters: Filters = field(default_factory=Filters)
    phrases: tuple[tuple[str, ...], ...] = ()
    excludes: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    skip: int | None = None
    suggestion: str | None = None
    # What the page says above its hits (a quoted phrase no paper has, dropped), and the order.
    notices: tuple[str, ...] = ()
    sort: str = "relevance"


class SearchError(ValueError):
    """A problem with what the user asked for; its message is safe and meant to be shown to them."""


class EmptyQuery(SearchError):
    def __init__(self, message: str = "") -> None:
        super().__init__(message or "Nothing to search for: type a few words about the paper.")


class UnknownPaper(SearchError):
    def __init__(self, ref: str) -> None:
        super().__init__(
            f"No such paper: {ref!r}. Try /search, or pick a title from the suggestions."
        )
        self.ref = ref


class IndexDamaged(SearchError):
    """The saved index failed its integrity check; answers wait for the rebuild."""

    def __init__(self) -> None:
        super().__init__(
            "The search index failed its integrity check and is being rebuilt. "
            "Try again in a few minutes."
        )


class BadFilter(SearchError):
    """An unknown venue or an impossible year; the message lists what would work."""

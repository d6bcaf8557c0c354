"""The search engine: one import for every surface (`from bot.search import SearchEngine`).

Rooms, in the order a query meets them: `analysis/` (text to terms), `index/` (postings, the
BM25 formula, block maxima, positions, builds), `files/` (the index and paper store on disk),
`query/` (syntax, filters, phrases, word order, feedback), `ranking/` (exact top-k, pruning, the
compiled kernel), `suggest/` (titles, spelling, authors, lookups). `engine.py` composes them;
`results.py` holds what a search answers with.
"""

from bot.search.engine import SearchEngine
from bot.search.results import (
    BadFilter,
    EmptyQuery,
    Filters,
    Hit,
    IndexDamaged,
    Plan,
    SearchError,
    SearchResult,
    UnknownPaper,
)

__all__ = [
    "BadFilter",
    "EmptyQuery",
    "Filters",
    "Hit",
    "IndexDamaged",
    "Plan",
    "SearchEngine",
    "SearchError",
    "SearchResult",
    "UnknownPaper",
]

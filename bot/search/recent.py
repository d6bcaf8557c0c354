"""Papers by when this corpus first saw them: `/new`, and the daily `new` pool.

`added` is the first-seen time that `python -m bot fetch` writes into a fetched corpus file
(bot/sources/store.py), not the source's own date: an OpenReview venue publishes its accepted
list all at once months after submission, and arXiv's `published` is the submission time, a day
or more before the paper is announced and fetched. "New" to a reader means "arrived here since I
last looked", which is exactly first-seen. Papers of static files have no `added` and are never
new. Stamps are `YYYY-MM-DDTHH:MM:SSZ` (bot/papers/corpus.py normalises them), so string order
is time order.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from bot.search.analysis.snippets import sentences
from bot.search.damage import serving
from bot.search.results import Hit, SearchResult

if TYPE_CHECKING:
    from bot.search.engine import SearchEngine

MAX_DAYS = 365
SNIPPET_CHARS = 300


def stamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def positions_added_after(
    added: Sequence[str | None], after: str, allowed: set[int] | None = None
) -> list[int]:
    """Positions of papers added strictly after `after`, newest first (ties: corpus order)."""
    found = [
        i
        for i, a in enumerate(added)
        if a is not None and a > after and (allowed is None or i in allowed)
    ]
    found.sort(key=lambda i: added[i] or "", reverse=True)
    return found


@serving
def ids_added_after(engine: SearchEngine, after: datetime | None) -> list[str]:
    """Paper ids added after `after` (None: every paper with an `added` time), newest first:
    the daily `new` pool."""
    since = stamp(after) if after is not None else ""
    return [engine.ids[i] for i in positions_added_after(engine.added, since)]


@serving
def newest(
    engine: SearchEngine,
    days: int,
    *,
    venue: str | None = None,
    now: datetime | None = None,
    limit: int = 5,
    offset: int = 0,
    hidden: Collection[str] = (),
) -> SearchResult:
    """One page of the papers added in the last `days` days, newest first, without the ids in
    `hidden` (the papers the asking member said 👎 to: `bot.foryou.Ratings.rejected`).

    An unknown venue raises BadFilter as /search does (the message lists what exists).
    """
    days = max(1, min(MAX_DAYS, days))
    since = stamp((now or datetime.now(UTC)) - timedelta(days=days))
    allowed = None
    if venue:
        allowed = set(engine.in_venue(venue))
    found = positions_added_after(engine.added, since, allowed)
    if hidden:
        ids = engine.ids
        found = [pos for pos in found if ids[pos] not in hidden]
    hits = []
    for rank, pos in enumerate(found[offset : offset + limit], start=offset + 1):
        paper = engine.papers[pos]
        first = sentences(paper.abstract)
        snippet = first[0][:SNIPPET_CHARS] if first else ""
        hits.append(Hit(paper, 0.0, snippet, rank))
    label = f"added in the last {days} day" + ("s" if days != 1 else "")
    return SearchResult(label, hits, len(found), offset, limit)

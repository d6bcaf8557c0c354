"""For you for one member: their signals, the new papers, and the ranked page `/foryou`, the
For you feed and the console show.

A member's signals are their saved papers and 👍 (liked) and their 👎 (disliked); a 👎 wins
over a save. With fewer than `MIN_SIGNALS` liked papers the page says so and lists the newest
matches of the member's follows instead (the queries are passed in: follows are another
feature's). A 👎 paper is never listed, nor a paper already liked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from bot.foryou.model import MIN_SIGNALS, Profile, build_profile, score
from bot.foryou.store import DOWN, Ratings
from bot.library import Library, find
from bot.papers.records import Paper
from bot.search import SearchEngine, SearchError

PAGE = 5  # papers a /foryou page lists
WINDOW_DAYS = 30  # "new": added to the corpus in the last this many days


@dataclass(frozen=True, slots=True)
class Signals:
    """What a member told the bot, newest first: liked (saved or 👍) and disliked (👎) ids."""

    liked: tuple[str, ...]
    disliked: tuple[str, ...]

    @property
    def enough(self) -> bool:
        return len(self.liked) >= MIN_SIGNALS


@dataclass(frozen=True, slots=True)
class Ranked:
    """A paper on a member's list and how strongly it matches them (0 to 1)."""

    paper: Paper
    strength: float


@dataclass(frozen=True, slots=True)
class ForYouPage:
    """One page of a member's For you; `fallback` when too few signals made it follows'."""

    items: list[Ranked]
    total: int
    page: int
    signals: Signals
    learned: list[str]
    fallback: bool

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // PAGE))


async def signals_of(library: Library, ratings: Ratings, user_id: int) -> Signals:
    """The member's signals, read with their own id only."""
    saved = [s.paper_id for s in await library.all(user_id)]
    rated = await ratings.of(user_id)
    disliked = [r.paper_id for r in rated if r.rating == DOWN]
    dropped = set(disliked)
    liked = [r.paper_id for r in rated if r.rating != DOWN] + saved
    return Signals(
        tuple(dict.fromkeys(p for p in liked if p not in dropped)), tuple(dict.fromkeys(disliked))
    )


def new_positions(engine: SearchEngine, now: datetime, days: int = WINDOW_DAYS) -> np.ndarray:
    """Positions of the papers added in the last `days` days. A corpus of static files (no
    paper has an added time) is all "new": For you then ranks the whole corpus."""
    added = engine.added
    if all(a is None for a in added):
        return np.arange(len(added), dtype=np.int32)
    since = (now - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return np.array([i for i, a in enumerate(added) if a is not None and a > since], np.int32)


def positions_of(engine: SearchEngine, paper_ids: Sequence[str]) -> np.ndarray:
    found = (engine.lookups.lookup.find(pid) for pid in paper_ids)
    return np.array(sorted({p for p in found if p is not None}), dtype=np.int32)


def profile_of(engine: SearchEngine, signals: Signals) -> Profile:
    liked = [p for p in (find(engine, pid) for pid in signals.liked) if p is not None]
    disliked = [p for p in (find(engine, pid) for pid in signals.disliked) if p is not None]
    return build_profile(engine, liked, disliked)


def recommend(
    engine: SearchEngine, signals: Signals, candidates: np.ndarray
) -> tuple[list[tuple[str, float]], Profile]:
    """The candidates the member's profile scores above 0, best first, as (id, strength):
    strength is the score as a share of their own liked papers' best (capped at 1). Liked and
    disliked papers are left out. CPU work: call it in a thread from the bot."""
    profile = profile_of(engine, signals)
    known = set(signals.liked) | set(signals.disliked)
    ids = engine.ids
    keep = np.array([ids[i] not in known for i in candidates.tolist()], dtype=bool)
    candidates = candidates[keep] if candidates.shape[0] else candidates
    scores = score(engine, profile, candidates)
    own = score(engine, profile, positions_of(engine, signals.liked))
    top = float(own.max()) if own.shape[0] and own.max() > 0 else float(scores.max(initial=1.0))
    order = np.lexsort((candidates, -scores))
    ranked = [
        (ids[int(candidates[i])], min(1.0, float(scores[i]) / top))
        for i in order.tolist()
        if scores[i] > 0
    ]
    return ranked, profile


def follow_matches(
    engine: SearchEngine, queries: Sequence[str], candidates: np.ndarray, skip: set[str]
) -> list[str]:
    """The fallback: the candidates each follow query matches, newest first, interleaved."""
    allowed = {engine.ids[i] for i in candidates.tolist()} - skip
    lists = []
    for query in queries:
        try:
            found = [pid for pid in engine.matching_ids(query) if pid in allowed]
        except SearchError:  # a follow the corpus can no longer run
            continue
        lists.append(found[::-1])
    merged: dict[str, None] = {}
    for round_ in range(max((len(x) for x in lists), default=0)):
        for found in lists:
            if round_ < len(found):
                merged.setdefault(found[round_])
    return list(merged)


def page_of(
    engine: SearchEngine,
    signals: Signals,
    follow_queries: Sequence[str],
    page: int,
    now: datetime,
    *,
    days: int = WINDOW_DAYS,
) -> ForYouPage:
    """Page `page` (from 1) of the member's For you; CPU work (run it in a thread)."""
    candidates = new_positions(engine, now, days)
    if signals.enough:
        ranked, profile = recommend(engine, signals, candidates)
        learned, fallback = profile.top_terms(), False
    else:
        skip = set(signals.disliked) | set(signals.liked)
        ranked = [(pid, 0.0) for pid in follow_matches(engine, follow_queries, candidates, skip)]
        learned, fallback = [], True
    pages = max(1, -(-len(ranked) // PAGE))
    page = max(1, min(page, pages))
    items = [
        Ranked(paper, strength)
        for pid, strength in ranked[(page - 1) * PAGE : page * PAGE]
        if (paper := find(engine, pid)) is not None
    ]
    return ForYouPage(items, len(ranked), page, signals, learned, fallback)


async def load_page(
    library: Library,
    ratings: Ratings,
    engine: SearchEngine,
    user_id: int,
    follow_queries: Sequence[str],
    page: int,
    now: datetime,
    *,
    remember: bool = True,
) -> ForYouPage:
    """What `/foryou` and the console show: the member's page, remembered as shown to them
    (so the For you feed, follows and the daily post do not push those papers again) unless
    `remember` is off (an operator looking from the command line shows the member nothing)."""
    signals = await signals_of(library, ratings, user_id)
    found = await asyncio.to_thread(page_of, engine, signals, follow_queries, page, now)
    if remember:
        await ratings.mark_shown(user_id, [r.paper.id for r in found.items], "foryou", now)
    return found

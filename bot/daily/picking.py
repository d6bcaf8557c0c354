"""Which paper a server gets on a day: its pool (a topic's papers or the whole corpus, newly
added ones first in a `new` pool, ranked for the server in a `foryou` pool: `bot.daily.ranked`),
the recorded draw, and a redraw when a paper leaves. "Already drawn" compares papers as the
corpus knows them now: a pick made under a preprint's id counts for the paper it was merged into.

Split from the scheduler, which decides *when*; this decides *what*, and records it before
anything is posted so a restart posts the same paper.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Collection, Iterable
from datetime import date, datetime
from typing import Any, TypeVar

from bot.daily.ranked import FORYOU, current_ids, picked_here, rank_for_server, server_saves
from bot.daily.records import ForYouState, Pick, PoolState
from bot.daily.rules import DailyError, Draw, draw, pick_marker
from bot.daily.tables import DailyTables
from bot.search import SearchEngine
from bot.storage.store import Storage

log = logging.getLogger(__name__)
R = TypeVar("R")

# Where a server's draw comes from: every paper (of its topic), papers added since its last
# post first, or new papers ranked for the server (For you). Kept under this meta key, not in
# the schedules table, while the storage package moves to PostgreSQL (one key per server;
# absent means "all").
POOLS = ("all", "new", FORYOU)
POOL_KEY = "daily_pool:{guild_id}"


class Picker:
    """Draws and records each server's pick for a local date, once."""

    def __init__(
        self,
        storage: Storage,
        corpus_ids: Callable[[], Collection[str]],
        topic_ids: Callable[[str], Collection[str]] | None = None,
        *,
        added_after: Callable[[datetime | None], Collection[str]] | None = None,
        rng: random.Random | None = None,
        has_paper: Callable[[str], bool] | None = None,
        offload: Callable[..., Awaitable[Any]] | None = None,
        engine: Callable[[], SearchEngine] | None = None,
    ) -> None:
        self.storage = storage
        self.tables = DailyTables(storage)
        self.corpus_ids = corpus_ids
        self.topic_ids = topic_ids
        # Ids of papers the corpus first saw after an instant (None: any with a first-seen
        # time), for the `new` pool; see bot/search/recent.py.
        self.added_after = added_after
        # Whether a paper is still in the corpus (a pick's paper may leave it on a reload).
        self.has_paper = has_paper or (lambda paper_id: paper_id in set(self.corpus_ids()))
        # The engine (read at call time: a reload swaps it), for the `foryou` pool and to see
        # merged versions as one paper; without it neither is available.
        self.engine = engine
        # Where corpus-sized work runs (pools, draws: ~1 s at 100k papers): never on the loop.
        self._offload = offload or asyncio.to_thread
        self._rng = rng or random.SystemRandom()
        # Held while a pick is read and maybe drawn, so two callers never draw one day twice.
        self.lock = asyncio.Lock()

    async def off(self, fn: Callable[..., R], *args: Any) -> R:
        """`fn(*args)` off the event loop: it walks the corpus."""
        result: R = await self._offload(fn, *args)
        return result

    def candidates(self, topic: str | None) -> Collection[str]:
        """The pool for a topic (or the whole corpus); empty is a DailyError."""
        if topic:
            if self.topic_ids is None:
                raise DailyError("Topics are not available on this bot.")
            try:
                ids = self.topic_ids(topic)
            except ValueError as exc:  # the search core's SearchError is a ValueError
                raise DailyError(f"Topic {topic!r} cannot be used: {exc}") from exc
            if not ids:
                raise DailyError(
                    f"No paper matches the topic {topic!r}: try broader words, "
                    "or leave the topic empty to draw from every paper."
                )
            return ids
        ids = self.corpus_ids()
        if not ids:
            raise DailyError("The corpus is empty: there is no paper to post.")
        return ids

    def current(self, paper_ids: Iterable[str]) -> set[str]:
        """The ids as the corpus knows those papers now (`bot.daily.ranked.current_ids`)."""
        return current_ids(self.engine(), paper_ids) if self.engine else set(paper_ids)

    async def pool_mode(self, guild_id: int) -> str:
        """'new' (papers added since the last post first), 'foryou' or 'all'."""
        mode = await self.storage.get_meta(POOL_KEY.format(guild_id=guild_id))
        return mode if mode in POOLS else "all"

    async def set_pool_mode(self, guild_id: int, mode: str) -> None:
        await self.storage.set_meta(POOL_KEY.format(guild_id=guild_id), mode)

    async def pool_counts(
        self, guild_id: int, topic: str | None, now: datetime
    ) -> tuple[int, int, ForYouState | None]:
        """How many papers the server's pool holds, how many of them are not drawn yet, and
        for a `foryou` pool how its ranking stands (the counts are then its fallback's)."""
        candidates = await self.off(lambda: set(self.candidates(topic)))
        pool = await self.tables.pool(guild_id, self._rng.getrandbits(63))
        left = await self.off(lambda: len(candidates - self.current(pool.drawn)))
        state = None
        if self.engine is not None and await self.pool_mode(guild_id) == FORYOU:
            state, _ranked = await self._for_you(guild_id, topic, candidates, now)
        return len(candidates), left, state

    async def ensure(self, guild_id: int, day: date, topic: str | None, now: datetime) -> Pick:
        """The server's pick for `day`, drawn and recorded on first request."""
        async with self.lock:
            existing = await self.tables.get_pick(guild_id, day.isoformat())
            if existing is not None:
                if existing.attempts == 0 and existing.state == "pending":
                    return await self.still_there(existing, topic, now)
                return existing
            chosen = await self._draw(guild_id, topic, now)
            return await self.tables.create_pick(
                guild_id,
                day.isoformat(),
                chosen.paper_id,
                chosen.epoch,
                pick_marker(guild_id, day, chosen.paper_id),
                now,
            )

    async def _fresh(
        self, guild_id: int, candidates: Collection[str], drawn: Collection[str]
    ) -> list[str]:
        """For a `new` pool: candidates added since the server's last post (or since its
        schedule was set) and not drawn yet. Empty means "draw from the whole pool"."""
        if self.added_after is None or await self.pool_mode(guild_id) != "new":
            return []
        last = await self.tables.last_sent(guild_id)
        if last is not None:
            since: datetime | None = last.sent_at or last.created_at
        else:
            schedule = await self.tables.get_schedule(guild_id)
            since = schedule.updated_at if schedule else None
        allowed = await self.off(lambda: set(candidates) - self.current(drawn))
        return [pid for pid in self.added_after(since) if pid in allowed]

    async def _for_you(
        self, guild_id: int, topic: str | None, candidates: Collection[str], now: datetime
    ) -> tuple[ForYouState, list[str]]:
        """The server's For you ranking: its papers not picked here yet, best first."""
        assert self.engine is not None
        engine = self.engine
        saved = await server_saves(self.storage, guild_id)
        picked = await picked_here(self.storage, guild_id)
        allowed = candidates if topic else None
        return await self.off(
            lambda: rank_for_server(engine(), saved, self.current(picked), allowed, now)
        )

    def _draw_in(self, candidates: Collection[str], pool: PoolState) -> Draw:
        last = pool.last_paper
        avoid = None if last is None else self.current([last]).pop()
        return draw(candidates, self.current(pool.drawn), pool.seed, pool.epoch, avoid)

    async def _draw(self, guild_id: int, topic: str | None, now: datetime) -> Draw:
        candidates = await self.off(self.candidates, topic)
        pool = await self.tables.pool(guild_id, self._rng.getrandbits(63))
        if self.engine is not None and await self.pool_mode(guild_id) == FORYOU:
            state, ranked = await self._for_you(guild_id, topic, candidates, now)
            if ranked:
                return Draw(ranked[0], pool.epoch)
            log.info(
                "guild %d: For you has %d saved papers and %d new matches left; drawing from "
                "the normal pool",
                guild_id,
                state.saves,
                state.remaining,
            )
        fresh = await self._fresh(guild_id, candidates, pool.drawn)
        chosen = await self.off(self._draw_in, fresh or candidates, pool)
        if chosen.epoch != pool.epoch:
            log.info("guild %d: pool exhausted, reshuffling (pass %d)", guild_id, chosen.epoch)
        return chosen

    async def still_there(self, pick: Pick, topic: str | None, now: datetime) -> Pick:
        """`pick`, or a fresh draw for its day when its paper left the corpus (a reload)
        before it was posted: a day is never lost to a paper that is gone. Call only for a
        pick not yet sent and known not to be on Discord, holding `lock`."""
        if await self.off(self.has_paper, pick.paper_id):
            return pick
        chosen = await self._draw(pick.guild_id, topic, now)
        day = date.fromisoformat(pick.local_date)
        log.warning(
            "guild %d: paper %s of %s left the corpus before it was posted; drew %s instead",
            pick.guild_id,
            pick.paper_id,
            pick.local_date,
            chosen.paper_id,
        )
        return await self.tables.replace_pick(
            pick.guild_id,
            pick.local_date,
            chosen.paper_id,
            chosen.epoch,
            pick_marker(pick.guild_id, day, chosen.paper_id),
            now,
        )

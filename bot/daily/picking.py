"""Which paper a server gets on a day: its pool (a topic's papers or the whole corpus, newly
added ones first in a `new` pool), the recorded draw, and a redraw when a paper leaves.

Split from the scheduler, which decides *when*; this decides *what*, and records it before
anything is posted so a restart posts the same paper.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Collection
from datetime import date, datetime
from typing import Any, TypeVar

from bot.daily.records import Pick
from bot.daily.rules import DailyError, Draw, draw, pick_marker
from bot.daily.tables import DailyTables
from bot.storage.store import Storage

log = logging.getLogger(__name__)
R = TypeVar("R")

# Where a server's draw comes from: every paper (of its topic), or papers added since its last
# post first. Kept under this meta key, not in the schedules table, while the storage package
# moves to PostgreSQL (one key per server; absent means "all").
POOLS = ("all", "new")
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

    async def pool_mode(self, guild_id: int) -> str:
        """'new' (papers added since the last post first) or 'all'."""
        mode = await self.storage.get_meta(POOL_KEY.format(guild_id=guild_id))
        return mode if mode in POOLS else "all"

    async def set_pool_mode(self, guild_id: int, mode: str) -> None:
        await self.storage.set_meta(POOL_KEY.format(guild_id=guild_id), mode)

    async def pool_counts(self, guild_id: int, topic: str | None) -> tuple[int, int]:
        """How many papers the server's pool holds and how many of them are not drawn yet."""
        candidates = await self.off(lambda: set(self.candidates(topic)))
        pool = await self.tables.pool(guild_id, self._rng.getrandbits(63))
        return await self.off(lambda: (len(candidates), len(candidates - pool.drawn)))

    async def ensure(self, guild_id: int, day: date, topic: str | None, now: datetime) -> Pick:
        """The server's pick for `day`, drawn and recorded on first request."""
        async with self.lock:
            existing = await self.tables.get_pick(guild_id, day.isoformat())
            if existing is not None:
                if existing.attempts == 0 and existing.state == "pending":
                    return await self.still_there(existing, topic, now)
                return existing
            chosen = await self._draw(guild_id, topic)
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
        allowed = await self.off(lambda: set(candidates) - set(drawn))
        return [pid for pid in self.added_after(since) if pid in allowed]

    async def _draw(self, guild_id: int, topic: str | None) -> Draw:
        candidates = await self.off(self.candidates, topic)
        pool = await self.tables.pool(guild_id, self._rng.getrandbits(63))
        fresh = await self._fresh(guild_id, candidates, pool.drawn)
        chosen = await self.off(
            draw, fresh or candidates, pool.drawn, pool.seed, pool.epoch, pool.last_paper
        )
        if chosen.epoch != pool.epoch:
            log.info("guild %d: pool exhausted, reshuffling (pass %d)", guild_id, chosen.epoch)
        return chosen

    async def still_there(self, pick: Pick, topic: str | None, now: datetime) -> Pick:
        """`pick`, or a fresh draw for its day when its paper left the corpus (a reload)
        before it was posted: a day is never lost to a paper that is gone. Call only for a
        pick not yet sent and known not to be on Discord, holding `lock`."""
        if await self.off(self.has_paper, pick.paper_id):
            return pick
        chosen = await self._draw(pick.guild_id, topic)
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

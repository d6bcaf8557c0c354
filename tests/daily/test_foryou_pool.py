"""The daily `foryou` pool (`bot.daily.ranked`) through `DailyScheduler`, on both backends:
ranked for each server by `/foryou`'s model from the papers saved from that server only, the
fallback below MIN_SIGNALS saves, the day's pick stable all day, no paper posted twice, and
"already drawn" seeing merged versions of a paper as one (issue 29)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from datetime import timedelta

import pytest

from bot.daily.ranked import server_saves
from bot.daily.scheduler import DailyRequest, DailyScheduler
from bot.daily.servers import CONSOLE_READER, CONSOLE_SERVER
from bot.foryou import UP, Ratings, Signals, new_positions, recommend
from bot.library import Library
from bot.papers.records import Paper
from bot.search import SearchEngine
from bot.storage.store import Storage
from tests.daily.test_scheduler import START, FakeClock, FakePoster

GUILD, OTHER = 81_384_788_765_712_384, 81_384_788_765_712_999
TEXTS = {
    "hyp": [
        ("Hyperbolic embeddings of trees", "Trees embed in hyperbolic space with low distortion."),
        ("Hyperbolic graph networks", "Graph neural networks in hyperbolic geometry."),
        ("Poincare embeddings", "Hierarchies embed in the Poincare ball, a hyperbolic model."),
        ("Curved spaces for hierarchies", "Hyperbolic embeddings of hierarchies and trees."),
        ("Hyperbolic attention", "Attention in hyperbolic space for hierarchies."),
        ("Lorentz model learning", "Hyperbolic embeddings in the Lorentz model of trees."),
    ],
    "rain": [
        ("Rainfall records", "Weather observations of rainfall from ten cities."),
        ("Storm forecasting", "Weather forecasts for storms and rainfall from radar."),
        ("Monsoon rainfall", "Rainfall of the monsoon, weather station records."),
        ("Radar nowcasting", "Short-term rainfall weather forecasts from radar images."),
    ],
    "misc": [
        ("Protein folding", "Predicting protein structure from sequences with attention."),
        ("Sorting networks", "Comparator networks that sort in logarithmic depth."),
    ],
}


def corpus(extra: Sequence[Paper] = ()) -> list[Paper]:
    papers = [
        Paper(id=f"{kind}/{i}", title=t, abstract=a, venue="ICML 2024", year=2024)
        for kind, texts in TEXTS.items()
        for i, (t, a) in enumerate(texts)
    ]
    return [*papers, *extra]


class Env:
    """A scheduler over one database whose engine a test can swap (a reload)."""

    def __init__(self, storage: Storage, engine: SearchEngine) -> None:
        self.storage, self.engine = storage, engine
        self.clock = FakeClock(START)
        self.sched = DailyScheduler(
            storage,
            FakePoster(self.clock),
            lambda: list(self.engine.ids),
            self.engine_topic,
            clock=self.clock,
            rng=random.Random(7),
            has_paper=lambda pid: self.engine.has_paper(pid),
            engine=lambda: self.engine,
        )

    def engine_topic(self, topic: str) -> list[str]:
        return self.engine.matching_ids(topic)

    async def save(self, guild_id: int | None, *paper_ids: str, user: int = 1) -> None:
        """Members `user`, `user + 1`... each save one of the papers from `guild_id`."""
        for n, pid in enumerate(paper_ids):
            await Library(self.storage).save(user + n, pid, self.clock.now(), guild_id)

    async def set(self, guild_id: int, pool: str = "foryou", topic: str | None = None) -> None:
        await self.sched.set_schedule(DailyRequest(guild_id, 5, "23:59", "UTC", topic, pool))

    async def day(self, guild_id: int, days: int = 0) -> str:
        if days:
            self.clock.set(self.clock.now() + timedelta(days=days))
        return await self.sched.today(guild_id)


@pytest.fixture
async def env(database_url: str) -> AsyncIterator[Env]:
    storage = await Storage.open(database_url)
    yield Env(storage, SearchEngine(corpus()))
    await storage.close()


def best(engine: SearchEngine, saved: Sequence[str], skip: Sequence[str] = ()) -> list[str]:
    """What `/foryou`'s own ranking puts first for these saves: the pool must agree."""
    ranked, _profile = recommend(
        engine, Signals(tuple(sorted(saved)), ()), new_positions(engine, START)
    )
    return [pid for pid, _s in ranked if pid not in skip]


async def test_each_server_gets_the_best_match_of_its_own_saves(env: Env) -> None:
    hyp = ["hyp/0", "hyp/1", "hyp/2"]
    rain = ["rain/0", "rain/1", "rain/2"]
    await env.save(GUILD, *hyp)
    await env.save(OTHER, *rain, user=10)
    await env.save(None, "misc/0", "misc/1", "rain/3", user=20)  # from DMs: no server's
    await env.set(GUILD)
    await env.set(OTHER)
    first = await env.day(GUILD)
    assert first == best(env.engine, hyp)[0]
    assert first.startswith("hyp/")
    assert first not in hyp
    assert await env.day(OTHER) == best(env.engine, rain)[0] == "rain/3"
    status = await env.sched.status(GUILD)
    assert status.for_you is not None
    assert status.for_you.active
    assert status.for_you.saves == 3
    assert "hyperbol" in status.for_you.learned  # stems, as /foryou shows them
    assert status.for_you.remaining == len(best(env.engine, hyp)) - 1  # today's is picked


async def test_the_pick_is_stable_all_day_and_never_repeats(env: Env) -> None:
    hyp = ["hyp/0", "hyp/1", "hyp/2"]
    await env.save(GUILD, *hyp)
    await env.set(GUILD)
    ranked = best(env.engine, hyp)
    first = await env.day(GUILD)
    await env.save(GUILD, "rain/0", "rain/1", "rain/2", "rain/3", user=50)  # the taste shifts
    assert await env.day(GUILD) == first  # /today and the post stay the day's paper
    picks = [first] + [await env.day(GUILD, days=1) for _ in range(len(ranked) + 1)]
    assert len(set(picks)) == len(picks)  # no paper comes back, For you or fallback


async def test_fewer_than_a_handful_of_saves_falls_back_and_ratings_do_not_count(
    env: Env,
) -> None:
    await env.save(GUILD, "hyp/0", "hyp/1")
    for pid in ("hyp/2", "hyp/3", "hyp/4"):  # 👍 are personal: never a server's signal
        await Ratings(env.storage).rate(3, pid, UP, env.clock.now())
    await env.set(GUILD)
    status = await env.sched.status(GUILD)
    assert status.for_you is not None
    assert (status.for_you.saves, status.for_you.active) == (2, False)
    assert status.pool_size == len(env.engine.ids)  # the normal pool it falls back to
    first = await env.day(GUILD)
    assert first in env.engine.ids
    await env.save(GUILD, "hyp/2", user=9)
    status = await env.sched.status(GUILD)
    assert status.for_you is not None
    assert status.for_you.active
    assert await env.day(GUILD, days=1) == best(env.engine, ["hyp/0", "hyp/1", "hyp/2"], [first])[0]


async def test_a_topic_limits_the_ranked_papers(env: Env) -> None:
    await env.save(GUILD, "hyp/0", "hyp/1", "hyp/2")
    await env.set(GUILD, topic="attention")
    assert await env.day(GUILD) == "hyp/4"  # the one hyperbolic paper about attention


async def test_the_consoles_server_reads_the_consoles_reader(env: Env) -> None:
    for pid in ("rain/0", "rain/1", "rain/2"):
        await env.save(None, pid, user=CONSOLE_READER)
    await env.save(None, "hyp/0", user=7)  # someone's DM save: no server's
    assert sorted(await server_saves(env.storage, CONSOLE_SERVER)) == ["rain/0", "rain/1", "rain/2"]
    assert await server_saves(env.storage, GUILD) == []


async def test_a_paper_picked_before_a_merge_is_not_picked_again_under_its_new_id(
    env: Env,
) -> None:
    """Three papers, each drawn once; then the first is merged into an accepted record that
    keeps the record's id (a static list counts as first seen). The draw must still count it
    as drawn: the next day is the one new paper, and the pool reshuffles after that."""
    preprint = Paper(
        id="arxiv:2401.00001", title="Hyperbolic trees", abstract="Trees.", venue="arXiv", year=2024
    )
    small = [preprint, *corpus()[6:8]]
    env.engine = SearchEngine(small)
    await env.set(GUILD, pool="all")
    drawn = {await env.day(GUILD, days=1 if n else 0) for n in range(3)}
    assert drawn == {p.id for p in small}
    accepted = replace(preprint, id="iclr:abc", venue="ICLR 2024", aliases=(preprint.id,))
    newcomer = Paper(
        id="misc/new", title="Sorting again", abstract="Sorting.", venue="ICML 2024", year=2024
    )
    env.engine = SearchEngine([accepted, *small[1:], newcomer])
    status = await env.sched.status(GUILD)
    assert (status.pool_size, status.remaining) == (4, 1)
    assert await env.day(GUILD, days=1) == "misc/new"
    await env.day(GUILD, days=1)
    pick = await env.sched.today_pick(GUILD)
    assert pick.epoch == 1  # every paper was shown: a new pass, not the merged paper again


async def test_for_you_never_posts_a_merged_paper_picked_under_its_old_id(env: Env) -> None:
    hyp = ["hyp/0", "hyp/1", "hyp/2"]
    top = best(env.engine, hyp)[0]
    old = next(p for p in env.engine.papers if p.id == top)
    preprint = replace(old, id="arxiv:2402.00002")
    env.engine = SearchEngine([preprint if p.id == top else p for p in corpus()])
    await env.save(GUILD, *hyp)
    await env.set(GUILD)
    assert await env.day(GUILD) == preprint.id
    merged = replace(old, id="icml:top", aliases=(preprint.id,))
    env.engine = SearchEngine([merged if p.id == top else p for p in corpus()])
    assert await env.day(GUILD, days=1) != "icml:top"

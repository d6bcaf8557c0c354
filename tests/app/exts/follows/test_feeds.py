"""Feeds a member tunes, through the loopback Discord: `/follow tune` (cap with the rest
behind ▶, negative terms, a minimum score that keeps a feed quiet, daily delivery at a time),
the For you feed by DM, and the one "already shown" memory: no paper is pushed twice, a 👎
paper never."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.follows import FOR_YOU, Follows
from bot.foryou import DOWN, UP, Ratings
from bot.library import Library
from tests.app.exts.daily.support import SteppedClock, until
from tests.app.exts.follows.support import Env, grown, new_paper
from tests.app.helpers import answered

T0 = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)  # a Wednesday, 11:00 in Paris
HYPER = [new_paper(100 + i, f"Hyperbolic study {i}", "Curved spaces and trees.") for i in range(7)]
SURVEY = new_paper(120, "A survey of hyperbolic methods", "We survey hyperbolic models.")
LIKED = [new_paper(130 + i, f"Trees in curved space {i}", "Hyperbolic trees.") for i in range(3)]
WEAK = new_paper(121, "Many things", "Weather, cooking, rivers, and once hyperbolic.")


def follow_id(env: Env, reply: object) -> str:
    text = reply.embed["description"]  # type: ignore[attr-defined]
    return text.split("(`", 1)[1].split("`)", 1)[0]


async def test_cap_pages_the_rest_and_negative_terms_leave_papers_out(env: Env) -> None:
    fake = env.fake
    await env.start()
    made = await env.slash("follow add", {"query": "hyperbolic"})
    fid = follow_id(env, made)
    tuned = await env.slash("follow tune", {"follow": fid, "cap": 3, "exclude": "-survey"})
    assert "3 a message · without -survey" in tuned.embed["description"]
    bad = await env.slash("follow tune", {"follow": fid, "exclude": "toy\x00", "cap": 5})
    assert "The exclude option holds a NUL character" in bad.embed["description"]
    mine = await env.slash("follow tune", {"follow": "nope"})
    assert "No follow 'nope' of yours" in mine.embed["description"]

    await env.reload(grown(env.engine, *HYPER, SURVEY))

    [notice] = fake.channel_messages(fake.world.dm_channel(fake.alice))
    embed = notice["embeds"][0]
    assert embed["footer"]["text"].startswith("7 new · page 1/3 ")
    assert embed["description"].count("](") == 3
    assert "…and 4 more (▶)" in embed["description"]
    assert "survey" not in embed["description"].lower()
    ids = [
        c["custom_id"]
        for row in notice["components"]
        for c in row["components"]
        if "custom_id" in c
    ]
    forward = [i for i in ids if i.startswith("pb:fb:")][-1]
    assert forward.endswith(":2:3")  # ▶ carries the page and the cap
    page2 = await answered(await fake.click(notice, forward), type=7)
    assert page2.embed["description"].startswith("4. ")
    assert page2.embed["description"].count("](") == 3
    stored = await Follows(env.follows_storage).delivered(f"dm:{fake.alice.id}")
    assert SURVEY.id not in stored
    assert len(stored) == 7


async def test_a_minimum_score_keeps_the_feed_quiet(env: Env) -> None:
    fake = env.fake
    await env.start()
    fid = follow_id(env, await env.slash("follow add", {"query": "hyperbolic trees"}))
    await env.slash("follow tune", {"follow": fid, "min_score": 90})
    await env.reload(grown(env.engine, WEAK))
    assert fake.channel_messages(fake.world.dm_channel(fake.alice)) == []  # quiet
    await env.slash("follow tune", {"follow": fid, "min_score": 0})
    await env.reload(grown(env.engine, WEAK, HYPER[0]))
    [notice] = fake.channel_messages(fake.world.dm_channel(fake.alice))
    assert "Hyperbolic study 0" in notice["embeds"][0]["description"]


async def test_daily_gathers_refreshes_into_one_message_at_its_time(env: Env) -> None:
    fake, clock = env.fake, SteppedClock(T0)
    await env.start(clock=clock)
    fid = follow_id(env, await env.slash("follow add", {"query": "hyperbolic"}))
    answer = await env.slash(
        "follow tune",
        {"follow": fid, "frequency": "daily", "time": "09:30", "timezone": "Europe/Paris"},
    )
    assert "daily at 09:30 Europe/Paris" in answer.embed["description"]
    bad = await env.slash("follow tune", {"follow": fid, "timezone": "Mars/Olympus"})
    assert "Unknown time zone" in bad.embed["description"]
    dm = fake.world.dm_channel(fake.alice)

    await env.reload(grown(env.engine, HYPER[0]))
    await env.reload(grown(env.engine, HYPER[0], HYPER[1]))
    assert fake.channel_messages(dm) == []  # waits for 09:30 Paris tomorrow

    clock.advance_to(datetime(2026, 3, 5, 8, 30, tzinfo=UTC))
    await until(lambda: _has(env, dm.id), what="the daily notice")
    [notice] = fake.channel_messages(dm)
    assert notice["embeds"][0]["footer"]["text"].startswith("2 new · page 1/1")


async def _has(env: Env, channel_id: str) -> bool:
    return bool(env.fake.channel_messages(channel_id))


async def test_one_shown_memory_across_follows_and_for_you(env: Env) -> None:
    fake = env.fake
    await env.start()
    alice = int(fake.alice.id)
    ratings, library = Ratings(env.follows_storage), Library(env.follows_storage)
    # Alice likes hyperbolic papers (3 signals: enough to learn from).
    await env.reload(grown(env.engine, *LIKED))
    for paper in LIKED[:2]:
        await library.save(alice, paper.id, T0)
    await ratings.rate(alice, LIKED[2].id, UP, T0)
    await ratings.rate(alice, HYPER[2].id, DOWN, T0)
    await ratings.mark_shown(alice, [HYPER[3].id], "new", T0)  # /new showed her this one
    await env.slash("follow add", {"query": "hyperbolic"})
    await env.slash("follow add", {"query": "curved spaces"})
    made = await env.slash("follow foryou")
    assert "For you by DM is on" in made.embed["description"]
    listed = await env.slash("follow list")
    assert "**For you**" in listed.embed["description"]

    await env.reload(grown(env.engine, *LIKED, *HYPER[:5]))

    notices = fake.channel_messages(fake.world.dm_channel(fake.alice))
    pushed = await Follows(env.follows_storage).delivered(f"dm:{alice}")
    assert sorted(pushed) == sorted(p.id for p in (HYPER[0], HYPER[1], HYPER[4]))
    assert len(notices) == 1  # the first follow took them all; the others had nothing new
    text = " ".join(n["embeds"][0]["description"] for n in notices)
    assert "Hyperbolic study 2" not in text
    assert "Hyperbolic study 3" not in text
    follows = await Follows(env.follows_storage).personal(alice)
    assert [f.query for f in follows][-1] == FOR_YOU


async def test_the_for_you_feed_sends_ranked_papers_and_never_a_disliked_one(env: Env) -> None:
    fake = env.fake
    await env.start()
    alice = int(fake.alice.id)
    await env.reload(grown(env.engine, *LIKED))
    for paper in LIKED:
        await Library(env.follows_storage).save(alice, paper.id, T0)
    await Ratings(env.follows_storage).rate(alice, HYPER[1].id, DOWN, T0)
    await env.slash("follow foryou")
    again = await env.slash("follow foryou")
    assert "already" in again.embed["description"]

    await env.reload(grown(env.engine, *LIKED, HYPER[0], HYPER[1], WEAK))

    [notice] = fake.channel_messages(fake.world.dm_channel(fake.alice))
    embed = notice["embeds"][0]
    assert embed["title"] == "🆕 New papers for “For you”"
    assert embed["description"].startswith("1. [Hyperbolic study 0]")
    assert "Hyperbolic study 1" not in embed["description"]

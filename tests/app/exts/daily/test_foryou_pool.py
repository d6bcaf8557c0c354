"""`/daily set … pool:foryou` through the real discord.py client and the loopback Discord, on
both backends: the choice is registered, the confirmation and `/daily status` say how the
pool stands (or that it falls back, and that only saves count), and `/today` and the post are
the paper `/foryou`'s own ranking puts first for the server's saves (issue 29)."""

from __future__ import annotations

from bot.foryou import Signals, new_positions, recommend
from bot.library import Library
from tests.app.exts.daily.support import DUE, START, DailyEnv, text_of


async def set_pool(env: DailyEnv, pool: str) -> str:
    options = {"channel": env.papers, "time": "09:00", "timezone": "Europe/Paris", "pool": pool}
    return text_of(await env.slash("daily set", options, ephemeral=True))


async def save_from_server(env: DailyEnv, paper_ids: list[str]) -> None:
    """Members save papers from the server (what the Save button records)."""
    assert env.storage is not None
    guild = int(env.fake.guild.id)
    for n, pid in enumerate(paper_ids):
        await Library(env.storage).save(1000 + n, pid, START, guild)


async def test_foryou_pool_posts_the_servers_best_match(daily_env: DailyEnv) -> None:
    await daily_env.start()
    choices = {
        o["name"]: o
        for o in next(
            s for s in daily_env.fake.commands()["daily"]["options"] if s["name"] == "set"
        )["options"]
    }["pool"]["choices"]
    assert "foryou" in [c["value"] for c in choices]
    engine = daily_env.engine
    saved = engine.matching_ids("optimal transport")[:3]
    await save_from_server(daily_env, saved)
    ranked, _profile = recommend(
        engine, Signals(tuple(sorted(saved)), ()), new_positions(engine, START)
    )
    expected = ranked[0][0]
    said = await set_pool(daily_env, "foryou")
    assert "Paper of the day is set" in said
    assert "new papers that match the 3 papers saved here" in said
    assert "Saves only" in said
    status = text_of(await daily_env.slash("daily status", ephemeral=True))
    assert "Pool: For you:" in status
    assert "Normal pool:" in status
    today = await daily_env.slash("today")
    assert engine.paper(today.embed["title"]).id == expected
    daily_env.clock.advance_to(DUE)
    await daily_env.wait_state(daily_env.fake.guild, "sent")
    [post] = daily_env.fake.channel_messages(daily_env.papers)
    assert post["embeds"][0]["title"] == today.embed["title"]
    assert "saved" not in str(post["embeds"][0]).lower()  # the post names no member's doing


async def test_foryou_pool_without_saves_says_it_falls_back(daily_env: DailyEnv) -> None:
    await daily_env.start()
    said = await set_pool(daily_env, "foryou")
    assert "For you needs 3 papers saved from this server and has 0" in said
    assert "normal pool" in said
    status = text_of(await daily_env.slash("daily status", ephemeral=True))
    assert "For you needs 3 papers saved from this server and has 0" in status
    today = await daily_env.slash("today")
    assert daily_env.engine.paper(today.embed["title"]).id in daily_env.engine.ids


async def test_switching_to_foryou_keeps_the_paper_today_showed(daily_env: DailyEnv) -> None:
    """/today showed a paper of the normal pool: it stays the day's post; For you starts with
    the next day nobody has seen (tests/app/exts/daily/test_today_stable.py's rule)."""
    await daily_env.start()
    engine = daily_env.engine
    before = (await daily_env.slash("today")).embed["title"]
    saved = engine.matching_ids("optimal transport")[:3]
    await save_from_server(daily_env, saved)
    await set_pool(daily_env, "foryou")
    assert (await daily_env.slash("today")).embed["title"] == before
    ranked, _profile = recommend(
        engine, Signals(tuple(sorted(saved)), ()), new_positions(engine, START)
    )
    expected = next(pid for pid, _s in ranked if engine.paper(pid).title != before)
    daily_env.clock.advance_to(DUE)
    first = await daily_env.fake.wait_for_message(daily_env.papers)
    assert first["embeds"][0]["title"] == before
    daily_env.clock.advance_to(DUE.replace(day=2))
    second = await daily_env.fake.wait_for_message(daily_env.papers, index=1)
    assert engine.paper(second["embeds"][0]["title"]).id == expected

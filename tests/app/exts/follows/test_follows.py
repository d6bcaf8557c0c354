"""Follows through the loopback Discord: a reload that adds matching and non-matching papers
delivers exactly the matching new ones, once; a restart and a second reload deliver nothing."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bot.config import LibrarySettings
from bot.follows.store import Follows
from tests.app.exts.follows.support import MATCHING, OTHER, QUERY, Env, grown, new_paper
from tests.app.helpers import answered
from tests.fakediscord.faults import Fault, error_body


async def test_reload_delivers_only_new_matching_papers_once(env: Env) -> None:
    fake = env.fake
    await env.start()
    mine = await env.slash("follow add", {"query": QUERY})
    assert "Following **hyperbolic embeddings**" in mine.embed["description"]
    twice = await env.slash("follow add", {"query": f"  {QUERY} "})
    assert "Already followed" in twice.embed["description"]
    channel = fake.guild.channel("papers")
    refused = await env.slash("follow add", {"query": QUERY, "channel": channel})
    assert "Manage Server" in refused.embed["description"]
    server = await env.slash("follow add", {"query": QUERY, "channel": channel}, user=fake.admin)
    assert channel.mention in server.embed["description"]
    # Closed DMs: Discord answers 50007 to the bot's message in that DM channel.
    bob = fake.world.add_user("bob")
    bob_dm = fake.world.dm_channel(bob)
    fake.faults.add(
        Fault(
            "POST",
            f"/channels/{bob_dm.id}/messages",
            403,
            times=99,
            body=error_body(403, 50007, "Cannot send messages to this user"),
        )
    )
    await env.slash("follow add", {"query": "hyperbolic"}, user=bob)

    await env.reload(grown(env.engine, *MATCHING, *OTHER))

    alice_dm = fake.world.dm_channel(fake.alice)
    dms = fake.channel_messages(alice_dm)
    assert len(dms) == 1
    embed = dms[0]["embeds"][0]
    assert embed["title"] == "🆕 New papers for “hyperbolic embeddings”"
    assert "Hyperbolic Embeddings for Trees" in embed["description"]
    assert "Fast Graph Embeddings" in embed["description"]
    assert "Rainfall" not in embed["description"]
    assert embed["description"].startswith("1. ")
    assert "\n2. " in embed["description"]
    assert "3. " not in embed["description"]
    assert embed["footer"]["text"].startswith("2 new · page 1/1")
    # Per paper: Save (a menu of the papers) and an Open link; and Stop following. No token.
    rows = [
        [c.get("custom_id") or c.get("label") for c in r["components"]]
        for r in dms[0]["components"]
    ]
    assert rows[0] == ["pb:fsave"]
    assert rows[1] == ["Open 1", "Open 2"]
    assert len(rows) == 3
    assert rows[2][0].startswith("pb:fstop:")
    assert " ref " not in embed["footer"]["text"]
    posts = fake.channel_messages(channel)
    assert len(posts) == 1
    assert posts[0]["embeds"][0]["description"] == embed["description"]
    # Bob's follow stopped, and /follow list says why.
    assert fake.channel_messages(bob_dm) == []
    listed = await env.slash("follow list", user=bob)
    assert "stopped: I can't send you direct messages" in listed.embed["description"]

    # A restart and a reload with no new papers deliver nothing more.
    await env.stop()
    await env.start(grown(env.engine, *MATCHING, *OTHER))
    await env.reload(grown(env.engine, *MATCHING, *OTHER))
    assert len(fake.channel_messages(alice_dm)) == 1
    assert len(fake.channel_messages(channel)) == 1
    assert await Follows(env.storage).delivered(f"dm:{fake.alice.id}") == ["new/001", "new/002"]  # type: ignore[arg-type]


async def test_more_than_ten_pages_with_a_button(env: Env) -> None:
    fake = env.fake
    await env.start()
    await env.slash("follow add", {"query": "hyperbolic"})
    many = [new_paper(10 + i, f"Hyperbolic study {i}", "Curved spaces.") for i in range(13)]
    await env.reload(grown(env.engine, *many))
    [notice] = fake.channel_messages(fake.world.dm_channel(fake.alice))
    embed = notice["embeds"][0]
    assert embed["description"].endswith("…and 3 more (▶)")
    assert embed["footer"]["text"] == "13 new · page 1/2 · /follow list to manage"
    ids = [
        c["custom_id"]
        for row in notice["components"]
        for c in row["components"]
        if c.get("custom_id", "").startswith("pb:fb:")
    ]
    assert ids[0].endswith(":0")
    assert ids[1].endswith(":2")
    page2 = await answered(await fake.click(notice, ids[1]), type=7)
    assert page2.embed["description"].startswith("11. ")
    assert page2.embed["footer"]["text"].startswith("13 new · page 2/2")


async def test_follow_limits_and_bad_queries(env: Env) -> None:
    await env.start()
    bad = await env.slash("follow add", {"query": "venue:nosuchvenue transformers"})
    assert "venue" in bad.embed["description"].lower()
    for i in range(10):
        await env.slash("follow add", {"query": f"topic {i}"})
    full = await env.slash("follow add", {"query": "one more"})
    assert "the most allowed" in full.embed["description"]
    listed = await env.slash("follow list")
    assert listed.embed["description"].count("→ your DMs") == 10
    first = (await Follows(env.storage).personal(int(env.fake.alice.id)))[0]  # type: ignore[arg-type]
    gone = await env.slash("follow remove", {"follow": first.follow_id})
    assert "Stopped following **topic 0**" in gone.embed["description"]
    other = await env.slash("follow remove", {"follow": first.follow_id}, user=env.fake.admin)
    assert "No follow" in other.embed["description"]


async def test_limits_come_from_the_settings(env: Env) -> None:
    bot = await env.start()
    bot.settings = replace(
        bot.settings, library=LibrarySettings(follows_per_user=1, follows_per_server=1)
    )
    await env.slash("follow add", {"query": "graphs"})
    mine = await env.slash("follow add", {"query": "trees"})
    assert "You already follow 1 queries" in mine.embed["description"]
    channel = env.fake.guild.channel("papers")
    await env.slash("follow add", {"query": "graphs", "channel": channel}, user=env.fake.admin)
    server = await env.slash(
        "follow add", {"query": "trees", "channel": channel}, user=env.fake.admin
    )
    assert "This server already has 1 channel follows" in server.embed["description"]


async def test_remove_autocomplete_offers_own_follows_and_a_managers_channel_follows(
    env: Env,
) -> None:
    await env.start()
    channel = env.fake.guild.channel("papers")
    await env.slash("follow add", {"query": "graphs"})
    await env.slash("follow add", {"query": "trees"}, user=env.fake.admin)
    await env.slash("follow add", {"query": "graphs", "channel": channel}, user=env.fake.admin)

    async def offered(user: Any, typed: str = "") -> list[str]:
        handle = await env.fake.autocomplete("follow remove", {"follow": typed}, user=user)
        return sorted(c["name"] for c in (await answered(handle, type=8)).choices)

    assert await offered(env.fake.alice) == ["graphs"]
    assert await offered(env.fake.admin) == ["graphs (channel)", "trees"]
    assert await offered(env.fake.admin, "GRA") == ["graphs (channel)"]

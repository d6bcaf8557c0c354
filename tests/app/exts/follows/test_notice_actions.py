"""Acting on a follow notice where it arrives, through the real discord.py client and the loopback
Discord: Save a paper from the notice's menu (or its one Save button), open each paper by its
link, and Stop following (only the follower; a channel follow: Manage Server), all after a
restart; no internal token in the footer."""

from __future__ import annotations

from typing import Any

from bot.follows.store import Follows
from bot.library import library_of
from tests.app.exts.follows.support import MATCHING, OTHER, Env, grown
from tests.app.helpers import answered


def components(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for row in message["components"] for c in row["components"]]


def custom_id(message: dict[str, Any], head: str) -> str:
    return next(
        c["custom_id"] for c in components(message) if c.get("custom_id", "").startswith(head)
    )


async def test_save_open_and_stop_from_a_notice_after_a_restart(env: Env) -> None:
    fake = env.fake
    await env.start()
    await env.slash("follow add", {"query": "hyperbolic embeddings"})
    engine = grown(env.engine, *MATCHING, *OTHER)
    await env.reload(engine)
    dm = fake.world.dm_channel(fake.alice)
    [notice] = fake.channel_messages(dm)
    links = {c["label"]: c["url"] for c in components(notice) if c.get("style") == 5}
    assert links == {
        "Open 1": "https://example.org/paper/1",
        "Open 2": "https://example.org/paper/2",
    }
    menu = next(c for c in components(notice) if c.get("custom_id") == "pb:fsave")
    assert [o["value"] for o in menu["options"]] == ["new/001", "new/002"]
    assert menu["options"][0]["label"].startswith("1. Hyperbolic Embeddings")
    assert "ref " not in notice["embeds"][0]["footer"]["text"]

    await env.stop()
    await env.start(engine)  # every component works after a restart
    saved = await answered(await fake.select(notice, "pb:fsave", ["new/002"]), type=4)
    assert saved.ephemeral
    assert saved.content.startswith("📚 Saved **Fast Graph Embeddings**")
    store = library_of(env.storage)
    assert [p.paper_id for p in await store.all(int(fake.alice.id))] == ["new/002"]

    stop = custom_id(notice, "pb:fstop:")
    refused = await answered(await fake.click(notice, stop, user=fake.admin), type=4)
    assert refused.ephemeral
    assert "Only who follows this can stop it" in refused.content + str(refused.embeds)
    assert len(await Follows(env.storage).personal(int(fake.alice.id))) == 1  # type: ignore[arg-type]
    done = await answered(await fake.click(notice, stop), type=4)
    assert done.ephemeral
    assert "Stopped following **hyperbolic embeddings**" in done.embed["description"]
    assert await Follows(env.storage).personal(int(fake.alice.id)) == []  # type: ignore[arg-type]
    again = await answered(await fake.click(notice, stop), type=4)
    assert "already stopped" in again.content + str(again.embeds)


async def test_a_one_paper_notice_has_a_save_button_and_a_channel_follow_needs_a_manager(
    env: Env,
) -> None:
    fake = env.fake
    channel = fake.guild.text_channel
    await env.start()
    await env.slash("follow add", {"query": "rainfall", "channel": channel}, user=fake.admin)
    await env.reload(grown(env.engine, *MATCHING, *OTHER))
    [notice] = fake.channel_messages(channel)
    assert custom_id(notice, "pb:save:") == "pb:save:new/003"
    assert [c["label"] for c in components(notice) if c.get("style") == 5] == ["Open 1"]
    stop = custom_id(notice, "pb:fstop:")
    refused = await answered(await fake.click(notice, stop, user=fake.alice), type=4)
    assert "Manage Server" in refused.content + str(refused.embeds)
    done = await answered(await fake.click(notice, stop, user=fake.admin), type=4)
    assert "Stopped following **rainfall**" in done.embed["description"]

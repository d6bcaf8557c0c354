"""The daily post's actions and its forum form, through the real discord.py client and the
loopback Discord: More like this, Save, Cite and the PDF / Code links on the post (working after
a restart), a thread that starts the discussion, no internal token in any footer, and in a forum
channel a post tagged with the topic."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.app.exts.daily.poster import DiscordPoster
from bot.config import SearchSettings
from bot.daily.rules import Posted
from bot.daily.tables import DailyTables
from bot.library import citation
from bot.papers.records import Link, Paper
from bot.search.engine import SearchEngine
from tests.app.exts.daily.support import DUE, START, DailyEnv, SteppedClock
from tests.app.helpers import answered, page_heading
from tests.fakediscord import BotConnection, FakeDiscord
from tests.fakediscord.models import snowflake
from tests.fakediscord.rules_forum import REQUIRE_TAG


def paper(n: int, title: str) -> Paper:
    return Paper(
        id=f"t/{n}",
        title=title,
        abstract=f"{title}. Diffusion models for sampling graphs, number {n}.",
        venue="ICML 2026",
        year=2026,
        authors=(f"Ada Author{n}",),
        links=(
            Link("page", f"https://openreview.net/forum?id=p{n}"),
            Link("pdf", f"https://openreview.net/pdf?id=p{n}"),
            Link("code", f"https://github.com/lab/p{n}"),
        ),
    )


PAPERS = [paper(n, f"Graph Diffusion Sampler {n}") for n in range(1, 5)]
TAG = {
    "id": snowflake(),
    "name": "Diffusion",
    "moderated": False,
    "emoji_id": None,
    "emoji_name": None,
}
OTHER_TAG = {
    "id": snowflake(),
    "name": "Robotics",
    "moderated": False,
    "emoji_id": None,
    "emoji_name": None,
}


@pytest.fixture(scope="module")
def engine() -> SearchEngine:
    return SearchEngine(PAPERS, settings=SearchSettings())


@pytest_asyncio.fixture
async def env(
    fake_discord: FakeDiscord,
    connect_bot: Callable[..., Awaitable[BotConnection]],
    engine: SearchEngine,
    tmp_path: Path,
) -> AsyncIterator[DailyEnv]:
    url = str(tmp_path / "bot.sqlite3")
    daily = DailyEnv(fake_discord, engine, SteppedClock(START), url, connect_bot)
    yield daily
    await daily.stop()


def ids_of(message: dict[str, Any]) -> list[str]:
    return [c.get("custom_id", "") for row in message["components"] for c in row["components"]]


def urls_of(message: dict[str, Any]) -> dict[str, str]:
    return {
        c["label"]: c["url"]
        for row in message["components"]
        for c in row["components"]
        if c.get("style") == 5
    }


async def test_the_post_has_its_actions_and_a_thread_that_starts_the_discussion(
    env: DailyEnv,
) -> None:
    await env.start()
    fake = env.fake
    await env.set_daily(ephemeral=True)
    env.clock.advance_to(DUE)
    post = await fake.wait_for_message(env.papers)
    await env.wait_state(fake.guild, "sent")
    shown = next(p for p in PAPERS if p.title == post["embeds"][0]["title"])
    assert post["embeds"][0]["footer"]["text"] == "Paper of the day · Saturday 1 March 2025"
    heads = [i.split(":")[1] for i in ids_of(post) if i]
    assert heads[:2] == ["more", "save"]
    assert heads[2].startswith("cite~potd-2025-03-01-")
    assert urls_of(post) == {
        "PDF": f"https://openreview.net/pdf?id=p{shown.id[2:]}",
        "Code": f"https://github.com/lab/p{shown.id[2:]}",
        "Paper page": f"https://openreview.net/forum?id=p{shown.id[2:]}",
    }
    [thread] = fake.threads
    [starter] = fake.channel_messages(thread["id"])
    assert starter["content"].startswith("💬 **Discuss today's paper: ")
    assert f"[PDF](https://openreview.net/pdf?id=p{shown.id[2:]})" in starter["content"]

    await env.restart()  # every button works after a restart
    cite_id = next(i for i in ids_of(post) if i.startswith("pb:cite"))
    cited = await answered(await fake.click(post, cite_id), type=4, ephemeral=True)
    assert cited.content == f"```bibtex\n{citation(shown)}```"
    more_id = next(i for i in ids_of(post) if i.startswith("pb:more:"))
    more = await answered(await fake.click(post, more_id), type=4)
    assert page_heading(more.data).startswith("More like: ")
    today = await env.slash("today", user=fake.alice)
    assert "potd-" not in today.embed["footer"]["text"]
    assert [i.split(":")[1] for i in today.custom_ids] == [
        "more",
        "save",
        "cite",
        "share",
        "up",
        "down",
    ]


async def test_a_forum_gets_each_day_as_a_post_tagged_with_the_topic(env: DailyEnv) -> None:
    forum = env.fake.guild.add_channel("papers-forum", type=15, available_tags=[OTHER_TAG, TAG])
    await env.start()
    fake = env.fake
    done = await env.set_daily(forum, topic="graph sampler", ephemeral=True)
    assert "is a post in the forum" in done.embed["description"]
    assert "tagged" not in done.embed["description"]  # no tag is named so
    done = await env.set_daily(forum, topic="graph diffusion", ephemeral=True)
    assert "tagged “Diffusion”" in done.embed["description"]
    env.clock.advance_to(DUE)
    await env.wait_state(fake.guild, "sent")
    [thread] = fake.threads
    assert thread["parent_id"] == forum.id
    assert thread["applied_tags"] == [TAG["id"]]
    post, discussion = fake.channel_messages(thread["id"])
    assert post["id"] == thread["id"]  # the starter message is the post
    assert thread["name"] == post["embeds"][0]["title"]
    assert "potd-" not in post["embeds"][0]["footer"]["text"]
    assert discussion["content"].startswith("💬 **Discuss today's paper")
    pick = await DailyTables(env.bot.storage).get_pick(int(fake.guild.id), "2025-03-01")
    assert pick is not None
    assert (
        pick.jump_url == f"https://discord.com/channels/{fake.guild.id}/{post['id']}/{post['id']}"
    )
    today = await env.slash("today", user=fake.alice)
    assert today.content.startswith(f"Posted in <#{thread['id']}>")

    # After a crash between sending and recording, the post is found among the forum's threads.
    found = await DiscordPoster(env.bot).find_existing(int(forum.id), pick.marker, START)
    assert found == Posted(int(post["id"]), int(thread["id"]))
    assert await DiscordPoster(env.bot).find_existing(int(forum.id), "potd-other", START) is None


async def test_a_forum_that_requires_a_tag_without_one_for_the_topic_is_refused(
    env: DailyEnv,
) -> None:
    strict = env.fake.guild.add_channel(
        "strict-forum", type=15, available_tags=[OTHER_TAG], flags=REQUIRE_TAG
    )
    await env.start()
    reply = await env.set_daily(strict, topic="diffusion", ephemeral=True)
    assert "requires a tag on every post" in reply.embed["description"]
    assert "“Robotics”" in reply.embed["description"]
    assert "Nothing was saved." in reply.embed["description"]
    assert await DailyTables(env.bot.storage).get_schedule(int(env.fake.guild.id)) is None

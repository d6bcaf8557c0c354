""" "Find papers", user installs and `/server links` through the real discord.py client against the
loopback Discord, with arXiv and OpenReview played by the loopback sources."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.app.client import PaperBot
from bot.config import LinksSettings, SearchSettings, Settings
from bot.library.store import Library
from bot.papers.records import Link, Paper
from bot.search.engine import SearchEngine
from bot.storage.store import Storage
from tests.app.helpers import TOKEN, answered, make_bot, make_settings, page_heading, page_hits
from tests.fakediscord import FakeDiscord, FakeUser
from tests.fakediscord.rules_commands import NotOffered
from tests.fakesources import FakeArxiv, FakeOpenReview, arxiv_entry, note

IN_CORPUS = Paper(
    id="arxiv:2401.01234",
    title="Sparse Mixtures of Transport Experts",
    abstract="We route tokens by optimal transport.",
    venue="arXiv",
    year=2024,
    authors=("Ada Lovelace",),
    links=(Link("page", "https://arxiv.org/abs/2401.01234"),),
)
FORUM_PAPER = Paper(
    id="iclr2018/Hk9Xc_lR-",
    title="Learning to Count Objects in Natural Images",
    abstract="Counting with attention.",
    venue="ICLR 2018",
    year=2018,
    authors=("Grace Hopper",),
)
TITLED = Paper(
    id="test/titled-1",
    title="Deep Residual Learning for Image Recognition",
    abstract="Residual connections make deep networks trainable.",
    venue="CVPR 2016",
    year=2016,
    authors=("Kaiming He",),
)


@pytest.fixture(scope="module")
def engine() -> SearchEngine:
    return SearchEngine([IN_CORPUS, FORUM_PAPER, TITLED], settings=SearchSettings())


@dataclass
class Env:
    fake: FakeDiscord
    bot: PaperBot
    arxiv: FakeArxiv
    openreview: FakeOpenReview
    storage: Storage

    async def find(self, text: str, **kw: Any) -> Any:
        channel = kw.pop("channel", None)
        user: FakeUser = kw.pop("user", self.fake.alice)
        where = channel or self.fake.channel
        message = self.fake.world.messages.create({"content": text}, channel=where, author=user)
        handle = await self.fake.message_command("Find papers", message, channel=channel, **kw)
        return handle, await answered(handle, type=4, ephemeral=True)


async def _env(
    fake: FakeDiscord, connect_bot: Any, engine: SearchEngine, tmp_path: Path, replies: bool
) -> AsyncIterator[Env]:
    arxiv = FakeArxiv(
        [arxiv_entry("2402.05678", title="Fetched Paper on Diffusion", summary="About diffusion.")]
    )
    openreview = FakeOpenReview([note("XyZ98765ab", title="An OpenReview Paper")])
    await arxiv.start()
    await openreview.start()
    storage = await Storage.open(str(tmp_path / "bot.sqlite3"))
    base: Settings = make_settings(fake)
    settings = replace(
        base,
        sources=replace(
            base.sources,
            arxiv_url=arxiv.base_url,
            openreview_url=openreview.url,
            arxiv_interval_seconds=0.0,
        ),
        links=LinksSettings(replies=replies, fetch_timeout_seconds=5.0),
    )
    bot = make_bot(settings, engine, storage)
    connection = await connect_bot(bot, TOKEN)
    try:
        yield Env(fake, bot, arxiv, openreview, storage)
    finally:
        await connection.close()  # before its database closes
        await arxiv.stop()
        await openreview.stop()
        await storage.close()


@pytest_asyncio.fixture
async def env(
    fake_discord: FakeDiscord, connect_bot: Any, engine: SearchEngine, tmp_path: Path
) -> AsyncIterator[Env]:
    async for made in _env(fake_discord, connect_bot, engine, tmp_path, replies=False):
        yield made


async def test_commands_declare_installs_and_contexts(env: Env) -> None:
    commands = {c["name"]: c for c in env.fake.command_syncs[-1].commands}
    menu = commands["Find papers"]
    assert menu["type"] == 3
    assert not menu.get("description")
    for name in ("search", "paper", "similar", "random", "library", "follow", "Find papers"):
        assert commands[name]["integration_types"] == [0, 1], name
        assert commands[name]["contexts"] == [0, 1, 2], name
    for name in ("server", "top"):
        assert commands[name]["integration_types"] == [0], name
        assert commands[name]["contexts"] == [0], name


async def test_user_install_in_a_group_dm_is_ephemeral_without_channel_access(env: Env) -> None:
    fake = env.fake
    group = fake.group_dm()
    before = len(fake.requests)
    handle = await fake.slash("search", {"query": "learning"}, channel=group, user_install=True)
    reply = await answered(handle, type=4)
    assert reply.ephemeral
    assert page_heading(reply.data) == "🔎 learning"
    assert page_hits(reply.data).count("**") >= 4  # two hits: a page that would offer Share
    assert "pb:share" not in reply.custom_ids  # no public post where the bot is no member
    later = fake.requests[before:]
    assert not [c for c in later if c.path.startswith("/channels/")], [c.path for c in later]
    elsewhere = fake.outside_guild().channels[0]
    paper = await answered(
        await fake.slash("paper", {"paper": IN_CORPUS.id}, channel=elsewhere), type=4
    )
    assert paper.ephemeral
    assert IN_CORPUS.title in paper.embed["title"]


async def test_user_install_in_a_dm_between_members(env: Env) -> None:
    fake = env.fake
    dm = fake.user_dm(fake.admin)  # alice's DM with admin: the bot is no member
    before = len(fake.requests)
    handle = await fake.slash("random", channel=dm, user_install=True)
    assert handle.payload["context"] == 2
    reply = await answered(handle, type=4)
    assert reply.ephemeral
    assert reply.embed["title"]
    assert not [c for c in fake.requests[before:] if c.path.startswith("/channels/")]
    with pytest.raises(NotOffered):
        await fake.slash("server links", {"state": "on"}, channel=dm, user_install=True)


async def test_server_features_are_not_offered_outside_servers(env: Env) -> None:
    fake = env.fake
    for channel in (fake.group_dm(), fake.outside_guild().channels[0]):
        with pytest.raises(NotOffered):
            await fake.slash("top", channel=channel, user_install=True)
        with pytest.raises(NotOffered):
            await fake.slash("server links", {"state": "on"}, channel=channel, user_install=True)
    with pytest.raises(NotOffered):
        await fake.slash("top", channel=fake.world.dm_channel(fake.alice))


async def test_find_papers_in_the_corpus(env: Env) -> None:
    _handle, reply = await env.find("have you read https://arxiv.org/abs/2401.01234v2 ?")
    assert len(reply.embeds) == 1
    assert "Sparse Mixtures of Transport Experts" in reply.embed["title"]
    assert "in the bot's corpus" in reply.embed["footer"]["text"]
    assert reply.custom_ids == [
        f"pb:save:{IN_CORPUS.id}",
        f"pb:up:{IN_CORPUS.id}",
        f"pb:down:{IN_CORPUS.id}",
    ]
    assert env.arxiv.seen == 0  # nothing fetched for a paper the corpus has


async def test_find_papers_fetches_arxiv_and_openreview_and_saves(env: Env) -> None:
    text = (
        "new: arXiv:2402.05678 and https://openreview.net/forum?id=XyZ98765ab "
        "plus openreview.net/forum?id=Hk9Xc_lR-"
    )
    _handle, reply = await env.find(text)
    titles = [e["title"] for e in reply.embeds]
    assert "Fetched Paper on Diffusion" in titles[0]
    assert "An OpenReview Paper" in titles[1]
    assert FORUM_PAPER.title in titles[2]
    assert "fetched from arXiv now" in reply.embeds[0]["footer"]["text"]
    assert reply.custom_ids[:2] == ["pb:fsave:arxiv:2402.05678", "pb:fsave:openreview:XyZ98765ab"]
    saved = await answered(await env.fake.click(reply, "pb:fsave:arxiv:2402.05678"), type=4)
    assert "Saved" in saved.content
    assert saved.ephemeral
    assert await Library(env.storage).get(int(env.fake.alice.id), "arxiv:2402.05678")


async def test_find_papers_doi_title_and_nothing(env: Env) -> None:
    _h, doi = await env.find("see doi:10.1145/3292500.3330701 and 10.48550/arXiv.2401.01234")
    assert "Sparse Mixtures" in doi.embeds[0]["title"]  # arXiv's own DOI is that arXiv paper
    assert doi.embeds[-1]["title"] == "Not found"
    assert "10.1145/3292500.3330701" in doi.embeds[-1]["description"]
    _h, titled = await env.find("the classic “Deep Residual Learning for Image Recognition”")
    assert TITLED.title in titled.embed["title"]
    _h, nothing = await env.find("no papers here, just 3.14 and a 2023.12345 typo")
    assert "I found no paper in that message" in nothing.embed["description"]
    assert nothing.custom_ids == []


async def test_find_papers_by_user_install_in_a_group_dm(env: Env) -> None:
    before = len(env.fake.requests)
    _h, reply = await env.find("2401.01234", channel=env.fake.group_dm(), user_install=True)
    assert reply.ephemeral
    assert "Sparse Mixtures" in reply.embed["title"]
    assert not [c for c in env.fake.requests[before:] if c.path.startswith("/channels/")]


async def test_server_links_needs_the_setting(env: Env) -> None:
    reply = await answered(
        await env.fake.slash("server links", {"state": "on"}, user=env.fake.admin), type=4
    )
    assert "Message Content intent" in reply.embed["description"]
    assert env.bot.intents.message_content is False


@pytest_asyncio.fixture
async def replies_env(
    fake_discord: FakeDiscord, connect_bot: Any, engine: SearchEngine, tmp_path: Path
) -> AsyncIterator[Env]:
    async for made in _env(fake_discord, connect_bot, engine, tmp_path, replies=True):
        yield made


async def test_link_replies_on_and_off(replies_env: Env) -> None:
    env = replies_env
    fake = env.fake
    assert env.bot.intents.message_content is True
    await fake.user_message("before: https://arxiv.org/abs/2401.01234")
    on = await answered(await fake.slash("server links", {"state": "on"}, user=fake.admin), type=4)
    assert "reply to messages" in on.embed["description"]
    posted = await fake.user_message("look https://arxiv.org/abs/2401.01234")
    reply = await fake.wait_for_message(index=2)
    assert reply["message_reference"]["message_id"] == posted["id"]
    assert "Sparse Mixtures" in reply["embeds"][0]["title"]
    assert len(fake.channel_messages()) == 3  # the first message got no reply: replies were off
    await answered(await fake.slash("server links", {"state": "off"}, user=fake.admin), type=4)
    await fake.user_message("again https://arxiv.org/abs/2401.01234")
    await fake.user_message('a quote "Deep Residual Learning for Image Recognition"')
    await answered(await fake.slash("help"), type=4)  # a round trip: the listener has run
    assert len(fake.channel_messages()) == 5

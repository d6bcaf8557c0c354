"""The phone-first results page through the real bot and the loopback Discord: no dead
buttons (0 or 1 result), a page of 10 within Discord's v2 limits, Save beside every hit, and
matched authors and notices from hand-made results."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import discord
import pytest_asyncio

from bot.app.client import PaperBot
from bot.app.results.pages import PageState
from bot.app.results.views import results_view
from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from bot.search.results import Hit, SearchResult
from bot.storage.store import Storage
from tests.app.helpers import TOKEN, answered, make_bot, make_settings, page_texts
from tests.fakediscord import BotConnection, FakeDiscord, iter_components
from tests.fakediscord.rules_components import message_refusals

V2 = 1 << 15


@pytest_asyncio.fixture
async def env(
    fake_discord: FakeDiscord,
    connect_bot: Callable[..., Awaitable[BotConnection]],
    icml_engine: SearchEngine,
) -> AsyncIterator[tuple[FakeDiscord, PaperBot]]:
    storage = await Storage.open(":memory:")
    bot = make_bot(make_settings(fake_discord), icml_engine, storage)
    await connect_bot(bot, TOKEN)
    yield fake_discord, bot
    await storage.close()


def labels(data: dict[str, Any]) -> list[str]:
    return [c.get("label", "") for c in iter_components(data.get("components") or [])]


async def test_no_match_says_so_without_controls(env: tuple[FakeDiscord, PaperBot]) -> None:
    fake, _bot = env
    reply = await answered(await fake.slash("search", {"query": "zzzqxv"}), type=4)
    assert reply.data["flags"] & V2
    [heading] = page_texts(reply.data)
    assert "No paper matches" in heading
    assert reply.custom_ids == []  # no ◀ ▶, no Share, no empty menu


async def test_one_match_has_save_but_no_paging_or_share(
    env: tuple[FakeDiscord, PaperBot],
) -> None:
    fake, _bot = env
    reply = await answered(await fake.slash("search", {"query": "dWorldEval"}), type=4)
    assert "◀" not in labels(reply.data)
    assert "Share" not in labels(reply.data)
    assert [i.split(":")[1] for i in reply.custom_ids] == ["open", "save"]
    save = next(i for i in reply.custom_ids if i.startswith("pb:save:"))
    saved = await answered(await fake.click(reply, save), type=4, ephemeral=True)
    assert "Saved" in saved.content


async def test_page_of_ten_and_the_last_page(env: tuple[FakeDiscord, PaperBot]) -> None:
    fake, _bot = env
    reply = await answered(await fake.slash("search", {"query": "learning", "limit": 10}), type=4)
    found = list(iter_components(reply.components))
    assert len(found) <= 40
    assert not message_refusals(reply.data, [], create=True)
    assert sum(1 for i in reply.custom_ids if i.startswith("pb:save:")) == 10
    last = await answered(await fake.slash("search", {"query": "training"}), type=4)
    update = await answered(await fake.click(last, "pb:s:2:5::training"), type=7)
    assert update.data["flags"] & V2  # the edit keeps Components v2
    nxt = next(c for c in iter_components(update.components) if c.get("label") == "▶")
    assert nxt["disabled"]


def paper(n: int, authors: tuple[str, ...]) -> Paper:
    return Paper(
        id=f"p{n}",
        title=f"A $\\frac{{a}}{{b}}$ title {'very long ' * 40}{n}",
        abstract="x",
        venue="V",
        authors=authors,
    )


def test_matched_authors_and_notices_are_shown() -> None:
    names = ("Ada Lovelace", "Alan Turing", "Grace Hopper", "Michael Jordan")
    hits = [
        Hit(paper(1, names), 1.0, "some **snippet**", 1, matched_authors=("Michael Jordan",)),
        Hit(paper(2, names), 0.5, "", 2),
    ]
    result = SearchResult(
        "author:jordan", hits, total=2, notices=("No paper has the phrase; best matches.",)
    )
    view = results_view(result, PageState("s", "author:jordan"), share=True)
    body = {"components": view.to_components(), "flags": V2}
    assert not message_refusals(body, [], create=True)
    heading, first, second = page_texts(body)
    assert "No paper has the phrase; best matches." in heading
    assert "Michael Jordan" in first
    assert "et al." not in first
    assert "Ada Lovelace, Alan Turing, Grace Hopper et al." in second
    assert all(len(line) < 400 for line in first.split("\n"))  # the long title is cut
    ids = [getattr(c, "custom_id", None) for c in view.walk_children()]
    assert "pb:share" in ids
    assert not any(str(i).startswith("pb:s:") for i in ids)
    assert isinstance(view, discord.ui.LayoutView)

"""The phone-first results page through the real bot and the loopback Discord: no dead
buttons (0 or 1 result), a page of 10 within Discord's v2 limits, Save beside every hit, and
matched authors and notices from hand-made results."""

from __future__ import annotations

from typing import Any

import discord

from bot.app.client import PaperBot
from bot.app.results import embeds
from bot.app.results.embeds import results_embed
from bot.app.results.pages import PageState
from bot.app.results.views import results_layout
from bot.papers.records import Paper
from bot.search.results import Hit, SearchResult
from tests.app.helpers import answered, page_texts
from tests.app.test_faults import env
from tests.fakediscord import FakeDiscord, iter_components
from tests.fakediscord.rules_components import message_refusals

V2 = 1 << 15
__all__ = ["env"]  # the fixture (the bot on the ICML corpus), used by name


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
    view = results_layout(
        result, PageState("s", "author:jordan"), embeds.page_texts(result), share=True
    )
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
    [menu] = [c for c in iter_components(body["components"]) if c["type"] == 3]
    assert menu["options"][0]["description"] == "V · Michael Jordan"  # the menu says it too
    assert isinstance(view, discord.ui.LayoutView)


async def test_a_page_sent_as_an_embed_becomes_v2_when_paged(
    env: tuple[FakeDiscord, PaperBot],
) -> None:
    """A results message an older version sent (one embed, classic rows) still pages: the edit
    clears its content and embeds and sets the flag, as Discord requires."""
    fake, _bot = env
    old = fake.world.messages.create(
        {
            "embeds": [{"title": "🔎 training", "description": "**1. …**"}],
            "components": [
                {
                    "type": 1,
                    "components": [
                        {"type": 2, "style": 2, "label": "▶", "custom_id": "pb:s:2:5::^"}
                    ],
                }
            ],
        },
        channel=fake.channel,
        author=fake.world.bot_user,
    )
    update = await answered(await fake.click(old, "pb:s:2:5::^"), type=7)
    assert update.data["flags"] & V2
    assert update.data["embeds"] == []
    assert update.data.get("content") is None
    assert page_texts(update.data)[0].startswith("### 🔎 training\n-# page 2/")
    assert update.message is not None
    assert update.message["embeds"] == []


def test_the_console_page_shows_notices_and_matched_authors() -> None:
    """The console prints `results_embed`: the same notices and matched authors."""
    names = ("Ada Lovelace", "Alan Turing", "Grace Hopper", "Michael Jordan")
    hit = Hit(paper(1, names), 1.0, "", 1, matched_authors=("Michael Jordan",))
    result = SearchResult("q", [hit], total=1, notices=("Every match is weak.",))
    description = results_embed(result).description or ""
    assert description.startswith("ℹ️ Every match is weak.\n\n**1. ")
    assert "Michael Jordan" in description
    assert "et al." not in description

"""`/foryou` and 👍 / 👎 through the loopback Discord: the fallback to follows below a handful of
signals, the ranked page with its buttons and ▶, a 👎 paper never coming back, ratings that
stay the member's own, and `/library clear` deleting ratings and feed settings too."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import pytest_asyncio

from bot.app.client import PaperBot
from bot.config import SearchSettings
from bot.follows import Feeds, Follows
from bot.follows.feeds import tuned
from bot.foryou import DOWN, UP, Ratings
from bot.library import Library
from bot.papers.records import Link, Paper
from bot.search.engine import SearchEngine
from tests.app.helpers import (
    answered,
    bot_on_sqlite,
    ephemeral_reply,
    page_hits,
)
from tests.fakediscord import BotConnection, FakeDiscord

T0 = datetime(2026, 3, 1, tzinfo=UTC)
# Added yesterday (/new and /foryou read the real clock); the liked papers are older.
YESTERDAY = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")


def paper(n: int, title: str, abstract: str, added: str | None = YESTERDAY) -> Paper:
    return Paper(
        id=f"fy/{n}",
        title=title,
        abstract=abstract,
        venue="ICML 2026",
        year=2026,
        authors=(f"Author {n}",),
        links=(Link("page", f"https://example.org/fy/{n}"),),
        added=added,
    )


LIKED = [
    paper(i, f"Hyperbolic trees {i}", "Trees embed in hyperbolic space.", None) for i in range(3)
]
TOPICS = ("lattices", "routing", "chemistry", "language", "vision", "robots", "music")
CANDIDATES = [
    paper(10 + i, f"Hyperbolic graphs for {t}", f"Hyperbolic embeddings of trees for {t}.")
    for i, t in enumerate(TOPICS)
]
OTHER = [paper(30, "Rainfall", "Weather records."), paper(31, "Proteins", "Protein folding.")]


@pytest.fixture(scope="module")
def engine() -> SearchEngine:
    return SearchEngine([*LIKED, *CANDIDATES, *OTHER], settings=SearchSettings())


@pytest_asyncio.fixture
async def env(
    fake_discord: FakeDiscord,
    connect_bot: Callable[..., Awaitable[BotConnection]],
    engine: SearchEngine,
    tmp_path: Any,
) -> AsyncIterator[tuple[FakeDiscord, PaperBot]]:
    async with bot_on_sqlite(fake_discord, connect_bot, engine, tmp_path / "bot.sqlite3") as bot:
        yield fake_discord, bot


_slash = ephemeral_reply


async def test_foryou_falls_back_learns_pages_and_a_disliked_paper_never_returns(
    env: tuple[FakeDiscord, PaperBot],
) -> None:
    fake, bot = env
    alice = int(fake.alice.id)
    assert bot.storage is not None
    empty = await _slash(fake, "foryou")
    assert "I need at least 3 and have 0" in empty.embed["description"]
    assert "`/follow add`" in empty.embed["description"]

    await Follows(bot.storage).add(alice, "weather", now=T0)
    fallback = await _slash(fake, "foryou")
    assert "newest matches of your follows" in fallback.embed["description"]
    assert "Rainfall" in fallback.embed["description"]

    for p in LIKED:
        await Library(bot.storage).save(alice, p.id, T0)
    page = await _slash(fake, "foryou")
    text = page.embed["description"]
    assert "I need" not in text
    assert "% match" in text
    assert text.startswith("**1. [Hyperbolic graphs")
    assert "Hyperbolic trees" not in text  # what she saved is not recommended back
    assert "from 3 saved or 👍, 0 👎" in page.embed["footer"]["text"]
    top = next(p for p in CANDIDATES if f"[{p.title}]" in text.split("\n")[0])
    assert f"pb:up:{top.id}" in page.custom_ids
    assert f"pb:down:{top.id}" in page.custom_ids
    assert "pb:fy:2" in page.custom_ids  # 7 candidates: two pages

    no = await answered(await fake.click(page, f"pb:down:{top.id}"), type=4, ephemeral=True)
    assert "will not be shown to you again" in no.content
    assert await Ratings(bot.storage).rejected(alice) == {top.id}
    again = await _slash(fake, "foryou")
    assert f"[{top.title}]" not in again.embed["description"]
    assert "1 👎" in again.embed["footer"]["text"]
    nxt = await answered(await fake.click(again, "pb:fy:2"), type=7)
    assert nxt.embed["footer"]["text"].startswith("page 2/2")
    assert f"[{top.title}]" not in nxt.embed["description"]

    [up] = [c for c in nxt.custom_ids if c.startswith("pb:up:")]  # the page's one paper
    yes = await answered(await fake.click(again, up), type=4, ephemeral=True)
    assert yes.content.startswith("👍 Noted: more like")
    back = await answered(await fake.click(again, up), type=4, ephemeral=True)
    assert "taken back" in back.content


async def test_ratings_stay_with_their_member(env: tuple[FakeDiscord, PaperBot]) -> None:
    fake, bot = env
    assert bot.storage is not None
    alice, admin = int(fake.alice.id), int(fake.admin.id)
    for member in (alice, admin):
        for p in LIKED:
            await Library(bot.storage).save(member, p.id, T0)
    await Ratings(bot.storage).rate(alice, CANDIDATES[0].id, DOWN, T0)
    theirs = await _slash(fake, "foryou", user=fake.admin)
    assert theirs.ephemeral
    assert f"[{CANDIDATES[0].title}]" in theirs.embed["description"]  # Alice's 👎 is hers
    assert "0 👎" in theirs.embed["footer"]["text"]
    # The same button pressed by another member rates for them, never for its first reader.
    await answered(await fake.click(theirs, f"pb:up:{CANDIDATES[1].id}", user=fake.admin), type=4)
    assert [r.rating for r in await Ratings(bot.storage).of(admin)] == [UP]
    assert [r.paper_id for r in await Ratings(bot.storage).of(alice)] == [CANDIDATES[0].id]


async def test_library_clear_deletes_ratings_and_feeds(env: tuple[FakeDiscord, PaperBot]) -> None:
    fake, bot = env
    assert bot.storage is not None
    alice = int(fake.alice.id)
    await Ratings(bot.storage).rate(alice, CANDIDATES[0].id, DOWN, T0)
    await Ratings(bot.storage).mark_shown(alice, [CANDIDATES[1].id], "foryou", T0)
    made = await _slash(fake, "follow foryou")
    fid = made.embed["description"].split("(`", 1)[1].split("`)", 1)[0]
    await _slash(fake, "follow tune", {"follow": fid, "frequency": "weekly", "cap": 2})
    assert (await Feeds(bot.storage).get(fid, alice)).cap == 2

    ask = await _slash(fake, "library clear")
    done = await answered(await fake.click(ask, f"pb:forget:{alice}"), type=7)
    assert "1 ratings" in done.embed["description"]
    assert "1 follows" in done.embed["description"]
    assert await Ratings(bot.storage).of(alice) == []
    assert await Ratings(bot.storage).shown_among(alice, [CANDIDATES[1].id]) == set()
    assert (await Feeds(bot.storage).get(fid, alice)).cap == 10
    assert tuned  # the settings module is the one the command used


async def test_new_leaves_out_what_the_member_disliked_and_remembers_the_rest(
    env: tuple[FakeDiscord, PaperBot],
) -> None:
    fake, bot = env
    assert bot.storage is not None
    alice = int(fake.alice.id)
    hidden = CANDIDATES[0]
    await Ratings(bot.storage).rate(alice, hidden.id, DOWN, T0)
    mine = await answered(await fake.slash("new", {"days": 7, "limit": 10}), type=4)
    theirs = await answered(
        await fake.slash("new", {"days": 7, "limit": 10}, user=fake.admin), type=4
    )
    assert hidden.title not in page_hits(mine.data)
    assert hidden.title in page_hits(theirs.data)
    listed = [p.id for p in (*CANDIDATES, *OTHER) if p.title in page_hits(mine.data)]
    assert len(listed) == 8
    assert await Ratings(bot.storage).shown_among(alice, listed) == set(listed)
    # ...so the For you feed and follows will not push those to her again.
    assert await Ratings(bot.storage).mark_shown(alice, listed, "follow", T0) == []

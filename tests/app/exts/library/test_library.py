"""The reading list through the loopback Discord: Save on a search result and on the daily post,
`/library show|read|remove|export|clear`; the BibTeX export is parsed back with pybtex."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest
import pytest_asyncio
from pybtex.database import parse_string

from bot.app.client import PaperBot
from bot.config import LibrarySettings, SearchSettings
from bot.library import library_of, now
from bot.papers.records import Link, Paper
from bot.search.engine import SearchEngine
from bot.storage.store import Storage
from tests.app.exts.daily.support import DUE, DailyEnv
from tests.app.helpers import (
    TOKEN,
    answered,
    bot_on_sqlite,
    ephemeral_reply,
    make_bot,
    make_settings,
)
from tests.fakediscord import BotConnection, FakeDiscord, iter_components

TRICKY = Paper(
    id="test/tricky-1",
    title=r"Learning $\ell_1$ & 100% {Sparse} Models_v2 #1: BERT ~ GPT^2",
    abstract="We study sparse models. A {brace} and a back\\slash and 50% of $x_i^2$ terms.",
    venue="NeurIPS 2025",
    year=2025,
    authors=("José Müller", "Pat O'Brien", "Ada Lovelace"),
    links=(Link("page", "https://openreview.net/forum?id=abc_123"),),
    keywords=("sparsity", "L1 & friends"),
)
PLAIN = Paper(
    id="test/plain-2",
    title="Sparse Attention Transformers",
    abstract="Attention that is sparse.",
    venue="ICML 2026",
    year=2026,
    authors=("Grace Hopper",),
)
SAME_KEY = Paper(
    id="test/plain-3",
    title="Sparse attention, again",
    abstract="More sparse attention.",
    venue="ICML 2026",
    year=2026,
    authors=("Grace B. Hopper",),
)


@pytest.fixture(scope="module")
def engine() -> SearchEngine:
    return SearchEngine([TRICKY, PLAIN, SAME_KEY], settings=SearchSettings())


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


async def test_save_from_search_detail_show_read_remove(env: tuple[FakeDiscord, PaperBot]) -> None:
    fake, _bot = env
    results = await _slash(fake, "search", {"query": "sparse"})
    detail = await answered(await fake.select(results, "pb:open", [TRICKY.id]), type=4)
    assert f"pb:save:{TRICKY.id}" in detail.custom_ids
    saved = await answered(await fake.click(detail, f"pb:save:{TRICKY.id}"), type=4)
    assert saved.ephemeral
    assert saved.content.startswith("📚 Saved **Learning")
    again = await answered(await fake.click(detail, f"pb:save:{TRICKY.id}"), type=4)
    assert "already in your library" in again.content
    # The same button pressed by someone else fills *their* library, not alice's.
    await answered(await fake.click(detail, f"pb:save:{TRICKY.id}", user=fake.admin), type=4)

    shown = await _slash(fake, "library show")
    assert shown.embed["title"] == "📚 Your library"
    assert shown.embed["footer"]["text"] == "page 1/1 · 1 saved · 1 unread"
    assert "🔵 unread" in shown.embed["description"]
    assert [c.split(":")[1] for c in shown.custom_ids] == ["lpick", "lread", "lrm"]  # no ◀ ▶

    done = await _slash(fake, "library read", {"paper": TRICKY.id})
    assert "read ✅" in done.embed["description"]
    shown = await _slash(fake, "library show")
    assert "✅ read" in shown.embed["description"]
    assert shown.embed["footer"]["text"].endswith("0 unread")

    missing = await _slash(fake, "library remove", {"paper": PLAIN.id})
    assert "is not in your library" in missing.embed["description"]
    gone = await _slash(fake, "library remove", {"paper": TRICKY.id})
    assert "Removed" in gone.embed["description"]
    empty = await _slash(fake, "library show")
    assert "Nothing saved yet" in empty.embed["description"]
    admin = await _slash(fake, "library show", user=fake.admin)
    assert admin.embed["footer"]["text"].startswith("page 1/1 · 1 saved")


async def test_library_pages_newest_first(env: tuple[FakeDiscord, PaperBot], engine) -> None:
    fake, bot = env
    from bot.library.store import Library

    store = Library(bot.storage)  # type: ignore[arg-type]
    from datetime import UTC, datetime, timedelta

    base = datetime(2026, 1, 1, tzinfo=UTC)
    ids = [p.id for p in engine.papers]
    for i in range(7):  # 7 saves over 3 papers are 3 rows: saving twice is harmless
        await store.save(int(fake.alice.id), ids[i % 3], base + timedelta(days=i))
    assert await store.count(int(fake.alice.id)) == 3
    for i in range(3, 8):  # papers outside the corpus show as ids
        await store.save(int(fake.alice.id), f"gone/{i}", base + timedelta(days=10 + i))
    first = await _slash(fake, "library show")
    assert first.embed["footer"]["text"] == "page 1/2 · 8 saved · 8 unread"
    assert first.embed["description"].startswith("**1. gone/7** (no longer in the corpus)")
    assert first.custom_ids[-2:] == ["pb:lib:0", "pb:lib:2"]
    nxt = await answered(await fake.click(first, "pb:lib:2"), type=7)
    assert nxt.embed["footer"]["text"].startswith("page 2/2")
    assert nxt.embed["description"].startswith("**6. ")


async def test_export_bibtex_parses_back_with_every_field(
    env: tuple[FakeDiscord, PaperBot],
) -> None:
    fake, bot = env
    from bot.library.store import Library

    store = Library(bot.storage)  # type: ignore[arg-type]
    from bot.library.actions import now

    for paper in (TRICKY, PLAIN, SAME_KEY):
        await store.save(int(fake.alice.id), paper.id, now())
    reply = await _slash(fake, "library export", {"format": "bibtex"})
    assert reply.content == "Your library as bibtex: 3 papers."
    [upload] = reply.uploads
    assert upload.filename == "library.bib"
    [attachment] = reply.message["attachments"]  # type: ignore[index]
    assert attachment["filename"] == "library.bib"
    text = upload.data.decode("utf-8")
    db = parse_string(text, "bibtex")
    assert set(db.entries) == {"muller2025learning", "hopper2026sparsea", "hopper2026sparseb"}
    entry = db.entries["muller2025learning"]
    assert entry.type == "inproceedings"
    fields = entry.fields
    assert fields["title"] == (
        r"{Learning $\ell_1$ \& 100\% \textbraceleft{}Sparse\textbraceright{} Models\_v2 \#1: BERT "
        r"\textasciitilde{} GPT\textasciicircum{}2}"
    )
    assert fields["booktitle"] == "NeurIPS 2025"
    assert fields["year"] == "2025"
    assert fields["url"] == "https://openreview.net/forum?id=abc_123"
    assert fields["keywords"] == r"sparsity, L1 \& friends"
    assert fields["abstract"] == (
        r"We study sparse models. A \textbraceleft{}brace\textbraceright{} and a "
        r"back\textbackslash{}slash and 50\% of "
        r"$x_i^2$ terms."
    )
    assert fields["note"] == "paper id: test/tricky-1"
    people = [str(p) for p in entry.persons["author"]]
    assert people == ["Müller, José", "O'Brien, Pat", "Lovelace, Ada"]
    # Keys are stable: the same library exports the same keys again.
    again = await _slash(fake, "library export", {"format": "bibtex"})
    assert again.uploads[0].data == upload.data


async def test_export_markdown_and_csv(env: tuple[FakeDiscord, PaperBot]) -> None:
    fake, bot = env
    from bot.library.actions import now
    from bot.library.store import Library

    store = Library(bot.storage)  # type: ignore[arg-type]
    empty = await _slash(fake, "library export", {"format": "csv"})
    assert "empty" in empty.embed["description"]
    await store.save(int(fake.alice.id), TRICKY.id, now())
    await store.mark_read(int(fake.alice.id), TRICKY.id, now())
    md = await _slash(fake, "library export", {"format": "markdown"})
    text = md.uploads[0].data.decode()
    assert md.uploads[0].filename == "library.md"
    assert text.startswith("# Reading list\n\n- [x] [Learning")
    assert "(https://openreview.net/forum?id=abc_123)" in text
    table = await _slash(fake, "library export", {"format": "csv"})
    rows = list(csv.DictReader(io.StringIO(table.uploads[0].data.decode())))
    assert len(rows) == 1
    assert rows[0]["id"] == TRICKY.id
    assert rows[0]["authors"] == "José Müller; Pat O'Brien; Ada Lovelace"
    assert rows[0]["read"] == "yes"


async def test_clear_asks_then_deletes_everything(env: tuple[FakeDiscord, PaperBot]) -> None:
    fake, bot = env
    from bot.follows.store import Follows
    from bot.library.actions import now
    from bot.library.store import Library

    store = Library(bot.storage)  # type: ignore[arg-type]
    alice = int(fake.alice.id)
    await store.save(alice, TRICKY.id, now())
    await store.save(int(fake.admin.id), TRICKY.id, now())
    await Follows(bot.storage).add(alice, "sparse", now=now())  # type: ignore[arg-type]
    ask = await _slash(fake, "library clear")
    assert "cannot be undone" in ask.embed["description"]
    assert await store.count(alice) == 1  # asking deletes nothing
    button = f"pb:forget:{alice}"
    assert ask.custom_ids == [button]
    refused = await answered(await fake.click(ask, button, user=fake.admin), type=4)
    assert "someone else" in refused.embed["description"]
    assert await store.count(int(fake.admin.id)) == 1
    done = await answered(await fake.click(ask, button), type=7)
    assert done.embed["description"].startswith("Deleted: 1 saved papers, 0 reactions, 1 follows")
    assert done.components == []
    assert await store.count(alice) == 0
    assert await Follows(bot.storage).personal(alice) == []  # type: ignore[arg-type]
    assert await store.count(int(fake.admin.id)) == 1


async def test_save_from_the_daily_post(daily_env: DailyEnv) -> None:
    await daily_env.start()
    fake = daily_env.fake
    await daily_env.set_daily()
    daily_env.clock.advance_to(DUE)
    post = await fake.wait_for_message(daily_env.papers)
    ids = [c.get("custom_id", "") for row in post["components"] for c in row["components"]]
    [save_id] = [i for i in ids if i.startswith("pb:save:")]
    await daily_env.restart()  # the button still works after a restart
    saved = await answered(await fake.click(post, save_id), type=4)
    assert saved.ephemeral
    assert saved.content.startswith("📚 Saved")
    shown = await daily_env.slash("library show", user=fake.alice, ephemeral=True)
    title = daily_env.engine.paper(save_id.removeprefix("pb:save:")).title
    assert title[:40] in shown.embed["description"]


async def test_a_full_library_says_so(env: tuple[FakeDiscord, PaperBot]) -> None:
    fake, bot = env
    bot.settings = replace(bot.settings, library=LibrarySettings(max_saved=1))
    results = await _slash(fake, "search", {"query": "sparse"})
    menu = next(c for c in iter_components(results.components) if c["type"] == 3)
    first, second = (o["value"] for o in menu["options"][:2])
    details = []
    for paper_id in (first, second):
        details.append(await answered(await fake.select(results, "pb:open", [paper_id]), type=4))
        reply = await answered(await fake.click(details[-1], f"pb:save:{paper_id}"), type=4)
    assert "Your library is full (1 papers)" in reply.embed["description"]
    again = await answered(await fake.click(details[0], f"pb:save:{first}"), type=4)
    assert "already in your library" in again.content  # saving twice is still harmless


async def test_remove_and_read_autocomplete_offer_the_readers_own_saved_papers(
    env: tuple[FakeDiscord, PaperBot],
) -> None:
    fake, bot = env
    from datetime import UTC, datetime

    from bot.library.store import Library

    store = Library(bot.storage)  # type: ignore[arg-type]
    when = datetime(2026, 1, 1, tzinfo=UTC)
    await store.save(int(fake.alice.id), TRICKY.id, when)
    await store.save(int(fake.alice.id), "gone/1", when)  # no longer in the corpus: its id
    await store.save(int(fake.admin.id), PLAIN.id, when)
    for command in ("library remove", "library read"):
        handle = await fake.autocomplete(command, {"paper": ""})
        choices = (await answered(handle, type=8)).choices
        assert sorted(c["value"] for c in choices) == ["gone/1", TRICKY.id]
        assert {c["value"]: c["name"] for c in choices}["gone/1"] == "gone/1"
    typed = await answered(await fake.autocomplete("library read", {"paper": "LEARNING"}), type=8)
    assert [c["value"] for c in typed.choices] == [TRICKY.id]


async def test_mark_read_and_remove_from_the_page_after_a_restart(
    fake_discord: FakeDiscord,
    connect_bot: Callable[..., Awaitable[BotConnection]],
    engine: SearchEngine,
    tmp_path: Any,
) -> None:
    """The page shows titles, never ids; pick a paper in its menu, then Mark read or Remove:
    no typing. Only the library's owner may use them; they work after a restart."""
    fake = fake_discord
    url = str(tmp_path / "bot.sqlite3")
    storage = await Storage.open(url)
    bot = make_bot(make_settings(fake), engine, storage)
    connection = await connect_bot(bot, TOKEN)
    alice = int(fake.alice.id)
    for paper in (PLAIN, TRICKY):
        await bot_save(bot, alice, paper.id)
    page = await _slash(fake, "library show")
    assert PLAIN.id not in page.embed["description"]
    assert TRICKY.id not in page.embed["description"]
    [pick] = [c for c in page.custom_ids if c.startswith("pb:lpick:")]
    menu = page.components[0]["components"][0]
    assert [o["label"][:5] for o in menu["options"]] == ["1. Le", "2. Sp"]  # newest first

    await connection.close()
    await storage.close()
    storage = await Storage.open(url)
    bot = make_bot(make_settings(fake), engine, storage)
    await connect_bot(bot, TOKEN)
    other = await answered(await fake.select(page, pick, [PLAIN.id], user=fake.admin), type=4)
    assert other.ephemeral
    assert "someone else's library" in (other.content + str(other.embeds))
    picked = await answered(await fake.select(page, pick, [PLAIN.id]), type=7)
    read_id = next(c for c in picked.custom_ids if c.startswith("pb:lread:"))
    assert read_id.endswith(f":1:{PLAIN.id}")
    marked = await answered(await fake.click(picked, read_id), type=7)
    assert marked.content == "Marked **Sparse Attention Transformers** as read ✅."
    assert "✅ read" in marked.embed["description"]
    assert (await storage_get(bot, alice, PLAIN.id)).read
    remove_id = next(c for c in marked.custom_ids if c.startswith("pb:lrm:"))
    removed = await answered(await fake.click(marked, remove_id), type=7)
    assert removed.content == "Removed **Sparse Attention Transformers** from your library."
    assert "Sparse Attention" not in removed.embed["description"]
    assert await storage_get(bot, alice, PLAIN.id) is None
    await storage.close()


async def bot_save(bot: PaperBot, user_id: int, paper_id: str) -> None:
    assert bot.storage is not None
    await library_of(bot.storage).save(user_id, paper_id, now(), None)


async def storage_get(bot: PaperBot, user_id: int, paper_id: str) -> Any:
    return await library_of(bot.storage).get(user_id, paper_id)

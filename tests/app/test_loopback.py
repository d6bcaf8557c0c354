"""The real bot (PaperBot, its cogs and components) driven through the loopback Discord.

Each test asserts on the JSON the bot sends (embeds, components, flags) and that every
interaction got its answer. The ICML 2026 seed (19 papers) is the corpus.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import discord
import pytest
import pytest_asyncio

from bot.app.client import PaperBot
from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from bot.storage.store import Storage
from tests.app.helpers import (
    TOKEN,
    answered,
    assert_within_limits,
    make_bot,
    make_settings,
    page_footer,
    page_heading,
    page_hits,
    page_texts,
)
from tests.fakediscord import EPHEMERAL, BotConnection, FakeDiscord, iter_components

Connect = Callable[..., Awaitable[BotConnection]]
FOOTER = re.compile(r"^page (\d+)/(\d+) · (\d+) match(?:es)? for “(.+)”")


@pytest_asyncio.fixture
async def storage() -> AsyncIterator[Storage]:
    store = await Storage.open(":memory:")
    yield store
    await store.close()


@pytest_asyncio.fixture
async def env(
    fake_discord: FakeDiscord, connect_bot: Connect, icml_engine: SearchEngine, storage: Storage
) -> tuple[FakeDiscord, PaperBot]:
    bot = make_bot(make_settings(fake_discord), icml_engine, storage)
    await connect_bot(bot, TOKEN)
    return fake_discord, bot


def texts(data: dict[str, Any]) -> list[str]:
    return page_texts(data)


def heading(reply: Any) -> str:
    return page_heading(reply.data)


def hits_text(reply: Any) -> str:
    return page_hits(reply.data)


def footer_line(data: dict[str, Any]) -> str:
    return page_footer(data)


def footer(reply: Any) -> re.Match[str]:
    match = FOOTER.match(footer_line(reply.data))
    assert match, reply.data
    return match


# -- startup and command sync ------------------------------------------------------------------


async def test_setup_hook_loads_cogs_and_syncs_described_commands(
    env: tuple[FakeDiscord, PaperBot],
) -> None:
    fake, bot = env
    assert {"Search", "Papers", "Meta", "Errors"} <= set(bot.cogs)
    assert bot.failed_extensions == {}
    assert len(fake.command_syncs) == 1
    assert fake.command_syncs[0].guild_id is None
    commands = fake.commands()
    assert {"search", "paper", "similar", "random", "help", "sync"} <= set(commands)
    for command in commands.values():
        assert command["description"] or command["type"] == 3  # a message command has none
        for option in command.get("options", []):
            assert option["description"], (command["name"], option["name"])
    search = {o["name"]: o for o in commands["search"]["options"]}
    # Optional since the author option can stand alone (`/search author:Michael Jordan`).
    assert not search["query"].get("required")
    assert search["query"]["max_length"] == 250
    assert search["author"]["autocomplete"]
    assert search["venue"]["autocomplete"]
    assert search["venue"]["max_length"] == 100
    assert (search["limit"]["min_value"], search["limit"]["max_value"]) == (1, 10)
    assert commands["paper"]["options"][0]["autocomplete"]
    assert str(commands["sync"]["default_member_permissions"]) == "8"


async def test_commands_sync_only_when_changed(
    fake_discord: FakeDiscord, connect_bot: Connect, icml_engine: SearchEngine, storage: Storage
) -> None:
    settings = make_settings(fake_discord)
    first = await connect_bot(make_bot(settings, icml_engine, storage), TOKEN)
    assert len(fake_discord.command_syncs) == 1
    await first.close()
    # A restart with the same commands: no sync (the hash is in storage).
    second = await connect_bot(make_bot(settings, icml_engine, storage), TOKEN)
    assert len(fake_discord.command_syncs) == 1
    await second.close()
    # A changed definition is synced.
    changed = make_bot(settings, icml_engine, storage)
    changed.tree.command(name="extra", description="A new command")(_noop)
    await connect_bot(changed, TOKEN)
    assert len(fake_discord.command_syncs) == 2
    assert "extra" in fake_discord.commands()


async def _noop(interaction: discord.Interaction) -> None:
    await interaction.response.send_message("ok", ephemeral=True)


async def test_guild_id_syncs_to_that_guild_and_force_sync(
    fake_discord: FakeDiscord, connect_bot: Connect, icml_engine: SearchEngine, storage: Storage
) -> None:
    settings = make_settings(fake_discord, guild=True)
    await connect_bot(make_bot(settings, icml_engine, storage), TOKEN)
    assert [s.guild_id for s in fake_discord.command_syncs] == [fake_discord.guild.id]
    assert "search" in fake_discord.commands(fake_discord.guild)
    forced = make_bot(settings, icml_engine, storage, force_sync=True)
    await connect_bot(forced, TOKEN)
    assert len(fake_discord.command_syncs) == 2


async def test_sync_command_is_owner_only(env: tuple[FakeDiscord, PaperBot]) -> None:
    fake, _bot = env
    refused = await fake.slash("sync", user=fake.alice)
    reply = await answered(refused, type=4, ephemeral=True)
    assert "owner" in reply.embed["description"]
    done = await fake.slash("sync", user=fake.owner)
    await answered(done, type=5)
    follow = await done.followup()
    assert follow.body["content"].startswith("Synced ")
    assert len(fake.command_syncs) == 2


# -- /search and its components ----------------------------------------------------------------


async def test_search_page_buttons_detail_more_like_and_share(
    env: tuple[FakeDiscord, PaperBot],
) -> None:
    fake, _bot = env
    handle = await fake.slash("search", {"query": "training"})
    reply = await answered(handle, type=4, ephemeral=True)
    page, pages, total, query = footer(reply).groups()
    assert (page, pages, total, query) == ("1", "2", "10", "training")
    assert reply.data["flags"] & (1 << 15)  # Components v2
    description = hits_text(reply)
    assert description.startswith("**1. ")
    assert "**training**" in description.lower()
    assert description.count("\n\n") == 4  # five hits
    ids = reply.custom_ids
    assert ids[:4] == ["pb:s:0:5::training", "pb:s:2:5::training", "pb:share", "pb:open"]
    assert len([i for i in ids[4:] if i.startswith("pb:save:")]) == 5  # Save on every hit
    buttons = reply.components[1]["components"]
    assert [b["label"] for b in buttons] == ["◀", "▶", "Share"]
    assert buttons[0]["disabled"]
    assert not buttons[1].get("disabled")
    menu = reply.components[2]["components"][0]
    assert len(menu["options"]) == 5
    assert menu["options"][0]["label"].startswith("1. ")

    nxt = await fake.click(reply, "pb:s:2:5::training")
    update = await answered(nxt, type=7)
    assert footer(update).group(1) == "2"
    assert update.data["flags"] & (1 << 15)  # the edit keeps the v2 flag
    assert hits_text(update).startswith("**6. ")
    assert update.custom_ids[:2] == ["pb:s:1:5::training", "pb:s:3:5::training"]

    chosen_id = update.components[2]["components"][0]["options"][0]["value"]
    opened = await fake.select(reply, "pb:open", [chosen_id])
    detail = await answered(opened, type=4, ephemeral=True)
    embed = detail.embed
    assert embed["footer"]["text"].startswith(f"id: {chosen_id}")
    assert [f["name"] for f in embed["fields"]][:2] == ["Authors", "Venue"]
    assert detail.custom_ids == [
        f"pb:more:{chosen_id}",
        f"pb:save:{chosen_id}",
        f"pb:cite:{chosen_id}",
        "pb:share",
        f"pb:up:{chosen_id}",
        f"pb:down:{chosen_id}",
    ]

    more = await fake.click(detail, f"pb:more:{chosen_id}")
    similar = await answered(more, type=4, ephemeral=True)
    assert heading(similar).startswith("More like: ")
    assert similar.custom_ids[0].startswith("pb:l:0:5:")
    assert similar.custom_ids[0].endswith(chosen_id)
    assert f"pb:save:{chosen_id}" not in similar.custom_ids

    shared = await fake.click(reply, "pb:share")
    public = await answered(shared, type=4, ephemeral=False)
    assert texts(public.data)[0] == f"Shared by <@{fake.alice.id}>"
    assert public.data["allowed_mentions"]["parse"] == []
    assert texts(public.data)[1:] == texts(update.data)  # the message as it is now
    assert [i for i in public.custom_ids if not i.startswith("pb:save:")] == []  # no paging
    assert [m["id"] for m in fake.channel_messages()] == [public.message["id"]]


async def test_buttons_work_after_restart(
    fake_discord: FakeDiscord, connect_bot: Connect, icml_engine: SearchEngine, storage: Storage
) -> None:
    settings = make_settings(fake_discord)
    first = await connect_bot(make_bot(settings, icml_engine, storage), TOKEN)
    reply = await answered(await fake_discord.slash("search", {"query": "training"}), type=4)
    await first.close()
    await connect_bot(make_bot(settings, icml_engine, storage), TOKEN)
    click = await fake_discord.click(reply, "pb:s:2:5::training")
    update = await answered(click, type=7)
    assert footer(update).group(1) == "2"
    opened = await fake_discord.select(reply, "pb:open", [icml_engine.papers[0].id])
    await answered(opened, type=4)


async def test_long_query_pages_from_the_message_after_restart(
    fake_discord: FakeDiscord, connect_bot: Connect, icml_engine: SearchEngine, storage: Storage
) -> None:
    """A pasted title is longer than a custom_id can hold: the ▶ button reads it back from the
    message it sits on, even after the bot restarted."""
    settings = make_settings(fake_discord)
    first = await connect_bot(make_bot(settings, icml_engine, storage), TOKEN)
    query = (
        "learning with transport plans, world models, reinforcement learning agents and "
        "representation alignment for generative flow models"
    )
    assert len(query) > 100
    reply = await answered(await fake_discord.slash("search", {"query": query, "limit": 2}), type=4)
    assert heading(reply) == f"🔎 {query}"
    assert "pb:s:2:2::^" in reply.custom_ids
    await first.close()
    await connect_bot(make_bot(settings, icml_engine, storage), TOKEN)
    update = await answered(await fake_discord.click(reply, "pb:s:2:2::^"), type=7)
    assert footer(update).groups()[0] == "2"
    assert footer(update).group(4) == query
    assert hits_text(update).startswith("**3. ")


async def test_search_with_venue_limit_and_colon_query(env: tuple[FakeDiscord, PaperBot]) -> None:
    fake, _bot = env
    handle = await fake.slash(
        "search", {"query": "venue:icml learning", "venue": "ICML 2026", "limit": 2}
    )
    reply = await answered(handle, type=4)
    assert footer(reply).group(2) != "1"
    assert footer_line(reply.data).endswith("in ICML 2026")
    cid = "pb:s:2:2:ICML 2026:venue:icml learning"
    assert cid in reply.custom_ids
    update = await answered(await fake.click(reply, cid), type=7)
    assert footer(update).group(1) == "2"
    assert hits_text(update).startswith("**3. ")


async def test_venue_autocomplete(env: tuple[FakeDiscord, PaperBot]) -> None:
    fake, _bot = env
    handle = await fake.autocomplete("search", {"query": "x", "venue": "icm"})
    reply = await answered(handle, type=8)
    assert reply.choices == [{"name": "ICML 2026", "value": "ICML 2026"}]


# -- /paper, /similar, /random, /help ------------------------------------------------------------


async def test_paper_autocomplete_then_detail(
    env: tuple[FakeDiscord, PaperBot], icml_engine: SearchEngine
) -> None:
    fake, _bot = env
    loop = asyncio.get_running_loop()
    started = loop.time()
    handle = await fake.autocomplete("paper", {"paper": "sinkhorn"})
    reply = await answered(handle, type=8)
    assert loop.time() - started < 1.0
    assert 1 <= len(reply.choices) <= 25
    choice = reply.choices[0]
    assert choice["name"].startswith("Sinkhorn")
    assert len(choice["name"]) <= 100
    everything = await answered(await fake.autocomplete("paper", {"paper": ""}), type=8)
    assert len(everything.choices) == 19

    detail = await answered(
        await fake.slash("paper", {"paper": choice["value"]}), type=4, ephemeral=True
    )
    paper = icml_engine.paper(choice["value"])
    embed = detail.embed
    assert embed["title"] == paper.title
    assert "$" not in embed["description"]  # LaTeX rendered to Unicode
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert fields["Venue"] == "ICML 2026"


async def test_paper_links_found_in_abstract(
    env: tuple[FakeDiscord, PaperBot], icml_engine: SearchEngine
) -> None:
    fake, _bot = env
    paper = next(p for p in icml_engine.papers if "github.com/WillDreamer" in p.abstract)
    detail = await answered(await fake.slash("paper", {"paper": paper.title}), type=4)
    fields = {f["name"]: f["value"] for f in detail.embed["fields"]}
    assert "[Code](https://github.com/WillDreamer/ARL-Arena.git)" in fields["Links"]
    link_buttons = [c for row in detail.components for c in row["components"] if c.get("url")]
    assert link_buttons
    assert link_buttons[0]["label"] == "Code"


async def test_similar_random_and_help(
    env: tuple[FakeDiscord, PaperBot], icml_engine: SearchEngine
) -> None:
    fake, _bot = env
    target = icml_engine.papers[3]
    similar = await answered(await fake.slash("similar", {"paper": target.id}), type=4)
    assert heading(similar).startswith("More like: ")
    assert "more like: " in footer_line(similar.data)

    rand = await answered(await fake.slash("random"), type=4, ephemeral=True)
    assert rand.embed["footer"]["text"].startswith("id: icml2026/")
    rand_venue = await answered(await fake.slash("random", {"venue": "icml"}), type=4)
    assert rand_venue.embed["fields"][1]["value"] == "ICML 2026"

    help_reply = await answered(await fake.slash("help"), type=4, ephemeral=True)
    text = str(help_reply.embed)
    assert "/search" in text
    assert "ICML 2026: 19 papers" in text
    assert [f["name"] for f in help_reply.embed["fields"]][1:] == [
        "Paper of the day",
        "Your library and follows",
        "This server",
        "Corpus: 19 papers",
    ]
    assert "`/today`" in help_reply.embed["fields"][1]["value"]


# -- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "options", "expected"),
    [
        ("search", {"query": "the and of"}, "very common words"),
        ("search", {"query": "   "}, "Nothing to search for"),
        ("search", {"query": "learning", "venue": "neurips"}, "Unknown venue 'neurips'"),
        ("paper", {"paper": "no such paper at all"}, "No such paper"),
        ("similar", {"paper": "zzz-unknown"}, "No such paper"),
        ("random", {"venue": "colm"}, "Venues in this corpus: ICML 2026"),
    ],
)
async def test_user_errors_get_a_helpful_ephemeral_reply(
    env: tuple[FakeDiscord, PaperBot], command: str, options: dict[str, Any], expected: str
) -> None:
    fake, _bot = env
    reply = await answered(await fake.slash(command, options), ephemeral=True)
    assert expected in reply.embed["description"]


async def test_search_cooldown_says_when_to_retry(
    fake_discord: FakeDiscord, connect_bot: Connect, icml_engine: SearchEngine, storage: Storage
) -> None:
    settings = make_settings(fake_discord, search_cooldown_uses=2, search_cooldown_seconds=30.0)
    await connect_bot(make_bot(settings, icml_engine, storage), TOKEN)
    for _ in range(2):
        await answered(await fake_discord.slash("search", {"query": "transport"}), type=4)
    third = await answered(
        await fake_discord.slash("search", {"query": "transport"}), ephemeral=True
    )
    assert re.search(r"try again in (2\d|30) s", third.embed["description"])
    other = await fake_discord.slash("search", {"query": "transport"}, user=fake_discord.admin)
    assert "🔎" in heading(await answered(other, type=4))  # per user


async def test_unexpected_failure_is_logged_and_answered(
    env: tuple[FakeDiscord, PaperBot],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake, bot = env

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("index exploded")

    monkeypatch.setattr(bot.engine, "search", broken)
    with caplog.at_level(logging.ERROR):
        reply = await answered(await fake.slash("search", {"query": "transport"}), ephemeral=True)
    assert "went wrong" in reply.embed["description"]
    assert "index exploded" not in reply.embed["description"]
    failure = [r for r in caplog.records if r.exc_info and "failed" in r.getMessage()]
    assert failure
    assert "index exploded" in str(failure[0].exc_info[1])


async def test_component_failure_is_answered(
    env: tuple[FakeDiscord, PaperBot], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, bot = env
    reply = await answered(await fake.slash("search", {"query": "transport"}), type=4)

    def broken(ref: str) -> None:
        raise RuntimeError("disk gone")

    monkeypatch.setattr(bot.engine, "paper", broken)
    opened = await fake.select(reply, "pb:open", [bot.engine.papers[0].id])
    error = await answered(opened, type=4, ephemeral=True)
    assert "went wrong" in error.embed["description"]


async def test_slow_work_is_deferred(
    env: tuple[FakeDiscord, PaperBot], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, bot = env
    bot.defer_after = 0.05
    original = bot.engine.search

    def slow(*args: Any, **kwargs: Any) -> Any:
        import time

        time.sleep(0.3)
        return original(*args, **kwargs)

    monkeypatch.setattr(bot.engine, "search", slow)
    handle = await fake.slash("search", {"query": "training"})
    first = await handle.assert_answered(type=5, timeout=1.0)
    assert first.data["flags"] == EPHEMERAL
    edit = await handle.edit(timeout=2.0)
    assert_within_limits(edit.body)
    assert texts(edit.body)[0].startswith("### 🔎 training")
    assert "pb:open" in str(edit.body["components"])
    # A page click that is slow is deferred as an update, then the message is edited.
    click = await fake.click(
        edit.message, next(c for c in _custom_ids(edit.body) if c.startswith("pb:s:2:"))
    )
    await click.assert_answered(type=6, timeout=1.0)
    edited = await click.edit(timeout=2.0)
    assert footer_text(edited.body).startswith("page 2/")


def _custom_ids(body: dict[str, Any]) -> list[str]:
    return [c["custom_id"] for c in iter_components(body["components"]) if "custom_id" in c]


def footer_text(body: dict[str, Any]) -> str:
    return footer_line(body)


async def test_public_replies_when_configured(
    fake_discord: FakeDiscord, connect_bot: Connect, icml_engine: SearchEngine, storage: Storage
) -> None:
    settings = make_settings(fake_discord, ephemeral=False)
    await connect_bot(make_bot(settings, icml_engine, storage), TOKEN)
    reply = await answered(
        await fake_discord.slash("search", {"query": "transport"}), type=4, ephemeral=False
    )
    assert "pb:share" not in reply.custom_ids  # already public: nothing to share


async def test_every_interaction_answered_and_token_never_logged(
    fake_discord: FakeDiscord,
    connect_bot: Connect,
    icml_engine: SearchEngine,
    storage: Storage,
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.DEBUG):
        await connect_bot(make_bot(make_settings(fake_discord), icml_engine, storage), TOKEN)
        handles = [
            await fake_discord.slash("search", {"query": "diffusion"}),
            await fake_discord.slash("paper", {"paper": "zzz"}),
            await fake_discord.slash("help"),
            await fake_discord.autocomplete("paper", {"paper": "ood"}),
        ]
        for handle in handles:
            await answered(handle)
    assert all(h.acknowledged for h in handles)
    assert caplog.records, "expected discord.py debug logs"
    for record in caplog.records:
        assert TOKEN not in record.getMessage()
        assert "Sup3rSecret" not in record.getMessage()


# -- authors and did-you-mean --------------------------------------------------------------------


async def test_author_option_autocompletes_and_lists_papers(
    fake_discord: FakeDiscord, connect_bot: Connect, storage: Storage
) -> None:
    papers = [
        Paper(
            id=f"p{i}",
            title=f"Paper {i} on kernels",
            abstract="Kernels.",
            venue="ICML 2025",
            year=2020 + i,
            authors=authors,
        )
        for i, authors in enumerate(
            [("Michael I. Jordan",), ("Jordan, Michael", "Ada Lovelace"), ("Alan Turing",)]
        )
    ]
    bot = make_bot(make_settings(fake_discord), SearchEngine(papers), storage)
    await connect_bot(bot, TOKEN)
    reply = await answered(await fake_discord.autocomplete("search", {"author": "jor"}), type=8)
    assert reply.choices == [
        {"name": "Michael I. Jordan (1)", "value": "Michael I. Jordan"},
        {"name": "Michael Jordan (1)", "value": "Michael Jordan"},
    ]
    handle = await fake_discord.slash("search", {"author": "Michael Jordan"})
    reply = await answered(handle, type=4, ephemeral=True)
    assert footer(reply).groups()[2:] == ("2", 'author:"Michael Jordan"')
    assert hits_text(reply).startswith("**1. Paper 1 on kernels")


async def test_misspelt_query_offers_the_corrected_search(
    env: tuple[FakeDiscord, PaperBot],
) -> None:
    fake, _bot = env
    reply = await answered(await fake.slash("search", {"query": "difusion"}), type=4)
    assert texts(reply.data)[0].endswith("No match for difusion; did you mean **diffusion**?")
    assert "pb:s:1:5::diffusion" in reply.custom_ids
    update = await answered(await fake.click(reply, "pb:s:1:5::diffusion"), type=7)
    assert footer(update).group(4) == "diffusion"
    assert hits_text(update).startswith("**1. ")

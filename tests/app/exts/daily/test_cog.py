"""`/daily` and `/today` through the real discord.py client and the loopback Discord.

The scheduler runs on an injected clock (`bot.clock`); each test moves it to the due instant
and watches the post appear in the channel. Failure injection lives in test_daily_cog_faults.
"""

from __future__ import annotations

import asyncio
import logging
import re
from datetime import UTC, datetime
from typing import Any

import discord
import pytest

from bot.app.client import PaperBot
from bot.daily.tables import DailyTables
from tests.app.exts.daily.support import (
    DUE,
    DailyEnv,
    text_of,
)
from tests.fakediscord import EPHEMERAL, FakeDiscord

MANAGE_GUILD = str(discord.Permissions(manage_guild=True).value)


async def test_daily_is_hidden_from_non_managers_and_today_is_open(daily_env: DailyEnv) -> None:
    await daily_env.start()
    commands = daily_env.fake.commands()
    daily, today = commands["daily"], commands["today"]
    assert str(daily["default_member_permissions"]) == MANAGE_GUILD
    assert today["default_member_permissions"] is None
    assert daily["dm_permission"] is False
    assert today["dm_permission"] is False
    subs = {o["name"]: o for o in daily["options"]}
    assert set(subs) == {"set", "status", "off"}
    options = {o["name"]: o for o in subs["set"]["options"]}
    assert [o["name"] for o in subs["set"]["options"]] == [
        "channel",
        "time",
        "timezone",
        "topic",
        "pool",
    ]
    assert options["timezone"]["autocomplete"]
    assert not options["topic"].get("required")
    assert options["channel"]["channel_types"] == [0, 5, 15]


@pytest.mark.parametrize("sub", ["set", "status", "off"])
async def test_non_manager_is_refused_server_side(daily_env: DailyEnv, sub: str) -> None:
    await daily_env.start()
    options = (
        {"channel": daily_env.papers, "time": "09:00", "timezone": "UTC"} if sub == "set" else None
    )
    reply = await daily_env.slash(
        f"daily {sub}", options, user=daily_env.fake.alice, ephemeral=True
    )
    assert "Manage Server" in reply.embed["description"]
    assert (
        await DailyTables(daily_env.bot.storage).get_schedule(int(daily_env.fake.guild.id)) is None
    )
    assert daily_env.fake.channel_messages(daily_env.papers) == []


@pytest.mark.parametrize(
    ("time", "zone", "topic", "needle"),
    [
        ("25:00", "Europe/Paris", None, "hours go from 00 to 23"),
        ("9 o'clock", "Europe/Paris", None, "use 24-hour HH:MM"),
        ("09:00", "Mars/Olympus", None, "Unknown time zone 'Mars/Olympus'"),
        ("09:00", "Europe/Pari", None, "Did you mean Europe/Paris"),
        ("09:00", "UTC", "zzzqqq nonexistentword", "No paper matches the topic"),
    ],
)
async def test_bad_input_is_an_ephemeral_error_and_nothing_is_saved(
    daily_env: DailyEnv, time: str, zone: str, topic: str | None, needle: str
) -> None:
    await daily_env.start()
    reply = await daily_env.set_daily(time=time, timezone=zone, topic=topic, ephemeral=True)
    assert needle in reply.embed["description"]
    assert "Nothing was saved" in reply.embed["description"]
    assert (
        await DailyTables(daily_env.bot.storage).get_schedule(int(daily_env.fake.guild.id)) is None
    )
    status = await daily_env.slash("daily status")
    assert status.embed["title"] == "Paper of the day: not set up"


async def test_bot_permissions_in_the_channel_are_checked(daily_env: DailyEnv) -> None:
    world = daily_env.fake.world
    mute = world.add_guild(
        "Read-only",
        bot_permissions=discord.Permissions(
            view_channel=True, send_messages=True, read_message_history=True
        ),
    )
    mute.everyone.permissions = discord.Permissions(view_channel=True).value
    mute.add_channel("daily")
    no_threads = world.add_guild(
        "No threads",
        bot_permissions=discord.Permissions(
            view_channel=True, send_messages=True, read_message_history=True, embed_links=True
        ),
    )
    no_threads.add_channel("daily")
    await daily_env.start()
    refused = await daily_env.set_daily(
        mute.channel("daily"), user=daily_env.fake.owner, ephemeral=True
    )
    assert "missing **Embed Links**" in refused.embed["description"]
    assert await DailyTables(daily_env.bot.storage).get_schedule(int(mute.id)) is None
    accepted = await daily_env.set_daily(
        no_threads.channel("daily"), user=daily_env.fake.owner, ephemeral=True
    )
    assert accepted.embed["title"] == "Paper of the day is set"
    assert "missing Create Public Threads" in accepted.embed["description"]


async def test_timezone_autocomplete_from_memory(daily_env: DailyEnv) -> None:
    await daily_env.start()
    fake = daily_env.fake
    loop = asyncio.get_running_loop()

    async def choices(typed: str) -> list[str]:
        handle = await fake.autocomplete("daily set", {"timezone": typed}, user=fake.admin)
        reply = await handle.assert_answered(type=8)
        assert len(reply.choices) <= 25
        assert all(c["name"] == c["value"] for c in reply.choices)
        return [c["value"] for c in reply.choices]

    started = loop.time()
    assert (await choices("paris"))[0] == "Europe/Paris"
    assert loop.time() - started < 0.5
    assert (await choices("new york"))[0] == "America/New_York"
    assert (await choices("europe/be"))[:2] == ["Europe/Belfast", "Europe/Belgrade"]
    empty = await choices("")
    assert empty[0] == "UTC"
    assert "Asia/Tokyo" in empty
    assert await choices("Mars/Olympus") == []
    assert len(await choices("a")) == 25


async def test_set_post_restart_no_second_post_and_today_agrees(daily_env: DailyEnv) -> None:
    fake, clock = daily_env.fake, daily_env.clock
    guild = fake.guild
    await daily_env.start()
    setup = await daily_env.set_daily(ephemeral=True)
    text = setup.embed["description"]
    assert f"<#{daily_env.papers.id}>" in text
    assert "**09:00** (Europe/Paris)" in text
    assert f"<t:{int(DUE.timestamp())}:F>" in text
    assert "2025-03-01 09:00 CET (Europe/Paris) · 2025-03-01 08:00 UTC" in text
    promised = await daily_env.slash("today", user=fake.alice)  # open to everyone
    assert promised.embed["footer"]["text"].startswith("Paper of the day · Saturday 1 March 2025")
    assert "potd-" not in promised.embed["footer"]["text"]  # only the post carries the marker
    assert promised.content == ""

    clock.advance_to(datetime(2025, 3, 1, 7, 59, tzinfo=UTC))
    await clock.settled()
    assert fake.channel_messages(daily_env.papers) == []
    clock.advance_to(DUE)
    post = await fake.wait_for_message(daily_env.papers)
    await daily_env.wait_state(guild, "sent")
    embed = post["embeds"][0]
    assert embed["title"] == promised.embed["title"]
    assert re.fullmatch(  # no internal token: the marker is in the Cite button's custom_id
        r"Paper of the day · Saturday 1 March 2025( · headline derived from the abstract)?",
        embed["footer"]["text"],
    )
    ids = [c.get("custom_id") for row in post["components"] for c in row["components"]]
    pick = await DailyTables(daily_env.bot.storage).get_pick(int(guild.id), "2025-03-01")
    assert pick is not None
    assert [i.split(":")[1] for i in ids if i] == [
        "more",
        "save",
        f"cite~{pick.marker}",
        "up",
        "down",
    ]
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert fields["Venue"] == "ICML 2026"
    assert fields["Authors"]
    assert embed["description"]
    assert len(embed["description"]) <= 700
    assert [t["id"] for t in fake.threads] == [post["id"]]  # discussion thread on the post
    assert fake.threads[0]["name"] == embed["title"][:100]

    today = await daily_env.slash("today", user=fake.alice)
    assert today.embed["title"] == embed["title"]
    jump = f"https://discord.com/channels/{guild.id}/{daily_env.papers.id}/{post['id']}"
    assert today.content == f"Posted in <#{daily_env.papers.id}>: {jump}"
    status = text_of(await daily_env.slash("daily status", ephemeral=True))
    assert "Paper of the day: on" in status
    assert f"<#{daily_env.papers.id}>" in status
    assert f"({jump}) · 2025-03-01" in status
    assert "18 of 19 papers not shown yet" in status
    tomorrow = datetime(2025, 3, 2, 8, 0, tzinfo=UTC)
    assert f"<t:{int(tomorrow.timestamp())}:F>" in status
    assert "2025-03-02 09:00 CET (Europe/Paris) · 2025-03-02 08:00 UTC" in status

    await daily_env.restart()  # a new process on the same SQLite file
    await clock.settled()
    clock.advance(minutes=5)
    await clock.settled()
    assert len(fake.channel_messages(daily_env.papers)) == 1
    sends = fake.calls("POST", "/channels/{id}/messages")
    assert len([c for c in sends if daily_env.papers.id in c.path]) == 1
    again = await daily_env.slash("today", user=fake.alice)
    assert again.embed["title"] == embed["title"]

    clock.advance_to(tomorrow)
    second = await fake.wait_for_message(daily_env.papers, index=1)
    await daily_env.wait_state(guild, "sent", "2025-03-02")
    assert second["embeds"][0]["title"] != embed["title"]
    assert "Sunday 2 March 2025" in second["embeds"][0]["footer"]["text"]


async def test_topic_pool_and_status_counts(daily_env: DailyEnv) -> None:
    await daily_env.start()
    pool = daily_env.engine.matching_ids("optimal transport")
    assert 0 < len(pool) < len(daily_env.engine.papers)
    setup = await daily_env.set_daily(topic="optimal transport", ephemeral=True)
    assert "papers matching “optimal transport”" in setup.embed["description"]
    assert f"{len(pool)} of {len(pool)} papers" in setup.embed["description"]
    today = await daily_env.slash("today")
    assert daily_env.engine.paper(today.embed["title"]).id in pool


async def test_daily_off_stops_posting(daily_env: DailyEnv) -> None:
    await daily_env.start()
    await daily_env.set_daily(ephemeral=True)
    off = await daily_env.slash("daily off", ephemeral=True)
    assert "Paper of the day is off" in off.embed["description"]
    again = await daily_env.slash("daily off", ephemeral=True)
    assert "was not on" in again.embed["description"]
    daily_env.clock.advance_to(DUE)
    scheduler = daily_env.bot.get_cog("Daily").scheduler  # type: ignore[union-attr]
    assert await scheduler.next_wakeup() is None
    assert await scheduler.run_due() == []  # nothing is due: the loop has nothing to do either
    assert daily_env.fake.channel_messages(daily_env.papers) == []
    status = await daily_env.slash("daily status", ephemeral=True)
    assert status.embed["title"] == "Paper of the day: off"
    assert "Next post" not in text_of(status)


async def test_without_storage_the_daily_cog_is_not_loaded(
    fake_discord: FakeDiscord,
    connect_bot: object,
    icml_engine: object,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from tests.app.helpers import TOKEN, make_bot, make_settings

    async def no_storage(self: PaperBot) -> None:
        return None

    monkeypatch.setattr(PaperBot, "_open_storage", no_storage)
    bot = make_bot(make_settings(fake_discord), icml_engine, None)  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING):
        await connect_bot(bot, TOKEN)  # type: ignore[operator]
    assert "Daily" not in bot.cogs
    assert "Search" in bot.cogs
    assert "daily" not in fake_discord.commands()
    assert "today" not in fake_discord.commands()
    assert any("paper of the day unavailable" in r.getMessage() for r in caplog.records)


async def test_the_pool_reads_the_engine_at_call_time(daily_env: DailyEnv) -> None:
    """A live reload swaps `bot.engine`: the next pick comes from the new corpus."""
    from bot.config import SearchSettings
    from bot.search.engine import SearchEngine

    bot = await daily_env.start()
    only = daily_env.engine.papers[4]
    bot.engine = SearchEngine([only], settings=SearchSettings())
    today = await daily_env.slash("today")
    assert today.embed["title"] == only.title


async def test_slow_daily_work_is_deferred_like_search(
    daily_env: DailyEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/daily shares `respond.soon` with /search: answered at once when fast, else "thinking…"
    (ephemeral) first and the answer edited in (search's side: test_loopback)."""
    bot = await daily_env.start()
    fast = await daily_env.fake.slash("daily status", user=daily_env.fake.admin)
    await fast.assert_answered(type=4)
    bot.defer_after = 0.05
    scheduler = bot.get_cog("Daily").sched  # type: ignore[union-attr]
    original = scheduler.status

    async def slow(guild_id: int) -> Any:
        await asyncio.sleep(0.3)
        return await original(guild_id)

    monkeypatch.setattr(scheduler, "status", slow)
    handle = await daily_env.fake.slash("daily status", user=daily_env.fake.admin)
    first = await handle.assert_answered(type=5, timeout=1.0)
    assert first.data["flags"] == EPHEMERAL
    edit = await handle.edit(timeout=2.0)
    assert edit.body["embeds"][0]["title"] == "Paper of the day: not set up"


@pytest.mark.parametrize(("name", "kind"), [("Voice", 2), ("Media", 16)])
async def test_daily_set_with_a_voice_or_media_channel_names_the_kinds_that_work(
    daily_env: DailyEnv, name: str, kind: int
) -> None:
    """Issue 12 item 18: possible through the API; the answer was a Python repr. Forums are
    taken (test_forum.py); a media channel is not (its posts must carry a file)."""
    guild = daily_env.fake.guild
    channel = guild.channel(name) if kind == 2 else guild.add_channel(name, type=kind)
    await daily_env.start()
    reply = await daily_env.set_daily(channel, ephemeral=True)
    text = reply.embed["description"]
    word = "voice" if kind == 2 else "media"
    assert text == (
        f"I can't use a {word} channel for this option: it takes text or announcement or "
        "forum channels."
    )
    assert "<" not in text
    assert await DailyTables(daily_env.bot.storage).get_schedule(int(guild.id)) is None

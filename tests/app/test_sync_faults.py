"""A refused, rate-limited or failing command sync never takes the bot down (issue 10, part 3).

Each fault comes from the loopback Discord as Discord sends it; the bot must be online and
serving while the sync waits, say what happened in one log line, and tell the owner in /sync.
Startup failures (token, unreachable Discord, DNS) end with one line and a documented code.
"""

from __future__ import annotations

import asyncio
import io
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any

import discord
import discord.http
import pytest
import pytest_asyncio

from bot.app import runner
from bot.app import sync as sync_module
from bot.search.engine import SearchEngine
from bot.storage.store import Storage
from tests.app.helpers import TOKEN, answered, make_bot, make_settings
from tests.fakediscord import BotConnection, FakeDiscord

Connect = Callable[..., Awaitable[BotConnection]]
COMMANDS = "/applications/{app}/commands"


@pytest_asyncio.fixture
async def storage() -> AsyncIterator[Storage]:
    store = await Storage.open(":memory:")
    yield store
    await store.close()


async def serving(fake: FakeDiscord) -> None:
    reply = await answered(await fake.slash("help"), type=4)
    assert reply.embed["title"] == "Paper bot"


async def owner_sync(fake: FakeDiscord) -> str:
    handle = await fake.slash("sync", user=fake.owner)
    await answered(handle, type=5)
    follow = await handle.followup(timeout=6.0)
    return str(follow.body["content"])


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


async def reload_description_110(interaction: discord.Interaction) -> None:
    return None


async def test_refused_sync_keeps_serving_what_discord_has(
    fake_discord: FakeDiscord,
    connect_bot: Connect,
    icml_engine: SearchEngine,
    storage: Storage,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake_discord.rest.refusals_expected = True  # the /reload description is refused
    settings = make_settings(fake_discord)
    first = await connect_bot(make_bot(settings, icml_engine, storage), TOKEN)
    before = fake_discord.commands()
    assert "search" in before
    await first.close()
    bot = make_bot(settings, icml_engine, storage)
    bot.tree.command(name="reload", description="r" * 110)(reload_description_110)
    with caplog.at_level(logging.WARNING):
        await connect_bot(bot, TOKEN)
    assert bot.syncer.status.state == "refused"
    lines = errors(caplog)
    assert len(lines) == 1, lines
    assert "In command 'reload'" in lines[0]
    assert "description" in lines[0]
    assert "\n" not in lines[0]
    assert fake_discord.commands() == before  # Discord keeps what it had
    await serving(fake_discord)
    text = await owner_sync(fake_discord)
    assert text.startswith("Discord refused the commands")
    assert "'reload'" in text
    assert "description" in text


async def test_rate_limited_sync_does_not_keep_the_bot_offline(
    fake_discord: FakeDiscord, connect_bot: Connect, icml_engine: SearchEngine, storage: Storage
) -> None:
    fault = fake_discord.faults.rate_limit("PUT", COMMANDS, retry_after=20.0)
    bot = make_bot(make_settings(fake_discord), icml_engine, storage)
    await connect_bot(bot, TOKEN, wait_synced=False)
    # online and answering while discord.py waits out the 20 s
    await serving(fake_discord)
    assert fault.hits == 1
    assert bot.syncer.status.state == "waiting"
    text = await owner_sync(fake_discord)
    assert "rate limited, retrying in " in text
    seconds = int(text.split("retrying in ")[1].split(" ")[0])
    assert 10 <= seconds <= 20
    assert fake_discord.commands() == {}


async def test_server_error_on_sync_is_retried_with_backoff(
    fake_discord: FakeDiscord,
    connect_bot: Connect,
    icml_engine: SearchEngine,
    storage: Storage,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sync_module, "FIRST_RETRY", 0.5)
    fake_discord.faults.server_error("PUT", COMMANDS, status=503)
    bot = make_bot(make_settings(fake_discord), icml_engine, storage)
    await connect_bot(bot, TOKEN, wait_synced=False)
    await serving(fake_discord)
    assert bot.syncer.status.state == "waiting"
    assert bot.syncer.status.describe().startswith("Discord answered HTTP 503, retrying in")
    assert await bot.wait_until_synced(5.0)
    assert bot.syncer.status.state == "synced"
    assert "search" in fake_discord.commands()
    assert [c.status for c in fake_discord.calls("PUT", COMMANDS)] == [503, 200]


async def test_guild_id_of_a_server_the_bot_is_not_in(
    fake_discord: FakeDiscord,
    connect_bot: Connect,
    icml_engine: SearchEngine,
    storage: Storage,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = make_settings(fake_discord)
    settings = replace(settings, secrets=replace(settings.secrets, guild_id=123456789012345678))
    bot = make_bot(settings, icml_engine, storage)
    with caplog.at_level(logging.WARNING):
        await connect_bot(bot, TOKEN)
    lines = errors(caplog)
    assert len(lines) == 1, lines
    assert "DISCORD_GUILD_ID=123456789012345678" in lines[0]
    assert bot.syncer.status.state == "synced"
    assert "search" in fake_discord.commands()  # served globally instead
    await serving(fake_discord)


# -- startup failures: one line, a documented exit code ----------------------------------------


def run(settings: Any) -> tuple[int, str]:
    err = io.StringIO()
    code = runner.run_bot(settings, TOKEN, err)
    return code, err.getvalue()


def one_clean_line(text: str) -> None:
    assert text.count("\n") == 1, text
    assert "Traceback" not in text
    assert TOKEN not in text


async def test_wrong_token_exit_code(fake_discord: FakeDiscord) -> None:
    fake_discord.accept_only_tokens("another-token")
    code, text = await asyncio.to_thread(run, make_settings(fake_discord))
    assert code == runner.EXIT_TOKEN == 3
    assert "rejected DISCORD_TOKEN" in text
    one_clean_line(text)


async def test_unreachable_discord_exit_code(
    fake_discord: FakeDiscord, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = make_settings(fake_discord)
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there now
    monkeypatch.setattr(discord.http.Route, "BASE", f"http://127.0.0.1:{port}/api/v10")
    code, text = await asyncio.to_thread(run, settings)
    assert code == runner.EXIT_UNREACHABLE == 5
    assert f"cannot reach Discord (127.0.0.1:{port}" in text
    one_clean_line(text)


async def test_dns_failure_exit_code(
    fake_discord: FakeDiscord, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = make_settings(fake_discord)
    real = socket.getaddrinfo

    def no_dns(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "discord.invalid":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    monkeypatch.setattr(discord.http.Route, "BASE", "http://discord.invalid/api/v10")
    code, text = await asyncio.to_thread(run, settings)
    assert code == runner.EXIT_DNS == 6
    assert "cannot resolve discord.invalid (DNS failure)" in text
    one_clean_line(text)

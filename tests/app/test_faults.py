"""Discord trouble on the command side, through the loopback stand-in: the bot recovers or
reports, never crashes, and keeps serving afterwards. Also the secrets rules.

Daily-post faults are covered by the daily tests; these are interactions and the gateway.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import pytest_asyncio

from bot.app.client import PaperBot
from bot.app.runner import apply_test_endpoints
from bot.config import PROJECT_ROOT
from bot.search.engine import SearchEngine
from bot.storage.store import Storage
from tests import token_guard
from tests.app.helpers import TOKEN, answered, make_bot, make_settings, page_heading
from tests.fakediscord import BotConnection, FakeDiscord

Connect = Callable[..., Awaitable[BotConnection]]
CALLBACK = "/interactions/{id}/{token}/callback"
WEBHOOK = "/webhooks/{app}/{token}/messages/@original"


@pytest_asyncio.fixture
async def env(
    fake_discord: FakeDiscord, connect_bot: Connect, icml_engine: SearchEngine
) -> AsyncIterator[tuple[FakeDiscord, PaperBot]]:
    storage = await Storage.open(":memory:")
    bot = make_bot(make_settings(fake_discord), icml_engine, storage)
    await connect_bot(bot, TOKEN)
    yield fake_discord, bot
    await storage.close()


async def still_serving(fake: FakeDiscord, bot: PaperBot) -> None:
    reply = await answered(await fake.slash("search", {"query": "optimal transport"}), type=4)
    assert page_heading(reply.data) == "🔎 optimal transport"
    assert not bot.is_closed()


async def test_rate_limited_callback_is_retried_after_retry_after(
    env: tuple[FakeDiscord, PaperBot],
) -> None:
    fake, bot = env
    fault = fake.faults.rate_limit("POST", CALLBACK, retry_after=0.2)
    handle = await fake.slash("search", {"query": "optimal transport"})
    await answered(handle, type=4)
    calls = fake.calls("POST", CALLBACK)
    assert [c.status for c in calls] == [429, 200]  # refused once, then resent
    assert fault.hits == 1
    assert fault.exhausted
    await still_serving(fake, bot)


async def test_server_error_on_callback_is_retried(env: tuple[FakeDiscord, PaperBot]) -> None:
    fake, bot = env
    fake.faults.server_error("POST", CALLBACK)
    handle = await fake.slash("help")
    await handle.assert_answered(type=4, timeout=5)  # discord.py retries a 500 after ~1 s
    await still_serving(fake, bot)


@pytest.mark.parametrize("fault", ["expired", "channel_deleted", "forbidden"])
async def test_refused_callbacks_are_reported_and_survived(
    env: tuple[FakeDiscord, PaperBot], caplog: pytest.LogCaptureFixture, fault: str
) -> None:
    """Token expired (10062), channel deleted mid-answer (10003), missing permissions (50013)."""
    fake, bot = env
    if fault == "expired":
        fake.faults.unknown_interaction(times=1)  # nothing can answer it afterwards
    elif fault == "channel_deleted":
        fake.faults.not_found("POST", CALLBACK, times=2)
    else:
        fake.faults.forbidden("POST", CALLBACK, times=2)
    # An expired interaction cannot be answered at all, so the bot does not try a second time;
    # the other faults get one attempt to report the failure to the user.
    expected = (
        "expired before it could be answered" if fault == "expired" else "could not tell the user"
    )
    with caplog.at_level(logging.WARNING):
        handle = await fake.slash("search", {"query": "optimal transport"})
        await fake.wait_for_request(
            "POST", CALLBACK, index=0 if fault == "expired" else 1, timeout=3
        )
        for _ in range(50):
            if any(expected in r.getMessage() for r in caplog.records):
                break
            await asyncio.sleep(0.05)
    assert not handle.acknowledged
    assert any(expected in r.getMessage() for r in caplog.records)
    if fault == "expired":
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(fake.calls("POST", CALLBACK)) == 1
    await still_serving(fake, bot)


async def test_gateway_drop_resumes_and_invalid_session_reidentifies(
    env: tuple[FakeDiscord, PaperBot],
) -> None:
    fake, bot = env
    await fake.gateway.drop(4000)
    await fake.gateway.resumes.wait_for(timeout=5)
    await still_serving(fake, bot)
    await fake.gateway.drop(4000, resumable=False)
    await fake.gateway.identifies.wait_count(2, timeout=10)
    await still_serving(fake, bot)
    assert bot.failed_extensions == {}


async def test_reply_in_flight_survives_a_gateway_drop(env: tuple[FakeDiscord, PaperBot]) -> None:
    fake, _bot = env
    fake.faults.slow("POST", CALLBACK, delay=0.5)
    handle = await fake.slash("search", {"query": "optimal transport"})
    await asyncio.sleep(0.1)
    await fake.gateway.drop(1006)
    await answered(handle, type=4)  # replies go over HTTP, not the gateway


# -- secrets -------------------------------------------------------------------------------------


def test_env_file_is_ignored_and_example_documents_every_variable() -> None:
    ignored = (PROJECT_ROOT / ".gitignore").read_text().split()
    assert ".env" in ignored
    example = (PROJECT_ROOT / ".env.example").read_text()
    code = "\n".join(p.read_text() for p in (PROJECT_ROOT / "bot").rglob("*.py"))
    import re

    used = set(re.findall(r'"((?:DISCORD|PAPERBOT)_[A-Z_]+)"', code))
    assert used >= {"DISCORD_TOKEN", "PAPERBOT_API_BASE"}
    for name in used:
        assert re.search(rf"^#? ?{name}=", example, re.M), f"{name} missing from .env.example"


def test_test_endpoints_accept_only_loopback() -> None:
    with pytest.raises(ValueError, match="loopback"):
        apply_test_endpoints(
            {
                "PAPERBOT_API_BASE": "https://evil.example/api/v10",
                "PAPERBOT_GATEWAY_URL": "ws://127.0.0.1:1/gw",
            }
        )
    with pytest.raises(ValueError, match="both"):
        apply_test_endpoints({"PAPERBOT_API_BASE": "http://127.0.0.1:1/api/v10"})
    assert apply_test_endpoints({}) is False


async def test_token_never_in_replies_errors_or_logs(
    env: tuple[FakeDiscord, PaperBot],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake, bot = env

    def leaky(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"boom with {bot.settings.secrets.discord_token}")

    assert TOKEN not in repr(bot.settings)
    assert TOKEN not in repr(bot.settings.secrets)
    monkeypatch.setattr(bot.engine, "search", leaky)
    with caplog.at_level(logging.DEBUG):
        reply = await answered(await fake.slash("search", {"query": "x y"}), ephemeral=True)
    assert TOKEN not in json.dumps(reply.data)
    for call in fake.requests:  # only the Authorization header may carry it
        assert TOKEN not in json.dumps(call.json, default=str)
        assert TOKEN not in json.dumps(call.query)
    # The leaky exception is logged with its traceback; the runner's redacting formatter is
    # the guard for that (tests/app/test_runner.py); the session guard sees raw records, so
    # this test's own deliberate leak is removed from it.
    guard = token_guard.guard()
    guard.leaks[:] = [leak for leak in guard.leaks if "boom with" not in leak]


def test_session_token_guard_is_installed_and_catches_leaks() -> None:
    guard = token_guard.guard()
    assert guard in logging.getLogger().handlers, "add tests.token_guard to pytest_plugins"
    assert logging.getLogger("discord").isEnabledFor(logging.DEBUG)
    probe = token_guard.TokenGuard({"probe-secret"})
    probe.handle(logging.LogRecord("x", logging.INFO, __file__, 1, "a %s", ("probe-secret",), None))
    assert probe.leaks
    assert "probe-secret" not in probe.leaks[0]
    assert guard.seen > 0

"""SIGTERM in every state of an outage and under load (issue 26 item 14 and case c), on the
real `python -m bot` against the loopback Discord (helpers from tests/app/test_shutdown.py).

The README promises an exit 0 within 10 s of SIGTERM; systemd's `TimeoutStopSec=15`
(deploy/paperbot.service) kills a process that misses it. Each outage test puts the bot in one
state, then sends SIGTERM: connecting to a gateway that refuses or never answers, reconnecting
to a refusing gateway, resuming on one that never answers, waiting out a 429. Each reconnect
attempt must be one log line, not a traceback.

The outages are real sockets on loopback: a bound port that does not listen (connection
refused), and `SilentGateway`, which accepts connections and never answers (a network that
drops Discord's packets). The bot finds them through `PAPERBOT_GATEWAY_URL` (where discord.py
connects or re-IDENTIFYs) and READY's `resume_gateway_url` (where it RESUMEs); REST stays up.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import pytest_asyncio

from bot.config import Settings
from bot.search.engine import SearchEngine
from tests.app.helpers import page_heading
from tests.app.test_shutdown import (
    ICML,
    hook_env,
    reap,
    sigterm_within,
    start_bot,
    write_config,
)
from tests.fakediscord import FakeDiscord

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
# discord.py's lines for a failed gateway connect (`discord.shard`); kept, their traceback not.
RECONNECT_LINE = "Attempting a reconnect for shard ID 0"
LAUNCH_RETRY_LINE = "Failed to connect for shard_id: 0"
CONNECTED_LINE = "Shard ID 0 has connected to Gateway"  # READY read: the session is known


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One saved index of the test corpus for every bot of this module: each start maps it
    instead of building its own."""
    folder = tmp_path_factory.mktemp("index")
    base = Settings()
    SearchEngine.load(replace(base, corpus=replace(base.corpus, files=(ICML,), index_dir=folder)))
    return folder


@pytest.fixture
def refused_url() -> Iterator[str]:
    """A gateway URL on a loopback port that is bound but not listening: connections are
    refused (ECONNREFUSED), as when Discord's side or a firewall rejects them."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"ws://127.0.0.1:{sock.getsockname()[1]}/gateway-ws"


class SilentGateway:
    """Accepts TCP connections, reads what the client sends, and never answers: the websocket
    upgrade hangs, as on a network that drops Discord's packets."""

    def __init__(self) -> None:
        self.arrived = asyncio.Event()
        self.url = ""
        self._server: asyncio.Server | None = None
        self._held: list[asyncio.StreamWriter] = []

    async def start(self) -> SilentGateway:
        self._server = await asyncio.start_server(self._hold, "127.0.0.1", 0)
        self.url = f"ws://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/gateway-ws"
        return self

    async def _hold(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._held.append(writer)
        self.arrived.set()
        while await reader.read(4096):
            pass

    async def close(self) -> None:
        for writer in self._held:
            writer.close()
        if self._server is not None:
            self._server.close()


@pytest_asyncio.fixture
async def silent_gateway() -> AsyncIterator[SilentGateway]:
    gateway = await SilentGateway().start()
    try:
        yield gateway
    finally:
        await gateway.close()


async def wait_for_log(log_path: Path, text: str, proc: asyncio.subprocess.Process) -> None:
    """Until `text` is in the bot's log: the bot reached the state the test wants."""
    deadline = time.monotonic() + 30
    while text not in log_path.read_text(errors="replace"):
        assert proc.returncode is None, log_path.read_text(errors="replace")
        assert time.monotonic() < deadline, f"never logged {text!r}"
        await asyncio.sleep(0.02)


async def stop_and_check(proc: asyncio.subprocess.Process, log_path: Path, state: str) -> str:
    """SIGTERM: exit 0 within 10 s (README), and no traceback in the log; returns the log."""
    try:
        code, took = await sigterm_within(proc)
    finally:
        await reap(proc)
    output = log_path.read_text(errors="replace")
    print(f"SIGTERM while {state}: exit {code} after {took:.2f} s")  # shown with -s
    assert code == 0, output
    assert "Traceback" not in output, output
    return output


async def launch(
    fake: FakeDiscord, root: Path, index_dir: Path, env: dict[str, str] | None = None
) -> tuple[asyncio.subprocess.Process, Path]:
    config = write_config(root, [ICML], index_dir=index_dir)
    log_path = root / "bot.log"
    return await start_bot(fake, config, log_path, env=env), log_path


@pytest.mark.parametrize("gateway", ["refused", "silent"])
async def test_sigterm_while_connecting_to_an_unreachable_gateway_exits_0(
    fake_discord: FakeDiscord,
    tmp_path: Path,
    index_dir: Path,
    refused_url: str,
    silent_gateway: SilentGateway,
    gateway: str,
) -> None:
    """Logged in over REST, but the gateway refuses every connection (discord.py retries the
    shard every 5 s, each time with a traceback) or never answers the upgrade (it waits up to
    `shard_connect_timeout`, 180 s)."""
    url = refused_url if gateway == "refused" else silent_gateway.url
    proc, log_path = await launch(
        fake_discord, tmp_path, index_dir, {"SHARD_COUNT": "1", "PAPERBOT_GATEWAY_URL": url}
    )
    if gateway == "refused":
        await wait_for_log(log_path, LAUNCH_RETRY_LINE, proc)
    else:
        await asyncio.wait_for(silent_gateway.arrived.wait(), 30)
    output = await stop_and_check(proc, log_path, f"connecting to a {gateway} gateway")
    assert not fake_discord.gateway.identifies.items
    if gateway == "refused":
        assert f"{LAUNCH_RETRY_LINE}. Retrying... (127.0.0.1:" in output, output


# Loaded by the child before the bot (sitecustomize): discord.py's reconnect backoff at once as
# long as after a few failed attempts (it doubles from 2 s up to 1024 s), so the test need not
# wait through the short ones.
LONG_BACKOFF = """
from discord import backoff

backoff.ExponentialBackoff.delay = lambda self: 60.0
"""


async def test_sigterm_while_reconnecting_to_a_refusing_gateway_exits_0(
    fake_discord: FakeDiscord, tmp_path: Path, index_dir: Path, refused_url: str
) -> None:
    """Connected, then the session drops and every RESUME and re-IDENTIFY is refused: the shard
    retries with a growing backoff, logging each attempt. SIGTERM during a 60 s wait (the
    backoff after about six attempts) was ignored until the wait was over."""
    fake_discord.gateway.url = refused_url  # READY's resume_gateway_url
    env = {"PAPERBOT_GATEWAY_URL": refused_url, **hook_env(tmp_path, LONG_BACKOFF)}
    proc, log_path = await launch(fake_discord, tmp_path, index_dir, env)
    await wait_for_log(log_path, CONNECTED_LINE, proc)
    await fake_discord.gateway.drop(4000)
    await wait_for_log(log_path, RECONNECT_LINE, proc)
    output = await stop_and_check(proc, log_path, "reconnecting to a refusing gateway")
    assert f"{RECONNECT_LINE} in 60.00s (127.0.0.1:" in output, output


async def test_sigterm_while_resuming_on_a_silent_gateway_exits_0(
    fake_discord: FakeDiscord, tmp_path: Path, index_dir: Path, silent_gateway: SilentGateway
) -> None:
    """The session drops (4000, resumable) and READY's `resume_gateway_url` never answers:
    discord.py waits up to 60 s for the RESUME's connection."""
    fake_discord.gateway.url = silent_gateway.url
    env = {"PAPERBOT_GATEWAY_URL": silent_gateway.url}
    proc, log_path = await launch(fake_discord, tmp_path, index_dir, env)
    await wait_for_log(log_path, CONNECTED_LINE, proc)
    await fake_discord.gateway.drop(4000)
    await asyncio.wait_for(silent_gateway.arrived.wait(), 30)
    await stop_and_check(proc, log_path, "resuming on a silent gateway")


@pytest.mark.parametrize("route", ["/gateway/bot", "/users/@me"])
async def test_sigterm_while_rate_limited_exits_0(
    fake_discord: FakeDiscord, tmp_path: Path, index_dir: Path, route: str
) -> None:
    """`GET /gateway/bot` (before connecting) or `GET /users/@me` (logging in) answers 429
    with a Retry-After of 600 s, which discord.py sleeps out before asking again. During the
    login, SIGTERM ended the process only after the 600 s, with exit 1 and a "Session is
    closed" traceback."""
    fake_discord.faults.rate_limit("GET", route, retry_after=600.0, times=5)
    proc, log_path = await launch(fake_discord, tmp_path, index_dir)
    await fake_discord.wait_for_request("GET", route, status=429, timeout=30)
    await stop_and_check(proc, log_path, f"rate-limited on {route}")
    assert not fake_discord.gateway.identifies.items


IN_FLIGHT = 50
HELD = 3  # fewer than the worker threads (bot.app.workers: at least 5), so each one runs
GRACE = 2.0  # the grace the child gets instead of the production SHUTDOWN_GRACE
# Loaded by the child before the bot (sitecustomize). A search for "held …" runs until the
# test writes the file `release` (it marks its start with a file of its own name); one for
# "slow …" takes 15 s. The grace is shortened: the sequence is what is tested, and the exit
# is held to the 10 s less the grace saved.
IN_FLIGHT_HOOK = f"""
import os
import time
from pathlib import Path

from bot.app import client
from bot.search import engine

client.SHUTDOWN_GRACE = {GRACE}
FLAGS = Path(os.environ["PAPERBOT_TEST_FLAGS"])
_search = engine.SearchEngine.search


def search(self, query, *args, **kwargs):
    if query.startswith("held"):
        (FLAGS / query).touch()
        deadline = time.monotonic() + 15
        while not (FLAGS / "release").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
    elif query.startswith("slow"):
        time.sleep(15)
    return _search(self, query, *args, **kwargs)


engine.SearchEngine.search = search
"""


async def test_sigterm_with_50_interactions_in_flight_answers_each_and_exits_0(
    fake_discord: FakeDiscord, tmp_path: Path, index_dir: Path
) -> None:
    """Issue 26 case c: 50 searches in flight at SIGTERM. The 3 released during the grace are
    answered with their results, the 47 still running with "restarting"; none is left
    unanswered, and the exit stays within the 10 s."""
    from bot.app.client import SHUTDOWN_GRACE
    from bot.app.respond import RESTARTING

    flags = tmp_path / "flags"
    flags.mkdir()
    config = write_config(
        tmp_path, [ICML], index_dir=index_dir, extra="[discord]\nsearch_cooldown_uses = 100\n"
    )
    log_path = tmp_path / "bot.log"
    env = {"PAPERBOT_TEST_FLAGS": str(flags), **hook_env(tmp_path, IN_FLIGHT_HOOK)}
    proc = await start_bot(fake_discord, config, log_path, env=env)
    try:
        await wait_for_log(log_path, CONNECTED_LINE, proc)
        held = [await fake_discord.slash("search", {"query": f"held {i}"}) for i in range(HELD)]
        deadline = time.monotonic() + 30
        while len(list(flags.iterdir())) < HELD:  # each holds a worker thread
            assert time.monotonic() < deadline, "the held searches never started"
            await asyncio.sleep(0.02)
        slow = [
            await fake_discord.slash("search", {"query": f"slow {i}"})
            for i in range(IN_FLIGHT - HELD)
        ]
        for handle in held + slow:
            await handle.assert_answered(type=5, timeout=10)  # deferred: "thinking…"
        budget = 10 - (SHUTDOWN_GRACE - GRACE)
        stopping = asyncio.ensure_future(sigterm_within(proc, budget))
        (flags / "release").touch()
        code, took = await stopping
    finally:
        await reap(proc)
    output = log_path.read_text(errors="replace")
    print(f"SIGTERM with {IN_FLIGHT} searches in flight: exit {code} after {took:.2f} s")
    assert code == 0, output
    assert "Traceback" not in output, output
    for i, handle in enumerate(held):
        edit = await handle.edit(timeout=1)
        assert page_heading(edit.body) == f"🔎 held {i}", edit.body
    for handle in slow:
        edit = await handle.edit(timeout=1)
        assert edit.body["embeds"][0]["description"] == RESTARTING, edit.body

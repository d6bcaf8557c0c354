"""Shutdown, SIGHUP and `--check` on the real process: `python -m bot` against the loopback Discord.

The stand-in runs in this test process; the bot is a child process pointed at it through the
PAPERBOT_API_BASE / PAPERBOT_GATEWAY_URL testing hook. Proves: SIGHUP reloads the corpus from
re-read settings while serving; SIGTERM closes the gateway, still delivers a reply that was in
flight, closes the database cleanly (WAL checkpointed) and exits 0 well within 10 s; the token
never reaches the process's output; `--check` exits 0 or names the problem with exit 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.app.client import INTERACTION_TASKS
from bot.config import PROJECT_ROOT
from bot.search.engine import SearchEngine
from bot.storage.store import Storage
from tests.app.helpers import TOKEN, answered, make_bot, make_settings, page_heading
from tests.fakediscord import FakeDiscord
from tests.procs import alive, children

ICML = PROJECT_ROOT / "data" / "icml2026.jsonl"
CALLBACK = "/interactions/{id}/{token}/callback"
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def write_config(
    root: Path, files: list[Path], *, index_dir: Path | None = None, extra: str = ""
) -> Path:
    """settings.toml for a bot in `root`; `index_dir` shares a saved index between bots,
    `extra` adds TOML tables."""
    config = root / "settings.toml"
    config.write_text(
        f"[corpus]\nfiles = {json.dumps([str(f) for f in files])}\n"
        f'index_dir = "{index_dir or root / "idx"}"\n'
        f'[storage]\ndatabase = "{root / "state.sqlite3"}"\n'
        f'backup_dir = "{root / "backups"}"\n{extra}',
        encoding="utf-8",
    )
    return config


def child_env(fake: FakeDiscord, config: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(PROJECT_ROOT),
        "PAPERBOT_CONFIG": str(config),
        "DISCORD_TOKEN": TOKEN,
        "DISCORD_OWNER_IDS": fake.owner.id,
        "DISCORD_GUILD_ID": "",
        "PAPERBOT_API_BASE": fake.url,
        "PAPERBOT_GATEWAY_URL": fake.gateway_url,
    }


async def start_bot(
    fake: FakeDiscord,
    config: Path,
    log_path: Path,
    *args: str,
    env: dict[str, str] | None = None,
) -> asyncio.subprocess.Process:
    """A real `python -m bot` against the loopback Discord, its output in `log_path`; `env`
    adds variables (SHARD_IDS, DATABASE_URL...)."""
    with log_path.open("wb") as log_file:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            *args,
            cwd=PROJECT_ROOT,
            env={**child_env(fake, config), **(env or {})},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log_file,
            stderr=log_file,
        )


def hook_env(root: Path, source: str) -> dict[str, str]:
    """Environment for a child that runs `source` first (as its sitecustomize): a slowed
    search, a shortened wait."""
    hook = root / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(source, encoding="utf-8")
    return {"PYTHONPATH": os.pathsep.join([str(hook), str(PROJECT_ROOT)])}


async def sigterm_within(
    proc: asyncio.subprocess.Process, seconds: float = 10
) -> tuple[int, float]:
    """SIGTERM, then the exit code and the seconds the exit took (TimeoutError past `seconds`:
    the issue's limit for a host's stop)."""
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    code = await asyncio.wait_for(proc.wait(), seconds)
    return code, time.monotonic() - started


def forked_by(pid: int) -> list[int]:
    """`children(pid)` from the process's own threads' lists (the build workers are forked
    by a build thread): a few small reads instead of every process's stat, cheap enough to
    poll every 5 ms. Falls back to `children` where the kernel has no such lists."""
    try:
        return [
            int(child)
            for task in Path(f"/proc/{pid}/task").iterdir()
            for child in (task / "children").read_text().split()
        ]
    except OSError:  # a thread or the process ended meanwhile, or no such lists here
        return children(pid)


async def reap(proc: asyncio.subprocess.Process) -> None:
    """Kill a bot a test did not stop (a failed assertion, a timeout): never leave it running."""
    if proc.returncode is None:
        proc.kill()
        await proc.wait()


@pytest_asyncio.fixture
async def running_bot(
    fake_discord: FakeDiscord,
    tmp_path: Path,
) -> AsyncIterator[tuple[asyncio.subprocess.Process, Path]]:
    config = write_config(tmp_path, [ICML])
    log_path = tmp_path / "bot.log"
    proc = await start_bot(fake_discord, config, log_path)
    try:
        await fake_discord.gateway.identifies.wait_for(timeout=30)
        yield proc, tmp_path
    finally:
        await reap(proc)
        assert TOKEN not in log_path.read_text(errors="replace")


async def corpus_size(fake: FakeDiscord) -> str:
    reply = await answered(await fake.slash("help"), type=4)
    field = next(f for f in reply.embed["fields"] if f["name"].startswith("Corpus: "))
    return field["name"]


async def test_sighup_reloads_and_sigterm_finishes_in_flight_reply(
    fake_discord: FakeDiscord, running_bot: tuple[asyncio.subprocess.Process, Path]
) -> None:
    proc, root = running_bot
    assert await corpus_size(fake_discord) == "Corpus: 19 papers"
    # Issue 12.4: once connected, the bot keeps a rolling backup (SQLite's backup API).
    deadline = time.monotonic() + 15
    while not list((root / "backups").glob("*.sqlite3")):
        assert time.monotonic() < deadline, "no backup of the database was made"
        await asyncio.sleep(0.1)
    backup = sqlite3.connect(next((root / "backups").glob("*.sqlite3")))
    try:
        assert backup.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        backup.close()

    extra = root / "extra.jsonl"
    extra.write_text(
        json.dumps(
            {
                "id": "x/1",
                "title": "An extra paper on sinkhorn",
                "abstract": "Extra.",
                "venue": "EXTRA 2025",
            }
        )
        + "\n"
    )
    write_config(root, [ICML, extra])
    proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 15
    while await corpus_size(fake_discord) != "Corpus: 20 papers":
        assert time.monotonic() < deadline, "SIGHUP did not reload the corpus"
        await asyncio.sleep(0.2)

    # SIGUSR1: every thread's stack in the log (for a bot that seems stuck); it keeps serving.
    proc.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + 15
    while "most recent call first" not in (root / "bot.log").read_text(errors="replace"):
        assert time.monotonic() < deadline, "SIGUSR1 printed no stacks"
        await asyncio.sleep(0.1)
    assert await corpus_size(fake_discord) == "Corpus: 20 papers"

    # An owner's /admin reload whose "thinking…" callback is slow: SIGTERM lands mid-reply.
    fake_discord.faults.slow("POST", CALLBACK, delay=1.5)
    before = len(fake_discord.calls("POST", CALLBACK))
    handle = await fake_discord.slash("admin reload", user=fake_discord.owner)
    while len(fake_discord.calls("POST", CALLBACK)) == before:
        await asyncio.sleep(0.02)
    code, took = await sigterm_within(proc)
    assert code == 0
    assert took < 10
    await handle.assert_answered(type=5)
    finished = await handle.edit(timeout=1)  # sent after SIGTERM, before HTTP closed
    assert "20 papers" in finished.body["embeds"][0]["description"]
    assert not fake_discord.gateway.connected

    db = root / "state.sqlite3"
    assert not Path(f"{db}-wal").exists()  # closed cleanly: WAL checkpointed and removed
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert (
            conn.execute("SELECT COUNT(*) FROM meta WHERE key LIKE 'commands_hash:%'").fetchone()[0]
            == 1
        )
    finally:
        conn.close()


async def test_close_waits_for_interactions_in_flight(
    fake_discord: FakeDiscord,
    connect_bot: Any,
    icml_engine: SearchEngine,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In process: pins discord.py's task names that close() waits for."""
    storage = await Storage.open(":memory:")
    bot = make_bot(make_settings(fake_discord), icml_engine, storage)
    bot.defer_after = 5.0
    await connect_bot(bot, TOKEN)
    original = icml_engine.search

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.4)
        return original(*args, **kwargs)

    monkeypatch.setattr(icml_engine, "search", slow)
    handle = await fake_discord.slash("search", {"query": "optimal transport"})
    while not any(t.get_name().startswith(INTERACTION_TASKS) for t in asyncio.all_tasks()):
        await asyncio.sleep(0.01)
    await bot.close()
    reply = await handle.assert_answered(type=4, timeout=0.1)
    assert page_heading(reply.data) == "🔎 optimal transport"
    await storage.close()


def run_check(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "bot", "--check", *args],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT), **(env or {})},
    )
    return done.returncode, done.stdout + done.stderr


def test_check_mode_passes_on_the_project_config(tmp_path: Path) -> None:
    config = write_config(tmp_path, [ICML])
    code, out = run_check(env={"PAPERBOT_CONFIG": str(config), "DISCORD_TOKEN": TOKEN})
    assert code == 0, out
    assert "corpus: 19 papers" in out
    assert "/admin" in out
    assert "check passed" in out
    assert "DISCORD_TOKEN: set" in out
    assert TOKEN not in out


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ('[corpus]\nfiles = ["nowhere.jsonl"]\n', "nowhere.jsonl: no such file"),
        ("[serach]\nk1 = 1\n", "FAIL settings: "),
        ('[storage]\ndatabase = "postgresql://x/y"\n', "FAIL storage: "),
    ],
)
def test_check_mode_names_what_is_wrong(tmp_path: Path, settings: str, expected: str) -> None:
    config = tmp_path / "settings.toml"
    config.write_text(
        settings + f'[corpus]\nindex_dir = "{tmp_path}"\n'
        if "[corpus]" not in settings
        else settings,
        encoding="utf-8",
    )
    code, out = run_check(env={"PAPERBOT_CONFIG": str(config)})
    assert code == 1, out
    assert expected in out, out


async def test_sigterm_with_slow_searches_in_flight_answers_every_user_within_10_s(
    fake_discord: FakeDiscord,
    connect_bot: Any,
    icml_engine: SearchEngine,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 12 item 14: five 15 s searches in flight; close() ends in well under 10 s and
    every user gets an answer: finished work its result, the rest "restarting"."""
    from bot.app import client as client_module
    from bot.app.respond import RESTARTING

    monkeypatch.setattr(client_module, "RESTART_NOTICE", 1.0)
    storage = await Storage.open(":memory:")
    bot = make_bot(make_settings(fake_discord), icml_engine, storage)
    bot.defer_after = 0.2
    bot.shutdown_grace = 1.0  # the production 6 s, shortened: the sequence is what is tested
    await connect_bot(bot, TOKEN)
    original = icml_engine.search

    def slow(query: str, *args: Any, **kwargs: Any) -> Any:
        if query.startswith("slow"):
            time.sleep(15)
        return original(query, *args, **kwargs)

    monkeypatch.setattr(icml_engine, "search", slow)
    handles = [await fake_discord.slash("search", {"query": f"slow {i}"}) for i in range(5)]
    quick = await fake_discord.slash("search", {"query": "optimal transport"})
    for handle in handles:
        await handle.assert_answered(type=5, timeout=3)  # deferred: "thinking…"
    await quick.assert_answered(type=4, timeout=3)
    started = time.monotonic()
    await bot.close()
    took = time.monotonic() - started
    print(f"close() with 5 slow searches in flight: {took:.2f} s")  # shown with -s
    assert took < 10, took  # the contract; the searches would take 15 s
    for handle in handles:
        edit = await handle.edit(timeout=1)
        assert edit.body["embeds"][0]["description"] == RESTARTING
    await storage.close()


async def test_sigterm_while_the_index_build_workers_run_exits_0_at_once(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    """Issue 12 item 14: SIGTERM while the forked workers tokenise a large corpus (before
    connecting) exits 0 within 10 s, leaves no worker behind and never says `RuntimeError:
    Session is closed`.

    The signal goes as soon as every worker is forked. With `multiprocessing.Pool` that hung
    the exit for good: the pool, still being set up in the build thread, was finalised after
    multiprocessing's exit hook had killed its workers, one of them holding the task queue's
    lock (bot/search/index/workers.py)."""
    from benchmarks.synth import Source, write_corpus
    from bot.papers.corpus import load_corpus
    from bot.search.index.build import _cpu_count
    from bot.search.index.streamed import PARALLEL_MIN_BYTES

    papers = 40_000
    workers = min(_cpu_count(), -(-papers // 1000))
    if workers < 2:
        pytest.skip("one core: the index is built without forked workers")
    source = Source.from_papers(load_corpus([ICML]).papers)
    corpus = write_corpus(source, papers, tmp_path / "big.jsonl")
    assert corpus.stat().st_size >= PARALLEL_MIN_BYTES  # the build is a parallel one
    config = write_config(tmp_path, [corpus])
    log_path = tmp_path / "bot.log"
    proc = await start_bot(fake_discord, config, log_path, "-v")
    forked: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while len(forked) < workers:
            assert proc.returncode is None, log_path.read_text(errors="replace")
            assert "search engine ready" not in log_path.read_text(errors="replace")
            assert time.monotonic() < deadline, "the build workers never started"
            forked = forked_by(proc.pid)
            await asyncio.sleep(0.005)
        code, took = await sigterm_within(proc)
    finally:
        stuck = children(proc.pid) if proc.returncode is None else []  # build workers
        await reap(proc)
        for pid in stuck:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    output = log_path.read_text(errors="replace")
    print(f"SIGTERM while {workers} build workers run: exit {code} after {took:.2f} s")  # -s
    assert code == 0, output
    assert took < 10
    assert "Traceback" not in output
    assert "Session is closed" not in output
    assert "search engine ready" not in output, "the build ended before the signal"
    assert not fake_discord.gateway.identifies.items, "it must not connect after SIGTERM"
    deadline = time.monotonic() + 5
    while left := [pid for pid in forked if alive(pid)]:
        assert time.monotonic() < deadline, f"build workers left running: {left}"
        await asyncio.sleep(0.05)


async def test_sigterm_while_shards_are_still_connecting_exits_0_within_10_s(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    """Issue 12 item 14, at start-up: four shards, one IDENTIFY per 5 s (max_concurrency 1), so
    shards 1-3 are still connecting when SIGTERM arrives after shard 0's IDENTIFY.

    discord.py's `AutoShardedBot.launch_shard` retries a failed connect every 5 s, for ever and
    even after `close()`: each retry failed with "Session is closed", the process never exited
    and was SIGKILLed by whoever stopped it (seen in the two-process daily test under load)."""
    config = write_config(tmp_path, [ICML])
    log_path = tmp_path / "bot.log"
    proc = await start_bot(fake_discord, config, log_path, env={"SHARD_COUNT": "4"})
    try:
        first = await fake_discord.gateway.identifies.wait_for(timeout=60)
        assert tuple(first["shard"]) == (0, 4)
        code, took = await sigterm_within(proc)
    finally:
        await reap(proc)
    output = log_path.read_text(errors="replace")
    assert code == 0, output
    assert took < 10
    assert "Session is closed" not in output
    assert "Traceback" not in output
    assert len(fake_discord.gateway.identifies.items) < 4, "every shard connected first"


SLOW_SEARCHES = 5
# Loaded by the child before the bot (sitecustomize): searches for "slow …" take 15 s.
SLOW_SEARCH = """
import time

from bot.search import engine

_search = engine.SearchEngine.search


def search(self, query, *args, **kwargs):
    if query.startswith("slow"):
        time.sleep(15)
    return _search(self, query, *args, **kwargs)


engine.SearchEngine.search = search
"""


async def test_sigterm_with_slow_searches_in_flight_exits_0_within_10_s(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    """Issue 12 item 14 on the real process, with the production grace: a 15 s search in
    flight held the exit for 15.8 s (its worker thread was joined when the interpreter
    exited), and of 5 only 2 were answered. Now every user is told the bot is restarting and
    the process exits 0 within 10 s."""
    from bot.app.respond import RESTARTING

    config = write_config(tmp_path, [ICML])
    log_path = tmp_path / "bot.log"
    proc = await start_bot(fake_discord, config, log_path, env=hook_env(tmp_path, SLOW_SEARCH))
    try:
        await fake_discord.gateway.identifies.wait_for(timeout=30)
        handles = [
            await fake_discord.slash("search", {"query": f"slow transport {i}"})
            for i in range(SLOW_SEARCHES)
        ]
        for handle in handles:
            await handle.assert_answered(type=5, timeout=10)  # deferred: "thinking…"
        code, took = await sigterm_within(proc)
    finally:
        await reap(proc)
    output = log_path.read_text(errors="replace")
    # shown with -s
    print(f"SIGTERM with {SLOW_SEARCHES} x 15 s searches in flight: exit {code} after {took:.2f} s")
    assert code == 0, output
    assert "Traceback" not in output
    for handle in handles:
        edit = await handle.edit(timeout=1)
        assert edit.body["embeds"][0]["description"] == RESTARTING

"""Live corpus reload: the new corpus is built aside, validated, then swapped in one step.

Proves: a good corpus (and re-read [search] settings) replaces the old; every broken corpus
(missing file, nothing usable, cut-short array, bad settings) is refused with its reason while
the old engine keeps serving; the old engine answers while the new one loads; two reloads do
not overlap; `/admin reload` is owner-only, hidden by default permissions and answers through
Discord; the console reloads too; daily pools follow the new corpus without repeats.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.app.reload import Reloader
from bot.config import Settings, load_settings
from bot.console.repl import Console
from bot.daily.scheduler import DailyScheduler
from bot.search.engine import SearchEngine
from bot.search.index.workers import WorkersStopped
from bot.storage.store import Storage
from tests.app.helpers import TOKEN, answered, make_bot
from tests.fakediscord import BotConnection, FakeDiscord

Connect = Callable[..., Awaitable[BotConnection]]


TOPICS = ["sinkhorn", "diffusion", "bandits", "graphs", "kernels", "agents", "proteins", "robots"]


def papers(prefix: str, n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"{prefix}/{i}",
            "title": f"{prefix} paper {i} on {TOPICS[i % len(TOPICS)]}",
            "abstract": f"We study transport number {i}.",
            "authors": ["A. Author"],
            "year": 2024,
            "venue": "TEST 2024",
        }
        for i in range(n)
    ]


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def write_config(root: Path, files: list[str], *, k1: float = 1.5, extra: str = "") -> Path:
    config = root / "config" / "settings.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f'[corpus]\nfiles = {json.dumps(files)}\nindex_dir = "idx"\n'
        f'[search]\nk1 = {k1}\n[storage]\ndatabase = ":memory:"\n{extra}',
        encoding="utf-8",
    )
    return config


@dataclass
class Holder:
    settings: Settings
    engine: SearchEngine


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Holder]:
    write_jsonl(tmp_path / "a.jsonl", papers("a", 5))
    config = write_config(tmp_path, ["a.jsonl"])
    settings = load_settings(config, env={}, dotenv=False)
    return tmp_path, Holder(settings, SearchEngine.load(settings))


async def test_good_corpus_is_swapped_in_with_new_settings(corpus: tuple[Path, Holder]) -> None:
    root, holder = corpus
    old = holder.engine
    write_jsonl(root / "b.jsonl", papers("b", 8))
    write_config(root, ["a.jsonl", "b.jsonl"], k1=1.2, extra="[discord]\nshard_count = 2\n")
    swapped: list[Any] = []
    reloader = Reloader(holder)
    reloader.on_swap.append(swapped.append)
    outcome = await reloader.reload("test")
    assert outcome.ok
    assert (outcome.previous, outcome.papers) == (5, 13)
    assert holder.engine is not old
    assert len(holder.engine.papers) == 13
    assert holder.settings.search.k1 == 1.2
    assert holder.engine.settings.k1 == 1.2
    assert holder.settings.discord.shard_count == 0  # needs a restart: not applied...
    assert any("[discord]" in note for note in outcome.notes)  # ...and the owner is told
    assert swapped == [outcome]
    assert "13 papers (was 5)" in outcome.summary()
    assert holder.engine.paper("b/7").title.startswith("b paper 7")


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        ("missing", "no such file"),
        ("garbage", "no usable paper"),
        ("truncated_array", "file ends before the closing ]"),
        ("bad_settings", "settings: "),
    ],
)
async def test_broken_corpus_is_rejected_and_old_engine_stays(
    corpus: tuple[Path, Holder], damage: str, reason: str
) -> None:
    root, holder = corpus
    old, old_settings = holder.engine, holder.settings
    if damage == "missing":
        write_config(root, ["a.jsonl", "gone.jsonl"])
    elif damage == "garbage":
        (root / "a.jsonl").write_bytes(b"\xff\xfe not json\n{truncated")
    elif damage == "truncated_array":
        text = json.dumps([{**p, "author": "A"} for p in papers("c", 4)], indent=1)
        (root / "test2024.json").write_text(text[: len(text) // 2], encoding="utf-8")
        write_config(root, ["a.jsonl", "test2024.json"])
    else:
        write_config(root, ["a.jsonl"], extra="[serach]\nk1 = 2\n")
    outcome = await Reloader(holder).reload("test")
    assert not outcome.ok
    assert any(reason in r for r in outcome.reasons), outcome.reasons
    assert holder.engine is old
    assert holder.settings is old_settings
    assert "still serving the previous corpus (5 papers)" in outcome.summary()
    assert holder.engine.search("sinkhorn").hits


async def test_old_engine_serves_while_the_new_one_loads(corpus: tuple[Path, Holder]) -> None:
    _root, holder = corpus
    old = holder.engine
    started, release = threading.Event(), threading.Event()

    def slow_load(settings: Settings) -> SearchEngine:
        started.set()
        assert release.wait(5)
        return SearchEngine.load(settings)

    reloader = Reloader(holder, load=slow_load)
    task = asyncio.ensure_future(reloader.reload("first"))
    assert await asyncio.to_thread(started.wait, 5)
    # Loading happens in a thread: the loop is free and the old engine answers.
    assert holder.engine is old
    assert holder.engine.search("sinkhorn").hits
    second = await reloader.reload("second")
    assert not second.ok
    assert "already running" in second.reasons[0]
    release.set()
    outcome = await task
    assert outcome.ok
    assert holder.engine is not old
    assert not reloader.running


@pytest.mark.parametrize(
    ("error", "reason", "warned"),
    [
        (RuntimeError("loader bug"), "unexpected error: RuntimeError", True),
        # SIGTERM kills a reload's build workers (bot.search.index.workers.stop_workers): the
        # process is stopping, which is no failed reload and needs no traceback.
        (WorkersStopped("build workers stopped"), "the bot is stopping", False),
    ],
)
async def test_a_load_that_raises_keeps_the_old_engine(
    corpus: tuple[Path, Holder],
    caplog: pytest.LogCaptureFixture,
    error: Exception,
    reason: str,
    warned: bool,
) -> None:
    _root, holder = corpus
    old = holder.engine

    def broken(settings: Settings) -> SearchEngine:
        raise error

    outcome = await Reloader(holder, load=broken).reload("test")
    assert not outcome.ok
    assert holder.engine is old
    assert outcome.reasons == (reason,)
    assert any(r.levelno >= logging.WARNING for r in caplog.records) == warned


def test_console_reload(corpus: tuple[Path, Holder]) -> None:
    root, holder = corpus
    out = io.StringIO()
    console = Console(holder.engine, out, settings=holder.settings)
    write_jsonl(root / "a.jsonl", papers("a", 7))
    console.handle("/reload")
    assert "7 papers (was 5)" in out.getvalue()
    assert len(console.engine.papers) == 7
    (root / "a.jsonl").write_text("", encoding="utf-8")
    console.handle("/reload")
    assert "Reload rejected" in out.getvalue()
    assert len(console.engine.papers) == 7
    bare = io.StringIO()
    Console(holder.engine, bare).handle("/reload")  # embedded without settings
    assert "not available" in bare.getvalue()


# -- through Discord ---------------------------------------------------------------------------


@pytest_asyncio.fixture
async def storage() -> AsyncIterator[Storage]:
    store = await Storage.open(":memory:")
    yield store
    await store.close()


async def test_admin_reload_is_owner_only_hidden_and_answers(
    fake_discord: FakeDiscord, connect_bot: Connect, corpus: tuple[Path, Holder], storage: Storage
) -> None:
    root, holder = corpus
    settings = replace(
        holder.settings,
        secrets=replace(
            holder.settings.secrets, discord_token=TOKEN, owner_ids=(int(fake_discord.owner.id),)
        ),
    )
    bot = make_bot(settings, holder.engine, storage)
    await connect_bot(bot, TOKEN)
    admin = fake_discord.commands()["admin"]
    assert str(admin["default_member_permissions"]) == "8"  # hidden from non-admins
    assert [o["name"] for o in admin["options"]] == ["reload", "refresh", "status"]

    # Server-side check: an admin of the server who is not an owner is refused.
    refused = await answered(
        await fake_discord.slash("admin reload", user=fake_discord.admin), type=4, ephemeral=True
    )
    assert "owner" in refused.embed["description"]
    assert bot.engine is holder.engine

    write_jsonl(root / "b.jsonl", papers("b", 3))
    write_config(root, ["a.jsonl", "b.jsonl"])
    handle = await fake_discord.slash("admin reload", user=fake_discord.owner)
    await answered(handle, type=5, ephemeral=True)
    done = await handle.edit(timeout=5)
    assert "8 papers (was 5)" in done.body["embeds"][0]["description"]
    assert len(bot.engine.papers) == 8
    help_reply = await answered(await fake_discord.slash("help"), type=4)
    assert "Corpus: 8 papers" in json.dumps(help_reply.embed)

    (root / "b.jsonl").unlink()
    handle = await fake_discord.slash("admin reload", user=fake_discord.owner)
    await answered(handle, type=5)
    rejected = (await handle.edit(timeout=5)).body["embeds"][0]["description"]
    assert "Reload rejected" in rejected
    assert "b.jsonl: no such file" in rejected
    assert len(bot.engine.papers) == 8


# -- daily pools follow the new corpus ----------------------------------------------------------


class StepClock:
    def __init__(self) -> None:
        self.at = datetime(2026, 3, 1, 12, tzinfo=UTC)

    def now(self) -> datetime:
        return self.at

    async def sleep_until(self, when: datetime) -> None:
        self.at = max(self.at, when)


class NoPoster:
    async def post(self, *args: Any) -> int:
        raise AssertionError("not posting in this test")

    async def find_existing(
        self, channel_id: int, marker: str, since: datetime | None = None
    ) -> int | None:
        return None


async def test_daily_pool_follows_reload_without_repeats(
    corpus: tuple[Path, Holder], storage: Storage
) -> None:
    """The daily cog reads `bot.engine` at call time; a swap is all the pool needs."""
    root, holder = corpus
    clock = StepClock()
    scheduler = DailyScheduler(
        storage, NoPoster(), lambda: [p.id for p in holder.engine.papers], clock=clock
    )
    shown = []
    for _ in range(3):
        shown.append(await scheduler.today(42))
        clock.at += timedelta(days=1)
    write_jsonl(root / "a.jsonl", [p for p in papers("a", 5) if p["id"] != shown[0]])
    write_jsonl(root / "b.jsonl", papers("b", 4))
    write_config(root, ["a.jsonl", "b.jsonl"])
    assert (await Reloader(holder).reload("test")).ok
    current = {p.id for p in holder.engine.papers}
    for _ in range(len(current) - 2):  # the rest of this pass: 2 of the 3 shown remain
        pid = await scheduler.today(42)
        assert pid in current, (pid, shown)
        assert pid not in shown, (pid, shown)
        shown.append(pid)
        clock.at += timedelta(days=1)
    assert set(shown[1:]) | {shown[0]} >= current


# -- issue 12: a damaged or shrunken corpus is refused unless forced (item 5) -----------------


@pytest.mark.parametrize("damage", ["cut_at_a_third", "garbled_lines", "one_garbled_line"])
async def test_reload_of_a_damaged_corpus_is_rejected_unless_forced(
    corpus: tuple[Path, Holder], damage: str
) -> None:
    root, holder = corpus
    good = write_jsonl(root / "big.jsonl", papers("big", 19))
    write_config(root, ["big.jsonl"])
    assert (await Reloader(holder).reload("setup")).papers == 19
    body = good.read_bytes()
    if damage == "cut_at_a_third":
        good.write_bytes(body[: len(body) // 3])
    elif damage == "garbled_lines":
        lines = body.splitlines(keepends=True)
        good.write_bytes(lines[0] + b"".join(b"{garbled" + line[9:] for line in lines[1:]))
    else:  # 18 of 19 papers is within the allowed loss: refused for the malformed line alone
        lines = body.splitlines(keepends=True)
        lines[5] = b"{garbled" + lines[5][9:]
        good.write_bytes(b"".join(lines))
    served = holder.engine
    outcome = await Reloader(holder).reload("test")
    assert not outcome.ok
    text = outcome.summary()
    assert "malformed or cut line(s) in 1 file(s)" in text
    assert ("fewer than the 19 served" in text) == (damage != "one_garbled_line")
    assert "force:True" in text
    assert holder.engine is served

    forced = await Reloader(holder).reload("test", force=True)
    assert forced.ok
    assert forced.papers < 19
    assert "Accepted because forced" in forced.summary()
    assert holder.engine is not served


async def test_shrinking_within_the_allowed_share_is_accepted(corpus: tuple[Path, Holder]) -> None:
    root, holder = corpus
    write_jsonl(root / "big.jsonl", papers("big", 20))
    write_config(root, ["big.jsonl"])
    assert (await Reloader(holder).reload("setup")).papers == 20
    write_jsonl(root / "big.jsonl", papers("big", 18))  # 10 % fewer: an edit, not damage
    assert (await Reloader(holder).reload("test")).ok
    write_jsonl(root / "big.jsonl", papers("big", 10))
    write_config(root, ["big.jsonl"], extra="")
    assert not (await Reloader(holder).reload("test")).ok
    # The SIGHUP way to force: the setting, re-read with the corpus.
    config = write_config(root, ["big.jsonl"])
    config.write_text(
        config.read_text(encoding="utf-8").replace("[search]", "reload_force = true\n[search]"),
        encoding="utf-8",
    )
    outcome = await Reloader(holder).reload("SIGHUP")
    assert outcome.ok
    assert outcome.papers == 10


# -- issue 12: SIGHUP during a reload is not lost (item 7) ---------------------------------------


async def test_requests_during_a_reload_coalesce_into_one_more(
    corpus: tuple[Path, Holder], caplog: pytest.LogCaptureFixture
) -> None:
    root, holder = corpus
    started, release = threading.Event(), threading.Event()
    loads: list[int] = []

    def slow_load(settings: Settings) -> SearchEngine:
        loads.append(len(settings.corpus.files))
        if len(loads) == 1:
            started.set()
            assert release.wait(5)
        return SearchEngine.load(settings)

    caplog.set_level("INFO")
    reloader = Reloader(holder, load=slow_load)
    first = reloader.request("SIGHUP")
    assert first is not None
    assert await asyncio.to_thread(started.wait, 5)
    # The corpus changes on disk during the reload; two more signals arrive.
    write_jsonl(root / "b.jsonl", papers("b", 3))
    write_config(root, ["a.jsonl", "b.jsonl"])
    assert reloader.request("SIGHUP") is None
    assert reloader.request("SIGHUP") is None
    assert "one more will follow" in caplog.text
    release.set()
    await first
    for _ in range(100):
        if len(loads) == 2 and not reloader.running and not reloader._tasks:
            break
        await asyncio.sleep(0.05)
    assert loads == [1, 2]  # exactly one more reload, and it saw the new files
    assert len(holder.engine.papers) == 8
    assert "asked for during the previous one" in caplog.text

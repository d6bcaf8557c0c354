"""A bot configured with a source refreshes by itself, swaps the new corpus in, shows what is new
(/new, paged like /search), reports each source in /admin status, and keeps the old corpus
when a fetch fails; `pool:new` draws the paper of the day from what arrived since the last post.

Everything runs through the real discord.py client against the loopback Discord, and the real
fetch client against the loopback OpenReview (tests/fakesources).
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.config import load_settings
from bot.daily.tables import DailyTables
from bot.search.engine import SearchEngine
from bot.search.recent import stamp
from bot.storage.store import Storage
from tests.app.exts.daily.support import DUE, START, DailyEnv, SteppedClock, until
from tests.app.helpers import (
    TOKEN,
    answered,
    make_bot,
    page_footer,
    page_heading,
    page_hits,
    page_texts,
)
from tests.fakediscord import FakeDiscord
from tests.fakesources import FakeOpenReview, Fault, note

VENUE = "ICML.cc/2026/Conference"


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def seed_records() -> list[dict]:
    return [
        {
            "id": f"seed/{i}",
            "title": f"Seed paper {i} on kernels",
            "abstract": f"A static paper number {i}.",
            "venue": "ICML 2026",
        }
        for i in range(3)
    ]


@pytest.fixture
async def openreview():
    server = FakeOpenReview(
        [note(f"f{i}", title=f"Fetched paper {i} about agents") for i in range(7)]
        + [note("x", "ICML.cc/2026/Conference/Rejected_Submission")]
    )
    await server.start()
    yield server
    await server.stop()


async def test_the_bot_refreshes_by_itself_and_shows_what_is_new(
    fake_discord: FakeDiscord, connect_bot, openreview: FakeOpenReview, tmp_path: Path, caplog
) -> None:
    write_jsonl(tmp_path / "seed.jsonl", seed_records())
    (tmp_path / "icml.jsonl").write_text("", encoding="utf-8")  # fetched before, empty then
    config = tmp_path / "config" / "settings.toml"
    config.parent.mkdir()
    config.write_text(
        '[corpus]\nfiles = ["seed.jsonl"]\nindex_dir = "idx"\n'
        '[storage]\ndatabase = ":memory:"\n'
        '[sources]\nrefresh_at = ["06:00"]\nmax_retries = 1\nretry_base_seconds = 0.01\n'
        f'[[sources.fetch]]\nkind = "openreview"\nvenue = "{VENUE}"\nout = "icml.jsonl"\n',
        encoding="utf-8",
    )
    settings = load_settings(config, env={"PAPERBOT_OPENREVIEW_URL": openreview.url})
    settings = replace(
        settings,
        secrets=replace(
            settings.secrets, discord_token=TOKEN, owner_ids=(int(fake_discord.owner.id),)
        ),
    )
    storage = await Storage.open(":memory:")
    bot = make_bot(settings, SearchEngine.load(settings), storage)
    clock = SteppedClock(datetime(2026, 12, 1, 5, 0, tzinfo=UTC))
    bot.refresher.clock = clock
    added: list[tuple[tuple[str, ...], str]] = []

    async def on_papers_added(paper_ids: tuple[str, ...], source: str) -> None:
        added.append((paper_ids, source))

    bot.add_listener(on_papers_added)
    await connect_bot(bot, TOKEN)
    try:
        assert "new" in fake_discord.commands()
        empty = await answered(await fake_discord.slash("new"), type=4, ephemeral=True)
        assert page_heading(empty.data) == "🆕 New papers: added in the last 7 days"
        assert "No paper was added in the last 7 days" in page_texts(empty.data)[0]

        # Nothing happens before 06:00 UTC; at 06:00 the refresh fetches and reloads by itself.
        await clock.settled()
        assert bot.refresher.next_at == datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
        assert not openreview.requests
        clock.advance_to(datetime(2026, 12, 1, 6, 0, tzinfo=UTC))

        async def swapped() -> bool:
            return len(bot.engine.papers) == 10

        await until(swapped, what="the refreshed corpus to be served")
        assert bot.settings.corpus.files[-1] == tmp_path / "icml.jsonl"
        await until(lambda: _true(added), what="on_papers_added")
        assert added[0][0] == tuple(f"openreview:f{i}" for i in range(7))
        assert added[0][1] == "refresh (schedule)"
        await clock.settled()
        assert bot.refresher.next_at == datetime(2026, 12, 2, 6, 0, tzinfo=UTC)

        reply = await answered(await fake_discord.slash("new"), type=4, ephemeral=True)
        assert page_hits(reply.data).startswith("**1. ")
        assert "Fetched paper" in page_hits(reply.data)
        assert "Seed paper" not in page_hits(reply.data)  # static papers are never new
        assert reply.custom_ids[:2] == ["pb:n:0:5::7", "pb:n:2:5::7"]
        assert "page 1/2 · 7 matches" in page_footer(reply.data)
        page2 = await answered(await fake_discord.click(reply, "pb:n:2:5::7"), type=7)
        assert page_hits(page2.data).startswith("**6. ")
        venue = await answered(
            await fake_discord.slash("new", {"days": 30, "venue": "ICML 2026", "limit": 10}),
            type=4,
        )
        assert page_hits(venue.data).count("Fetched paper") == 7
        unknown = await answered(await fake_discord.slash("new", {"venue": "neurips"}), type=4)
        assert "Unknown venue" in unknown.embed["description"]

        status = await answered(
            await fake_discord.slash("admin status", user=fake_discord.owner), type=4
        )
        text = json.dumps(status.embed, ensure_ascii=False)
        assert "10 papers" in text
        assert f"✅ **openreview {VENUE}**" in text
        assert "7 new" in text
        refused = await answered(await fake_discord.slash("admin status", user=fake_discord.alice))
        assert "owner" in refused.embed["description"]

        # /admin refresh answers at once and fetches now: nothing changed, so no reload.
        handle = await fake_discord.slash("admin refresh", user=fake_discord.owner)
        await answered(handle, type=4, ephemeral=True)
        done = (await handle.followup(timeout=10)).body["embeds"][0]
        assert done["title"] == "Sources refreshed"
        assert "the corpus stays" in done["description"]
        assert "7 unchanged" in json.dumps(done, ensure_ascii=False)

        # A failing source keeps the old corpus; the owner sees why, the log says so.
        openreview.fail(*[Fault(503)] * 4)
        with caplog.at_level(logging.WARNING, logger="bot.app.refresh"):
            assert await bot.refresher.refresh("test") is None
        assert len(bot.engine.papers) == 10
        assert any("keeping the current corpus" in r.getMessage() for r in caplog.records)
        status = await answered(
            await fake_discord.slash("admin status", user=fake_discord.owner), type=4
        )
        assert "❌" in json.dumps(status.embed, ensure_ascii=False)
        assert "HTTP 503" in json.dumps(status.embed)
    finally:
        await storage.close()


async def _true(items: list) -> bool:
    return bool(items)


async def test_daily_pool_new_through_discord(fake_discord: FakeDiscord, connect_bot, tmp_path):
    """/daily set pool:new; the first post is a paper added after the schedule was set."""
    fresh = stamp(START + timedelta(hours=3))
    records = seed_records() + [
        {
            "id": f"arxiv:2503.0000{i}",
            "title": f"Fresh paper {i}",
            "abstract": "Just arrived.",
            "venue": "arXiv",
            "added": fresh,
        }
        for i in range(2)
    ]
    write_jsonl(tmp_path / "c.jsonl", records)
    from bot.papers.corpus import load_corpus

    engine = SearchEngine(load_corpus([tmp_path / "c.jsonl"]).papers)
    env = DailyEnv(
        fake_discord, engine, SteppedClock(START), str(tmp_path / "bot.sqlite3"), connect_bot
    )
    try:
        await env.start()
        options = {"channel": env.papers, "time": "09:00", "timezone": "Europe/Paris"}
        reply = await env.slash("daily set", {**options, "pool": "new"}, ephemeral=True)
        assert "new papers first" in reply.embed["description"]
        status = await env.slash("daily status", ephemeral=True)
        assert "new papers first" in json.dumps(status.embed)
        env.clock.advance_to(DUE)
        await env.wait_state(fake_discord.guild, "sent")
        pick = await DailyTables(env.storage).get_pick(int(fake_discord.guild.id), "2025-03-01")
        assert pick.paper_id.startswith("arxiv:")
        bad = await env.slash("daily set", {**options, "pool": "fresh"}, ephemeral=True)
        assert bad.embed["description"]
    finally:
        await env.stop()


async def test_a_source_never_fetched_is_fetched_at_start(openreview, tmp_path):
    """Without waiting for the first refresh time; then the timer takes over."""
    from bot.app.refresh import Refresher
    from bot.app.reload import Reloader

    write_jsonl(tmp_path / "seed.jsonl", seed_records())
    config = tmp_path / "settings.toml"
    config.write_text(
        '[corpus]\nfiles = ["seed.jsonl"]\n[sources]\nrefresh_at = ["06:00"]\n'
        f'[[sources.fetch]]\nkind = "openreview"\nvenue = "{VENUE}"\nout = "icml.jsonl"\n',
        encoding="utf-8",
    )
    settings = load_settings(config, env={"PAPERBOT_OPENREVIEW_URL": openreview.url})

    class Host:
        def __init__(self) -> None:
            self.settings = settings
            self.engine = SearchEngine.load(settings)
            self.reloader = Reloader(self)

    host = Host()
    clock = SteppedClock(datetime(2026, 12, 1, 5, 0, tzinfo=UTC))
    refresher = Refresher(host, clock=clock)  # type: ignore[arg-type]
    refresher.start()
    try:
        await clock.settled()
        assert len(host.engine.papers) == 10
        assert refresher.last_reload is not None
        assert refresher.last_reload.source == "refresh (start)"
        assert refresher.next_at == datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
    finally:
        await refresher.stop()

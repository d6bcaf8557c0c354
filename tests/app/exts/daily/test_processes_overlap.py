"""Issue 26: two bot processes on overlapping shard ranges, one killed (SIGKILL) mid-post.

Two real `python -m bot` processes run shards 0-2 and 1-3 of four on one PostgreSQL, so the
servers of shards 1 and 2 are seen by both. The first shared server's send is held at the
loopback Discord (then refused with a 503), and whichever process claimed it is killed while
its send is on the way: its claim stays in the database, unsent.

What should happen: the survivor waits for that claim's lease to run out, then posts it; every
server gets exactly one post (no double post, no skipped server), recorded as sent with that
message's id, and no process posts for a server outside its range. The servers only the killed
process runs get lower ids, so it had posted them before the shared one: the survivor alone
finishes the day.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.config import load_settings
from bot.daily.records import Pick
from bot.daily.tables import DailyTables
from bot.search.engine import SearchEngine
from bot.storage.store import Storage
from tests.app.exts.daily.test_processes import (
    SHARDS,
    Fleet,
    Process,
    check_sends,
    due_now,
    guild_of,
    owns,
    until,
    write_config,
)
from tests.fakediscord import FakeDiscord
from tests.fakediscord.faults import Fault
from tests.pg import PgServer

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

LEASE = 2.0  # claim_seconds: how long the killed process's claim keeps the survivor away
HELD = 6.0  # the held send's time at the loopback Discord (it ends in a 503): well above the kill,
# which must land while the send is held even on a loaded machine (3 s was not always enough)


async def test_overlapping_ranges_survivor_posts_what_the_killed_one_claimed(
    fake_discord: FakeDiscord, pg_server: PgServer, tmp_path: Path
) -> None:
    fake = fake_discord
    fake.gateway.max_concurrency = SHARDS
    only = [fake.world.add_guild(f"only {s}", shard=(s, SHARDS)) for s in (0, 3)]
    await asyncio.sleep(
        0.005
    )  # snowflakes are time-ordered: the shared servers sort (and post) after
    shared = [fake.world.add_guild(f"shared {s}", shard=(s, SHARDS)) for s in (1, 2, 1, 2)]
    guilds = only + shared
    assert max(int(g.id) for g in only) < min(int(g.id) for g in shared)
    channels = {g.id: g.add_channel("papers") for g in guilds}
    target = min(shared, key=lambda g: int(g.id))  # both processes reach it first among shared
    held = f"/channels/{channels[target.id].id}/messages"
    fake.faults.add(Fault("POST", held, 503, times=1, delay=HELD))

    url = pg_server.fresh_database_url()
    at, zone, day = due_now()
    storage = await Storage.open(url)
    tables = DailyTables(storage)
    try:
        for guild in guilds:
            channel = int(channels[guild.id].id)
            await tables.save_schedule(
                int(guild.id), channel, at, zone, None, day, datetime.now(UTC)
            )
        config = write_config(tmp_path, url, claim_seconds=LEASE)
        await asyncio.to_thread(SearchEngine.load, load_settings(config, env={}))
        fleet = Fleet(fake, config, url)
        processes = [Process("p0", "0-2", tmp_path), Process("p1", "1-3", tmp_path)]
        try:
            await asyncio.gather(*(fleet.start(p) for p in processes))

            async def claimed() -> Pick | None:
                pick = await tables.get_pick(int(target.id), day)
                return pick if pick is not None and pick.state == "sending" else None

            await until(claimed, "a claim on the shared server's post", fleet)
            claim = await claimed()
            assert claim is not None
            assert claim.claim_owner is not None
            assert claim.claim_until is not None
            assert claim.attempts == 1, "seen only after the lease ran out: the machine stalled"
            holder_pid = int(claim.claim_owner.split(":")[1])
            killed = next(p for p in processes if p.proc and p.proc.pid == holder_pid)
            survivor = next(p for p in processes if p is not killed)
            await fleet.kill(killed)

            async def all_sent() -> bool:
                picks = [await tables.get_pick(int(g.id), day) for g in guilds]
                return all(p is not None and p.state == "sent" for p in picks)

            await until(all_sent, "every pick recorded as sent, by the survivor alone", fleet)
        finally:
            codes = await fleet.stop()
        assert sorted(codes, key=lambda c: c or 0) == [-9, 0], fleet.logs()  # SIGKILL, SIGTERM

        for guild in guilds:
            messages = fake.channel_messages(channels[guild.id])
            assert len(messages) == 1, f"{guild.name}: {len(messages)} posts"
            pick = await tables.get_pick(int(guild.id), day)
            assert pick is not None
            assert (pick.state, pick.message_id) == ("sent", int(messages[0]["id"]))
        # The held post: the killed process's claim stood until its lease ran out, then the
        # survivor (which looked for an earlier attempt's message first) sent it.
        done = await tables.get_pick(int(target.id), day)
        assert done is not None
        assert done.sent_at is not None
        assert done.sent_at >= claim.claim_until
        assert done.attempts == 2
        assert int(target.id) in survivor.sent()
        assert int(target.id) not in killed.sent()
        check_sends(guilds, processes)
        for process in processes:
            wrong = [g for g in process.sent() if not owns(process, guild_of(guilds, g))]
            assert wrong == [], f"{process.name} posted for servers outside its range"
    finally:
        await storage.close()

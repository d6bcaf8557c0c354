"""Backups, restores, checks and copies, on both backends; a damaged SQLite file is refused."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.config import StorageSettings
from bot.daily.tables import DailyTables
from bot.follows import Feeds, FeedSettings
from bot.follows.store import Follows
from bot.foryou import DOWN, UP, Ratings
from bot.library.store import Library
from bot.links import LinkReplies
from bot.sources.election import Election, Lease
from bot.storage import admin
from bot.storage.schema import StorageError, schema_version
from bot.storage.sqlite import DatabaseDamaged
from bot.storage.store import Storage
from tests.storage import history

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


ROWS = {
    "meta": 1,
    "schedules": 3,
    "pools": 3,
    "picks": 6,
    "saved": 2,
    "guild_prefs": 1,
    "reactions": 1,
    "follows": 1,
    "deliveries": 1,
    "corpus_papers": 2,
    "follow_notices": 1,
    "ratings": 2,
    "feed_settings": 1,
    "shown": 1,
    "link_replies": 1,
    "source_leases": 1,
    "source_papers": 1,
}


async def fill(url: str, guilds: int = 3) -> None:
    """Schedules, pools, picks, libraries, follows and metadata: a deployment worth keeping."""
    store = await Storage.open(url)
    try:
        await store.set_meta("commands_hash:1:global", "abc")
        library, follows = Library(store), Follows(store)
        user = (1 << 45) + 7
        await library.save(user, "p1", NOW, guild_id=(1 << 40) + 1)
        await library.save(user, "p2", NOW)
        await library.set_default_venue((1 << 40) + 1, "ICML 2026", NOW)
        await LinkReplies(store).set((1 << 40) + 1, True, NOW)
        await library.add_reaction((1 << 40) + 1, (1 << 50) + 1, "p1", user, "👍", NOW)
        follow = await follows.add(user, "optimal transport", now=NOW)
        await follows.record_corpus(["p1", "p2"], NOW)
        await follows.claim(follow, ["p2"], NOW)
        await Ratings(store).rate(user, "p1", UP, NOW)
        await Ratings(store).rate(user, "p3", DOWN, NOW)
        await Ratings(store).mark_shown(user, ["p2"], "follow", NOW)
        await Feeds(store).put(FeedSettings(follow.follow_id, user, frequency="weekly"), NOW)
        election = Election(store, "host:1:ab", 60)  # a fleet's fetched paper
        lease = await election.claim("openreview ICML.cc/2026/Conference", "06:00")
        assert isinstance(lease, Lease)
        await election.publish(lease, [{"id": "openreview:f1", "title": "Fetched"}])
        for g in range(1, guilds + 1):
            guild = (1 << 40) + g  # ids past 32 bits, as Discord's are
            await DailyTables(store).save_schedule(
                guild, guild + 1, "09:00", "UTC", "rl", "2025-03-01", NOW
            )
            await DailyTables(store).pool(guild, new_seed=g)
            await DailyTables(store).create_pick(guild, "2025-03-01", f"p{g}", 0, f"m{g}", NOW)
            await DailyTables(store).mark_sending(guild, "2025-03-01", guild + 1, NOW)
            await DailyTables(store).mark_sent(guild, "2025-03-01", (1 << 50) + g, NOW)
            await DailyTables(store).create_pick(guild, "2025-03-02", f"q{g}", 0, f"n{g}", NOW)
    finally:
        await store.close()


async def snapshot(url: str) -> dict:
    store = await Storage.open(url)
    try:
        return {
            "meta": await store.get_meta("commands_hash:1:global"),
            "schedules": [await DailyTables(store).get_schedule((1 << 40) + g) for g in (1, 2, 3)],
            "picks": [await history.picks(store, (1 << 40) + g) for g in (1, 2, 3)],
            "pools": [await DailyTables(store).pool((1 << 40) + g, new_seed=99) for g in (1, 2, 3)],
            "saved": await Library(store).all((1 << 45) + 7),
            "venue": await Library(store).default_venue((1 << 40) + 1),
            "follows": await Follows(store).personal((1 << 45) + 7),
            "delivered": await Follows(store).delivered(f"dm:{(1 << 45) + 7}"),
            "ratings": await Ratings(store).of((1 << 45) + 7),
            "feeds": [
                await Feeds(store).get(f.follow_id, f.user_id)
                for f in await Follows(store).personal((1 << 45) + 7)
            ],
        }
    finally:
        await store.close()


def truncate(path: Path, keep: float = 0.4) -> None:
    size = path.stat().st_size
    with path.open("r+b") as f:
        f.truncate(int(size * keep))


async def big_sqlite(path: Path) -> str:
    """A SQLite file of several pages, checkpointed (its rows live in the main file)."""
    url = str(path)
    await fill(url)
    store = await Storage.open(url)
    for i in range(300):
        await store.set_meta(f"k{i}", "x" * 200)
    await store.close()  # closing the last connection checkpoints the WAL
    return url


async def test_truncated_sqlite_file_is_refused_with_the_way_out(tmp_path):
    url = await big_sqlite(tmp_path / "bot.sqlite3")
    truncate(Path(url))
    with pytest.raises(DatabaseDamaged) as info:
        await Storage.open(url)
    message = str(info.value)
    assert "damaged" in message
    assert "python -m bot db restore --latest" in message
    with pytest.raises(StorageError):
        await admin.check(url)


async def test_backup_then_restore_after_damage_loses_nothing(tmp_path):
    url = await big_sqlite(tmp_path / "bot.sqlite3")
    before = await snapshot(url)
    store = await Storage.open(url)
    backup_dir = tmp_path / "backups"
    path = await admin.backup(store, backup_dir, keep=3, now=NOW)
    await store.close()
    assert path.suffix == ".sqlite3"
    truncate(Path(url))
    restored = await admin.restore(url, admin.backups(backup_dir)[-1], NOW)
    assert restored.rows["picks"] == 6
    assert restored.skipped == []
    assert await snapshot(url) == before
    assert list(tmp_path.glob("bot.sqlite3.before-restore-*"))  # the damaged file is kept aside


async def test_backups_rotate_and_are_due_by_age(tmp_path, database_url):
    await fill(database_url)
    settings = StorageSettings(backup_dir=tmp_path / "b", backup_hours=24, backup_keep=3)
    assert admin.backup_due(settings, NOW)
    store = await Storage.open(database_url)
    try:
        for hour in range(5):
            await admin.backup(store, settings.backup_dir, 3, NOW + timedelta(hours=hour))
    finally:
        await store.close()
    kept = admin.backups(settings.backup_dir)
    assert [p.name[9:22] for p in kept] == ["20250301T1400", "20250301T1500", "20250301T1600"]
    assert not admin.backup_due(settings, datetime.now(UTC))
    old = datetime.now(UTC).timestamp() - 25 * 3600
    os.utime(kept[-1], (old, old))
    assert admin.backup_due(settings, datetime.now(UTC))


async def test_restore_from_a_backup_on_either_backend(tmp_path, database_url):
    await fill(database_url)
    before = await snapshot(database_url)
    store = await Storage.open(database_url)
    path = await admin.backup(store, tmp_path / "b", 2, NOW)
    await DailyTables(store).save_schedule(
        (1 << 40) + 1, 5, "10:00", "UTC", None, "2025-03-05", NOW
    )
    await store.close()
    assert await snapshot(database_url) != before
    await admin.restore(database_url, path, NOW)
    assert await snapshot(database_url) == before


async def test_copy_sqlite_to_postgresql_keeps_everything(tmp_path, pg_server):
    source = str(tmp_path / "old.sqlite3")
    await fill(source)
    target = pg_server.fresh_database_url()
    copied = await admin.copy(f"sqlite:///{source}", target)
    assert copied.rows == ROWS
    assert copied.skipped == []
    assert await snapshot(target) == await snapshot(source)
    with pytest.raises(StorageError, match="not empty"):
        await admin.copy(source, target)
    assert (await admin.copy(source, target, replace=True)).rows["picks"] == 6
    report = await admin.check(target)
    assert report.version == schema_version()
    assert report.rows["picks"] == 6


async def test_check_reports_a_missing_file_and_an_unreachable_server(tmp_path):
    report = await admin.check(str(tmp_path / "none.sqlite3"))
    assert report.version == 0
    assert "creates it" in report.note
    assert not (tmp_path / "none.sqlite3").exists()
    with pytest.raises(StorageError, match="cannot use PostgreSQL"):
        await admin.check(f"postgresql://nobody@/db?host={tmp_path}")

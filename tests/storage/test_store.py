"""The storage API, run against both backends (a SQLite file and a real PostgreSQL server).

`database_url` (tests/conftest.py) parametrizes every test that takes `storage` over both.
"""

import sqlite3
import threading
from datetime import UTC, datetime, timedelta

import pytest

from bot.config import ConfigError
from bot.daily.tables import DailyTables
from bot.storage.schema import StorageError, schema_version
from bot.storage.store import Storage
from bot.storage.urls import parse_database_url, sqlite_path
from tests.storage import history

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
async def storage(database_url):
    store = await Storage.open(database_url)
    yield store
    await store.close()


async def test_file_is_in_wal_mode_and_pick_survives_reopen(tmp_path):
    path = tmp_path / "state" / "bot.sqlite3"
    store = await Storage.open(f"sqlite:///{path}")
    assert await store.journal_mode() == "wal"
    await DailyTables(store).pool(7, new_seed=123)
    await DailyTables(store).create_pick(7, "2025-03-01", "paper-1", 0, "m1", NOW)
    await DailyTables(store).mark_sending(7, "2025-03-01", 55, NOW)
    await store.close()

    # An independent connection sees WAL on the file itself, and the committed row.
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()
    again = await Storage.open(str(path))
    pick = await DailyTables(again).get_pick(7, "2025-03-01")
    assert pick is not None
    assert pick.paper_id == "paper-1"
    assert pick.state == "sending"
    assert pick.attempts == 1
    assert pick.channel_id == 55
    assert (await DailyTables(again).pool(7, new_seed=999)).seed == 123
    await again.close()


async def test_schema_version_and_reopen_does_not_remigrate(database_url):
    store = await Storage.open(database_url)
    assert await store.schema_version() == schema_version()
    await store.set_meta("sync-hash", "abc")
    await store.close()
    store = await Storage.open(database_url)
    assert await store.schema_version() == schema_version()
    assert await store.get_meta("sync-hash") == "abc"
    rows = await store.run(lambda c: c.execute("SELECT COUNT(*) FROM schema_version").fetchone())
    assert rows[0] == schema_version()
    await store.close()


async def test_newer_schema_is_refused(database_url):
    store = await Storage.open(database_url)
    await store.run(
        lambda c: c.execute(
            "INSERT INTO schema_version (version) VALUES (?)", (schema_version() + 1,)
        )
    )
    await store.close()
    with pytest.raises(StorageError, match="newer"):
        await Storage.open(database_url)


def test_database_urls(tmp_path):
    assert sqlite_path(":memory:") == ":memory:"
    assert sqlite_path("sqlite:///rel/x.db") == "rel/x.db"
    assert sqlite_path("sqlite:////abs/x.db") == "/abs/x.db"
    assert sqlite_path(str(tmp_path / "a.db")) == str(tmp_path / "a.db")
    pg = parse_database_url("postgres://bot:s3cret@db.example:5432/paper")
    assert (pg.dialect, pg.target) == (
        "postgresql",
        "postgresql://bot:s3cret@db.example:5432/paper",
    )
    assert "s3cret" not in pg.display
    assert parse_database_url("postgresql+psycopg://h/db").target == "postgresql://h/db"
    with pytest.raises(ConfigError):
        sqlite_path("postgresql://user@host/db")
    with pytest.raises(ConfigError) as info:
        parse_database_url("mysql://root:pw@host/db")
    assert "pw" not in str(info.value)


async def test_memory_database_works():
    store = await Storage.open(":memory:")
    assert await store.get_meta("missing") is None
    await store.set_meta("k", "v1")
    await store.set_meta("k", "v2")
    assert await store.get_meta("k") == "v2"
    await store.close()
    with pytest.raises(StorageError):
        await store.get_meta("k")


async def test_calls_run_off_the_event_loop_thread(storage):
    seen: list[int] = []
    await storage.run(lambda c: seen.append(threading.get_ident()))
    assert seen
    assert seen[0] != threading.get_ident()


async def test_failed_transaction_rolls_back(storage):
    def boom(conn):
        conn.execute("INSERT INTO meta (key, value) VALUES ('a', 'b')")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        await storage.run(boom)
    assert await storage.get_meta("a") is None


async def test_schedule_lifecycle(storage):
    assert await DailyTables(storage).get_schedule(1) is None
    saved = await DailyTables(storage).save_schedule(
        1, 10, "09:00", "Europe/Paris", None, "2025-03-01", NOW
    )
    assert saved.active
    assert saved.channel_id == 10
    assert saved.updated_at == NOW
    await DailyTables(storage).stop_schedule(1, "Missing Access", NOW)
    assert [s.guild_id for s in await DailyTables(storage).active_schedules()] == []
    assert (await DailyTables(storage).get_schedule(1)).stopped_reason == "Missing Access"
    again = await DailyTables(storage).save_schedule(1, 11, "10:00", "UTC", "rl", "2025-03-02", NOW)
    assert again.active
    assert again.stopped_reason is None
    assert again.topic == "rl"
    assert await DailyTables(storage).disable_schedule(1, NOW) is True
    assert await DailyTables(storage).disable_schedule(1, NOW) is False
    assert not (await DailyTables(storage).get_schedule(1)).enabled


async def test_create_pick_is_insert_once_and_advances_epoch(storage):
    assert (await DailyTables(storage).pool(3, new_seed=1)).epoch == 0
    first = await DailyTables(storage).create_pick(3, "2025-03-01", "a", 1, "m", NOW)
    second = await DailyTables(storage).create_pick(3, "2025-03-01", "b", 2, "m2", NOW)
    assert second.paper_id == "a"
    assert second.epoch == 1
    assert first == second
    assert (await DailyTables(storage).pool(3, new_seed=2)).epoch == 1
    assert (await DailyTables(storage).pool(3, new_seed=2)).seed == 1
    pool = await DailyTables(storage).pool(3, new_seed=2)
    assert pool.drawn == {"a"}
    assert pool.last_paper == "a"
    await DailyTables(storage).create_pick(3, "2025-03-02", "b", 2, "m", NOW)
    pool = await DailyTables(storage).pool(3, new_seed=2)
    assert (pool.epoch, pool.drawn, pool.last_paper) == (2, {"b"}, "b")


async def test_pick_state_transitions(storage):
    await DailyTables(storage).pool(4, 1)
    await DailyTables(storage).create_pick(4, "2025-03-01", "a", 0, "m", NOW)
    later = NOW + timedelta(minutes=5)
    pick = await DailyTables(storage).mark_sending(4, "2025-03-01", 99, NOW)
    assert pick.state == "sending"
    assert pick.first_attempt_at == NOW
    if storage.dialect == "sqlite":
        # the durable write switched to synchronous=FULL only for itself (1 = NORMAL)
        assert await storage.run(lambda c: c.execute("PRAGMA synchronous").fetchone()[0]) == 1
    pick = await DailyTables(storage).mark_retry(4, "2025-03-01", "503", later, NOW)
    assert pick.state == "pending"
    assert pick.next_attempt_at == later
    assert pick.attempts == 1
    assert [p.local_date for p in await DailyTables(storage).attempted_unfinished()] == [
        "2025-03-01"
    ]
    assert [p.local_date for p in await DailyTables(storage).recent_picks("2025-03-01")] == [
        "2025-03-01"
    ]
    assert await DailyTables(storage).recent_picks("2025-03-02") == []
    pick = await DailyTables(storage).mark_sending(4, "2025-03-01", 99, later)
    assert pick.attempts == 2
    assert pick.first_attempt_at == NOW
    pick = await DailyTables(storage).mark_sent(4, "2025-03-01", 1234, later)
    assert pick.state == "sent"
    assert pick.error is None
    assert pick.sent_at == later
    assert pick.jump_url == "https://discord.com/channels/4/99/1234"
    assert (await DailyTables(storage).last_sent(4)) == pick
    assert await DailyTables(storage).attempted_unfinished() == []


async def test_of_two_processes_racing_for_one_post_only_one_claims_it(storage):
    """Issue 12.3: two schedulers both read the pick as unsent (attempts 0) before either
    claimed it; the claim is a conditional update, so exactly one wins and the other is told
    not to send, until the winner's lease runs out."""
    await DailyTables(storage).pool(8, 1)
    await DailyTables(storage).create_pick(8, "2025-03-01", "a", 0, "m", NOW)
    lease = NOW + timedelta(minutes=5)

    async def claim(owner: str, at: datetime, attempts: int):
        return await DailyTables(storage).mark_sending(
            8, "2025-03-01", 99, at, owner=owner, lease_until=lease, attempts=attempts
        )

    won = await claim("host:1", NOW, 0)
    assert won is not None
    assert won.claim_owner == "host:1"
    assert await claim("host:2", NOW, 0) is None  # read before the claim: too late
    assert await claim("host:2", NOW + timedelta(minutes=1), 1) is None  # lease still held
    taken = await claim("host:2", lease, 1)  # the lease ran out (host:1 died)
    assert taken is not None
    assert (taken.claim_owner, taken.attempts) == ("host:2", 2)


async def test_mark_failed_can_stop_the_schedule(storage):
    await DailyTables(storage).save_schedule(5, 10, "09:00", "UTC", None, "2025-03-01", NOW)
    await DailyTables(storage).pool(5, 1)
    await DailyTables(storage).create_pick(5, "2025-03-01", "a", 0, "m", NOW)
    pick = await DailyTables(storage).mark_failed(
        5, "2025-03-01", "Unknown Channel", NOW, stop_schedule=True
    )
    assert pick.state == "failed"
    assert (await DailyTables(storage).get_schedule(5)).stopped_reason == "Unknown Channel"


async def test_save_schedule_drops_untried_pending_picks_only(storage):
    await DailyTables(storage).pool(6, 1)
    await DailyTables(storage).create_pick(6, "2025-03-01", "old", 0, "m", NOW)
    await DailyTables(storage).create_pick(6, "2025-03-02", "new", 0, "m", NOW)
    await DailyTables(storage).create_pick(6, "2025-03-03", "tried", 0, "m", NOW)
    await DailyTables(storage).mark_sending(6, "2025-03-03", 1, NOW)
    await DailyTables(storage).save_schedule(
        6, 1, "09:00", "UTC", "topic", "2025-03-02", NOW, drop_pending_from="2025-03-02"
    )
    assert [p.local_date for p in await history.picks(storage, 6)] == ["2025-03-01", "2025-03-03"]


async def test_naive_timestamps_are_refused(storage):
    await DailyTables(storage).pool(8, 1)
    with pytest.raises(ValueError, match="aware"):
        await DailyTables(storage).create_pick(8, "2025-03-01", "a", 0, "m", datetime(2025, 3, 1))

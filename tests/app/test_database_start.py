"""The bot never starts without its database (issue 12.4) nor on a disk that forgets it (14)."""

from __future__ import annotations

import asyncio
import io
from dataclasses import replace
from pathlib import Path

import pytest

from bot.app.client import PaperBot
from bot.app.runner import ALLOW_EPHEMERAL_ENV, EXIT_STORAGE, ephemeral_disk_problem, run_bot
from bot.config import Settings, StorageSettings
from bot.storage.schema import StorageError
from tests.storage.test_admin import big_sqlite, truncate


def settings_on(url: str, tmp_path: Path) -> Settings:
    return replace(
        Settings(), storage=StorageSettings(database=url, backup_dir=tmp_path / "backups")
    )


async def test_damaged_database_stops_the_start_with_the_way_out(tmp_path):
    url = await big_sqlite(tmp_path / "bot.sqlite3")
    truncate(Path(url))
    err = io.StringIO()
    # run_bot runs its own event loop: call it from a worker thread of this test's loop.
    code = await asyncio.to_thread(run_bot, settings_on(url, tmp_path), "not-a-token", err)
    assert code == EXIT_STORAGE
    text = err.getvalue()
    assert text.startswith("error: the database ")
    assert "damaged" in text
    assert "python -m bot db restore --latest" in text
    assert "Traceback" not in text


async def test_the_bot_refuses_a_damaged_database_it_opens_itself(tmp_path):
    url = await big_sqlite(tmp_path / "bot.sqlite3")
    truncate(Path(url))
    bot = PaperBot(settings_on(url, tmp_path))
    with pytest.raises(StorageError, match="damaged"):
        await bot._open_storage()


def test_sqlite_on_an_ephemeral_disk_is_refused_unless_overridden(tmp_path, monkeypatch):
    sqlite = settings_on(str(tmp_path / "x.sqlite3"), tmp_path)
    problem = ephemeral_disk_problem(sqlite, {"DYNO": "worker.1"})
    assert problem is not None
    assert "DATABASE_URL" in problem
    assert ALLOW_EPHEMERAL_ENV in problem
    assert ephemeral_disk_problem(sqlite, {"DYNO": "worker.1", ALLOW_EPHEMERAL_ENV: "1"}) is None
    assert ephemeral_disk_problem(sqlite, {}) is None
    pg = settings_on("postgresql://u:p@db/x", tmp_path)
    assert ephemeral_disk_problem(pg, {"DYNO": "worker.1"}) is None
    err = io.StringIO()
    monkeypatch.setenv("DYNO", "worker.1")
    monkeypatch.delenv(ALLOW_EPHEMERAL_ENV, raising=False)
    assert run_bot(sqlite, "not-a-token", err) == EXIT_STORAGE
    assert "ephemeral" in err.getvalue()

"""The SQLite file survives `kill -9` in the middle of writes (WAL), with every commit kept.

A real child process writes through `bot.storage.store.Storage` in a tight loop and prints each
counter after its commit returned; the test SIGKILLs it mid-stream, then reopens the file:
`PRAGMA integrity_check` must say ok and every acknowledged commit must be there.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.config import PROJECT_ROOT

WRITER = """
import asyncio, sys
from datetime import UTC, datetime
from bot.daily.tables import DailyTables
from bot.storage.store import Storage

async def main(path):
    store = await Storage.open(path)
    tables = DailyTables(store)
    n = 0
    while True:
        n += 1
        now = datetime.now(UTC)
        await store.set_meta("counter", str(n))
        await tables.save_schedule(n % 50, n, "09:00", "UTC", "topic %d" % n, "2026-01-01", now)
        print(n, flush=True)

asyncio.run(main(sys.argv[1]))
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def test_sqlite_survives_sigkill_mid_write(tmp_path: Path) -> None:
    db = tmp_path / "state" / "bot.sqlite3"
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db)],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
    )
    acknowledged = 0
    deadline = time.monotonic() + 20
    try:
        assert child.stdout is not None
        while acknowledged < 300 and time.monotonic() < deadline:
            line = child.stdout.readline()
            if not line:
                break
            acknowledged = int(line)
        os.kill(child.pid, signal.SIGKILL)  # while it is still writing
    finally:
        child.kill()
        _out, err = child.communicate(timeout=10)
    assert acknowledged >= 300, err
    assert child.returncode == -signal.SIGKILL
    assert Path(f"{db}-wal").exists()  # killed with a live WAL, nothing checkpointed on exit

    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        counter = int(conn.execute("SELECT value FROM meta WHERE key = 'counter'").fetchone()[0])
        assert counter >= acknowledged  # every commit that returned is on disk
        rows = conn.execute("SELECT COUNT(*) FROM schedules").fetchone()[0]
        assert rows == min(50, counter)
    finally:
        conn.close()

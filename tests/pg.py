"""A real PostgreSQL server for the tests, started by the test run itself.

The server comes from the `pgserver` wheel (PostgreSQL binaries inside a Python package; part of
the test extra) and listens on a Unix socket in a temporary folder: nothing outside this machine.
Each test gets a fresh database on it (`fresh_database_url`). Without pgserver the PostgreSQL
runs skip with the reason, except when PAPERBOT_REQUIRE_POSTGRES=1 (set by .ci/run): then a
missing server is a failure, so CI never passes by skipping half the storage suite.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from tests.procs import alive

REQUIRE_ENV = "PAPERBOT_REQUIRE_POSTGRES"
_counter = itertools.count(1)
# Memory-backed when the machine has one: every test's CREATE DATABASE writes some 7 MB, and
# on disk the run's gigabyte or two of throwaway files slowed the server and everything else.
SHM = Path("/dev/shm")


class PgServer:
    """One pgserver instance and the admin URL used to create test databases."""

    def __init__(self) -> None:
        try:
            import pgserver
        except ImportError as exc:
            self._unavailable(f"pgserver is not installed ({exc}); pip install -e '.[test]'")
        shm = SHM if SHM.is_dir() and os.access(SHM, os.W_OK) else None
        self.root = Path(tempfile.mkdtemp(prefix="paperbot-pg-", dir=shm))
        self.server: Any = pgserver.get_server(self.root / "data", cleanup_mode="stop")
        self.admin_url: str = self.server.get_uri()
        # A throwaway server: no fsync, so creating a database per test and stopping are fast
        # on a busy machine. (Durability against a killed client process does not need it.)
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            for setting in ("fsync", "synchronous_commit", "full_page_writes"):
                conn.execute(f"ALTER SYSTEM SET {setting} = off")
            conn.execute("SELECT pg_reload_conf()")
            version = conn.execute("SHOW server_version_num").fetchone()
        # PostgreSQL 15+ copies the template through the WAL by default (7 MB of WAL per
        # database); FILE_COPY copies its files: about twice as fast, and the WAL stays small.
        self._strategy = " STRATEGY = FILE_COPY" if version and int(version[0]) >= 150000 else ""

    @staticmethod
    def _unavailable(reason: str) -> None:
        if os.environ.get(REQUIRE_ENV, "").strip() == "1":
            pytest.fail(f"PostgreSQL is required here ({REQUIRE_ENV}=1): {reason}")
        pytest.skip(f"PostgreSQL tests need a server: {reason}")

    def url_for(self, name: str) -> str:
        return self.admin_url.replace("/postgres?", f"/{name}?", 1)

    def fresh_database_url(self) -> str:
        import psycopg

        name = f"paperbot_t{os.getpid()}_{next(_counter)}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"{self._strategy}')
        return self.url_for(name)

    def stop(self) -> None:
        """Stops the server at once (its data is deleted next), then deletes its folder.

        pgserver's own stop is `pg_ctl stop` in fast mode: a shutdown checkpoint that writes
        every dirty buffer of a data folder about to be deleted, seconds on a busy machine and
        once nearly a minute, billed to the teardown of whichever test ran last on the worker.
        SIGQUIT is PostgreSQL's immediate shutdown: backends exit at once, no checkpoint."""
        pidfile = self.server.pgdata / "postmaster.pid"
        pid = self.server.get_pid()
        with contextlib.suppress(ProcessLookupError, TypeError):  # gone, or no pid at all
            os.kill(pid, signal.SIGQUIT)
        # A killed postmaster (tests/app/exts/daily/test_database_restart.py) leaves its pid file.
        deadline = time.monotonic() + 30
        while pidfile.exists() and alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        if not (pidfile.exists() and alive(pid)):
            # Stopped: release this process's handle only. (The postmaster may linger as a
            # zombie that pgserver would take for a live server and wait on to terminate.)
            self.server.cleanup_mode = None
        self.server.cleanup()
        shutil.rmtree(self.root, ignore_errors=True)

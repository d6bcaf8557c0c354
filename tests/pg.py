"""A real PostgreSQL server for the tests, started by the test run itself.

The server comes from the `pgserver` wheel (PostgreSQL binaries inside a Python package; part of
the test extra) and listens on a Unix socket in a temporary folder: nothing outside this machine.
Each test gets a fresh database on it (`fresh_database_url`). Without pgserver the PostgreSQL
runs skip with the reason, except when PAPERBOT_REQUIRE_POSTGRES=1 (set by .ci/run): then a
missing server is a failure, so CI never passes by skipping half the storage suite.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

REQUIRE_ENV = "PAPERBOT_REQUIRE_POSTGRES"
_counter = itertools.count(1)


class PgServer:
    """One pgserver instance and the admin URL used to create test databases."""

    def __init__(self) -> None:
        try:
            import pgserver
        except ImportError as exc:
            self._unavailable(f"pgserver is not installed ({exc}); pip install -e '.[test]'")
        self.root = Path(tempfile.mkdtemp(prefix="paperbot-pg-"))
        self.server: Any = pgserver.get_server(self.root / "data", cleanup_mode="stop")
        self.admin_url: str = self.server.get_uri()
        # A throwaway server: no fsync, so creating a database per test and stopping are fast
        # on a busy machine. (Durability against a killed client process does not need it.)
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            for setting in ("fsync", "synchronous_commit", "full_page_writes"):
                conn.execute(f"ALTER SYSTEM SET {setting} = off")
            conn.execute("SELECT pg_reload_conf()")

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
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url_for(name)

    def stop(self) -> None:
        self.server.cleanup()
        shutil.rmtree(self.root, ignore_errors=True)

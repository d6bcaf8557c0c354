"""Shared fixtures. `../shared` exists in CI but not in a user's clone: tests needing it skip."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from bot.config import PROJECT_ROOT, SearchSettings
from bot.papers.corpus import load_corpus
from bot.search.engine import SearchEngine
from tests.pg import PgServer

# Registered once for every test: no test token in any log record; the loopback Discord
# (`fake_discord`, `connect_bot`); the paper-of-the-day bot on a stepped clock (`daily_env`).
pytest_plugins = ["tests.token_guard", "tests.fakediscord.fixtures", "tests.app.exts.daily.support"]
# No per-example deadline: a time limit is a timed assert, and on a loaded CI machine (four
# xdist workers on two cores) it fails examples that are only slow, not wrong.
settings.register_profile("paperbot", deadline=None)
settings.load_profile("paperbot")
SHARED = PROJECT_ROOT.parent / "shared" / "data"
TEST_DATA = Path(__file__).resolve().parent / "data"
ICML = PROJECT_ROOT / "data" / "icml2026.jsonl"
# With PYTHONDONTWRITEBYTECODE set (some sandboxes and CI images do), every process of the run
# compiled the project from source: each xdist worker, and each `python -m bot` a test starts,
# some 15 s of CPU a run on two cores. The run caches bytecode as a default setup does (in
# __pycache__, which git ignores); its workers and child processes inherit this environment.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers more than pytest-xdist's count of cores. About half of a
    worker's time is waiting (on a `python -m bot` child, PostgreSQL, the loopback Discord, a
    timed step), and the extra workers fill it: on two cores the full suite took 127 s with 3
    workers and 118 s with 4. PYTEST_XDIST_AUTO_NUM_WORKERS still sets the number exactly."""
    from xdist.plugin import pytest_xdist_auto_num_workers as xdist_count

    extra = 0 if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") else 2
    return xdist_count(config) + extra


def shared_path(*parts: str) -> Path:
    """A path under ../shared/data, or a skip saying why it is missing."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs {path} (the public data set beside the repo; present in CI)")
    return path


@pytest.fixture(scope="session")
def icml_engine() -> SearchEngine:
    """The bot's default corpus, indexed in memory (no saved index touched)."""
    report = load_corpus([ICML])
    return SearchEngine(report.papers, settings=SearchSettings())


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """A PostgreSQL server for the whole run (about a second to start), stopped at the end."""
    server = PgServer()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty database on each backend: every storage test runs on both."""
    if request.param == "sqlite":
        return str(tmp_path / "db" / "bot.sqlite3")
    server: PgServer = request.getfixturevalue("pg_server")
    return server.fresh_database_url()

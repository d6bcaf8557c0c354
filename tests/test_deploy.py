"""The deploy kit stays true to the project: pinned requirements match pyproject.toml's ranges,
the Procfile migrates before the worker starts, the image runs as a non-root user with a
health check, compose pairs the bot with PostgreSQL on a volume, and systemd accepts the unit."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from bot.config import PROJECT_ROOT
from tests.conftest import ICML
from tests.pg import PgServer


def pins() -> dict[str, str]:
    out = {}
    for line in (PROJECT_ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, version = line.partition("==")
        assert sep, f"requirements.txt: {line!r} is not pinned with =="
        out[canonicalize_name(name)] = version
    return out


def test_requirements_pin_every_runtime_dependency_within_its_range() -> None:
    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pinned = pins()
    for spec in project["project"]["dependencies"]:
        req = Requirement(spec)
        name = canonicalize_name(req.name)
        assert name in pinned, f"{req.name} is in pyproject.toml but not in requirements.txt"
        assert req.specifier.contains(pinned[name], prereleases=True), (
            f"requirements.txt pins {req.name}=={pinned[name]}, outside {req.specifier}; "
            "run python scripts/export_requirements.py"
        )
        for extra in req.extras:  # psycopg[binary] -> psycopg-binary
            assert canonicalize_name(f"{req.name}-{extra}") in pinned
    test_only = {"pytest", "ruff", "mypy", "pgserver", "jsonschema", "hypothesis"}
    assert not test_only & set(pinned), "requirements.txt is for running the bot, not tests"


def procfile() -> dict[str, str]:
    """Process type -> command, as a Heroku-style host reads the Procfile."""
    text = (PROJECT_ROOT / "Procfile").read_text(encoding="utf-8")
    pairs = (line.split(":", 1) for line in text.splitlines() if line.strip())
    return {name.strip(): command.strip() for name, command in pairs}


def test_procfile_migrates_and_builds_the_index_before_the_worker() -> None:
    lines = procfile()
    assert "python -m bot db migrate" in lines["release"]
    assert "python -m bot --check" in lines["release"]  # loads the corpus, saves the index
    assert lines["worker"].strip() == "python -m bot"


def test_procfile_release_then_worker_on_postgresql_without_a_token(
    pg_server: PgServer, tmp_path: Path
) -> None:
    """The two Procfile commands as a Heroku-style host runs them: `release:` migrates a fresh
    PostgreSQL and checks, with no token yet; then a `worker:` without a token stops with one
    line (exit 1) instead of an empty console that would exit 0 and be restarted forever."""
    lines = procfile()
    config = tmp_path / "settings.toml"
    config.write_text(
        f'[corpus]\nfiles = ["{ICML}"]\nindex_dir = "{tmp_path / "index"}"\n', encoding="utf-8"
    )
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(PROJECT_ROOT),
        "PAPERBOT_CONFIG": str(config),
        "DATABASE_URL": pg_server.fresh_database_url(),
        "DISCORD_TOKEN": "",
    }

    def run(command: str, dyno: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["sh", "-c", command],
            cwd=PROJECT_ROOT,
            env={**env, "DYNO": dyno},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    release = run(lines["release"], "release.1")
    assert release.returncode == 0, release.stdout + release.stderr
    assert re.search(r"^schema version 0 -> \d+$", release.stdout, re.M)
    assert "ok   storage: postgresql " in release.stdout
    assert "DISCORD_TOKEN: not set (this runs as a service, DYNO=release.1" in release.stdout
    assert release.stdout.rstrip().endswith("check passed")
    worker = run(lines["worker"], "worker.1")
    assert (worker.returncode, worker.stdout) == (1, "")
    [line] = worker.stderr.splitlines()
    assert line.startswith("error: DISCORD_TOKEN is not set, and this runs as a service (DYNO=")


def test_dockerfile_is_slim_non_root_pinned_and_checked() -> None:
    text = (PROJECT_ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert text.splitlines()[3].startswith("FROM python:3.11-slim")
    assert "pip install --requirement requirements.txt" in text
    user = next(line for line in text.splitlines() if line.startswith("USER "))
    assert not user.split()[1].startswith(("0", "root"))
    assert "python -m bot --check" in text  # the index is built at image build
    assert "HEALTHCHECK" in text
    assert text.strip().endswith('CMD ["python", "-m", "bot"]')


def test_compose_runs_the_bot_on_postgresql_with_a_volume() -> None:
    text = (PROJECT_ROOT / "compose.yaml").read_text(encoding="utf-8")
    assert "image: postgres:16" in text
    assert "pgdata:/var/lib/postgresql/data" in text
    assert "DATABASE_URL: postgresql://" in text
    assert "condition: service_healthy" in text


UNIT = PROJECT_ROOT / "deploy" / "paperbot.service"


def test_systemd_unit_runs_the_bot_as_a_service_and_reloads_with_sighup() -> None:
    text = UNIT.read_text(encoding="utf-8")
    assert "ExecStart=/opt/paperbot/.venv/bin/python -m bot" in text
    assert "Environment=PAPERBOT_SERVICE=1" in text  # no console without a terminal
    assert "ExecReload=/bin/kill -HUP $MAINPID" in text
    assert "EnvironmentFile=/opt/paperbot/.env" in text
    assert "User=paperbot" in text


def test_systemd_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    """The unit as systemd reads it, with its /opt/paperbot paths made real under tmp_path."""
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.skip("systemd-analyze is not installed here")
    root = tmp_path / "paperbot"
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "bin" / "python").symlink_to(sys.executable)
    for folder in ("state", "data"):
        (root / folder).mkdir()
    (root / ".env").write_text("DISCORD_TOKEN=\n", encoding="utf-8")
    unit = tmp_path / "paperbot.service"
    unit.write_text(UNIT.read_text(encoding="utf-8").replace("/opt/paperbot", str(root)))
    done = subprocess.run(
        [tool, "verify", str(unit)], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout + done.stderr) == (0, "")

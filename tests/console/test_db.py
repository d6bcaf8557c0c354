"""`python -m bot db …` end to end through the CLI entry point, on both backends."""

from __future__ import annotations

import asyncio
import io

from bot.console.cli import main
from bot.storage.schema import schema_version
from tests.storage.test_admin import ROWS, big_sqlite, fill, snapshot, truncate


async def run(*argv: str) -> tuple[int, str, str]:
    """The CLI in a worker thread: it runs its own event loop, as from a terminal."""
    out, err = io.StringIO(), io.StringIO()
    code = await asyncio.to_thread(main, list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


async def test_migrate_check_backup_restore(tmp_path, database_url):
    code, out, _ = await run("db", "--url", database_url, "migrate")
    assert code == 0
    assert out.strip().endswith(f"-> {schema_version()}")
    await fill(database_url)
    code, out, _ = await run("db", "--url", database_url, "check")
    assert code == 0
    assert f"schema version {schema_version()}/{schema_version()}" in out
    assert "picks 6" in out
    code, out, _ = await run("db", "--url", database_url, "backup", "--to", str(tmp_path / "b"))
    assert code == 0, out
    backup = out.split("backup written: ")[1].strip()
    before = await snapshot(database_url)
    code, out, err = await run("db", "--url", database_url, "restore", "--from", backup)
    assert code == 0, err
    assert "picks 6" in out
    assert await snapshot(database_url) == before


async def test_a_damaged_file_is_one_error_line_and_latest_backup_restores_it(tmp_path):
    url = await big_sqlite(tmp_path / "state" / "bot.sqlite3")
    config = tmp_path / "settings.toml"
    config.write_text(
        f'[storage]\nurl = "{url}"\nbackup_dir = "{tmp_path / "backups"}"\n', encoding="utf-8"
    )
    assert (await run("--config", str(config), "db", "backup"))[0] == 0
    before = await snapshot(url)
    truncate(tmp_path / "state" / "bot.sqlite3")
    code, _out, err = await run("--config", str(config), "db", "check")
    assert code == 2
    assert err.startswith("error: the database")
    assert err.count("\n") == 1
    code, _out, err = await run("--config", str(config), "db", "restore", "--latest")
    assert code == 0, err
    assert await snapshot(url) == before


async def test_copy_from_sqlite_to_postgresql(tmp_path, pg_server):
    source = str(tmp_path / "old.sqlite3")
    await fill(source)
    target = pg_server.fresh_database_url()
    code, out, err = await run("db", "copy", "--from", f"sqlite:///{source}", "--to", target)
    assert code == 0, err
    assert out == "copied: " + ", ".join(f"{t} {n}" for t, n in ROWS.items()) + "\n"
    assert await snapshot(target) == await snapshot(source)
    code, out, err = await run("db", "copy", "--from", source, "--to", target)
    assert code == 2
    assert "--replace" in err

"""`python -m bot db …` end to end through the CLI entry point, on both backends."""

from __future__ import annotations

import asyncio
import io
import json

from bot.console.cli import main
from bot.storage import admin
from bot.storage.schema import schema_version
from tests.storage.test_admin import ROWS, big_sqlite, fill, snapshot, truncate
from tests.storage.test_admin_checks import bad_names, nul_line, put_nul


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


async def test_copy_with_a_nul_byte_is_one_error_line_until_skip_bad(tmp_path, pg_server):
    """Issue 26 item 5: a NUL byte SQLite accepted used to end the copy in a psycopg traceback."""
    source = tmp_path / "old.sqlite3"
    await fill(str(source))
    follow_id = put_nul(source)
    target = pg_server.fresh_database_url()
    code, out, err = await run("db", "copy", "--from", str(source), "--to", target)
    assert code == 2, out
    assert err.startswith("error: ")
    assert err.count("\n") == 1
    assert nul_line(follow_id) in err
    code, out, err = await run("db", "copy", "--from", str(source), "--to", target, "--skip-bad")
    assert code == 0, err
    assert "follows 0" in out
    assert f"skipped: {nul_line(follow_id)}\n" in out


async def test_restore_of_an_export_with_unknown_names_changes_nothing(tmp_path, database_url):
    """Issue 26 item 12: unknown names in an export used to reach the SQL text."""
    await fill(database_url)
    before = await snapshot(database_url)
    data = await admin.export_tables(database_url)
    bad_names(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    code, _out, err = await run("db", "--url", database_url, "restore", "--from", str(path))
    assert code == 2
    assert err.count("\n") == 1
    assert "unknown column 'x; DROP TABLE follows' in follows" in err
    assert "unknown table 'bogus'" in err
    assert await snapshot(database_url) == before

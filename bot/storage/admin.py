"""Operating the database: check, migrate, back up, restore, and copy between backends.

Behind `python -m bot db …` and the bot's rolling backup. One export format serves every
backend: a SQLite backup is SQLite's own online backup (a consistent file, any size), and a
PostgreSQL backup is a logical JSON export of the bot's tables (`TABLES`), which `restore` and
`copy` read back into either engine. `pg_dump` remains the tool for whole-server backups.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.config import StorageSettings
from bot.storage.schema import TABLES, Conn, StorageError, schema_version
from bot.storage.store import Storage
from bot.storage.urls import parse_database_url

log = logging.getLogger(__name__)
EXPORT_FORMAT = "paperbot-export"
BACKUP_PREFIX = "paperbot-"


@dataclass(frozen=True, slots=True)
class DbReport:
    """What `db check` prints: where, which schema version, how many rows per table."""

    dialect: str
    display: str
    version: int
    rows: dict[str, int] = field(default_factory=dict)
    note: str = ""

    def lines(self) -> list[str]:
        head = f"{self.dialect} {self.display}: schema version {self.version}/{schema_version()}"
        counts = ", ".join(f"{table} {n}" for table, n in self.rows.items())
        return [head + (f" ({self.note})" if self.note else ""), counts] if counts else [head]


def _count(c: Conn) -> dict[str, int]:
    return {t: int(c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in TABLES}


async def check(url: str) -> DbReport:
    """Open without changing anything but the version table; StorageError says what is wrong."""
    parsed = parse_database_url(url)
    if parsed.dialect == "sqlite" and parsed.target != ":memory:" and not _exists(parsed.target):
        return DbReport("sqlite", parsed.target, 0, note="not created yet; the bot creates it")
    store = await Storage.open(url, migrate=False)
    try:
        version = await store.schema_version()
        if version > schema_version():
            raise StorageError(
                f"schema version {version} is newer than this bot ({schema_version()}): upgrade it"
            )
        rows = await store.run(_count, write=False) if version == schema_version() else {}
        note = "" if version == schema_version() else "run `python -m bot db migrate`"
        return DbReport(store.dialect, store.display, version, rows, note)
    finally:
        await store.close()


async def migrate(url: str) -> tuple[int, int]:
    """(version before, version after)."""
    store = await Storage.open(url, migrate=False)
    try:
        before = await store.schema_version()
    finally:
        await store.close()
    store = await Storage.open(url)
    try:
        return before, await store.schema_version()
    finally:
        await store.close()


# -- moving rows ------------------------------------------------------------------------------


def _read_tables(c: Conn) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for table in TABLES:
        cur: Any = c.execute(f"SELECT * FROM {table}")
        columns = [d[0] for d in cur.description]
        rows = [[row[i] for i in range(len(columns))] for row in cur.fetchall()]
        out[table] = {"columns": columns, "rows": rows}
    return out


def _write_tables(c: Conn, tables: dict[str, dict[str, Any]], replace: bool) -> dict[str, int]:
    existing = _count(c)
    if not replace and any(existing.values()):
        busy = ", ".join(f"{t} {n}" for t, n in existing.items() if n)
        raise StorageError(f"the target database is not empty ({busy}); add --replace")
    for table in reversed(TABLES):
        c.execute(f"DELETE FROM {table}")
    written = {}
    for table in TABLES:
        data = tables.get(table, {"columns": [], "rows": []})
        columns, rows = data["columns"], data["rows"]
        if rows:
            sql = (
                f"INSERT INTO {table} ({', '.join(columns)}) "
                f"VALUES ({', '.join('?' for _ in columns)})"
            )
            for row in rows:
                c.execute(sql, tuple(row))
        written[table] = len(rows)
    return written


async def export_tables(url: str) -> dict[str, Any]:
    store = await Storage.open(url)
    try:
        tables = await store.run(_read_tables, write=False)
        return {"format": EXPORT_FORMAT, "schema_version": schema_version(), "tables": tables}
    finally:
        await store.close()


def read_export(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StorageError(f"{path}: not a readable export ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise StorageError(f"{path}: not a {EXPORT_FORMAT} file")
    if data.get("schema_version") != schema_version():
        raise StorageError(
            f"{path}: schema version {data.get('schema_version')}; this bot reads "
            f"{schema_version()} (restore it with the bot version that wrote it, then migrate)"
        )
    return data


async def _source_tables(source: str) -> dict[str, Any]:
    if source.endswith(".json"):
        return read_export(Path(source))
    await check(source)  # a damaged or newer source is refused before anything is written
    return await export_tables(source)


async def copy(source: str, target: str, *, replace: bool = False) -> dict[str, int]:
    """Every row of the bot's tables from `source` (a URL or an export) into `target`.

    One transaction on the target: a failure leaves it as it was.
    """
    data = await _source_tables(source)
    store = await Storage.open(target)
    try:
        return await store.run(lambda c: _write_tables(c, data["tables"], replace))
    finally:
        await store.close()


# -- backups ----------------------------------------------------------------------------------


def _exists(path: str) -> bool:
    return Path(path).exists()


def _write_json(target: Path, data: dict[str, Any]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".part")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    tmp.replace(target)


def _prune(directory: Path, keep: int) -> None:
    for old in backups(directory)[:-keep] if keep > 0 else []:
        old.unlink(missing_ok=True)


def _set_aside(path: Path, stamp: str) -> None:
    for extra in ("", "-wal", "-shm"):
        old = Path(str(path) + extra)
        if old.exists():
            old.replace(Path(f"{path}{extra}.before-restore-{stamp}"))


def backup_name(dialect: str, now: datetime) -> str:
    suffix = ".sqlite3" if dialect == "sqlite" else ".json"
    return BACKUP_PREFIX + now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ") + suffix


def backups(directory: Path) -> list[Path]:
    """Backups in `directory`, oldest first (the names sort by time)."""
    if not directory.is_dir():
        return []
    return sorted(
        p
        for p in directory.iterdir()
        if p.name.startswith(BACKUP_PREFIX) and p.suffix in (".sqlite3", ".json")
    )


async def backup(storage: Storage, directory: Path, keep: int, now: datetime) -> Path:
    """One backup of the open `storage` into `directory`, keeping the newest `keep`."""
    target = directory / backup_name(storage.dialect, now)
    backend: Any = storage.backend
    if storage.dialect == "sqlite":
        await backend.backup_to(target)
    else:
        tables = await storage.run(_read_tables, write=False)
        data = {"format": EXPORT_FORMAT, "schema_version": schema_version(), "tables": tables}
        _write_json(target, data)
    _prune(directory, keep)
    log.info("database backed up to %s", target)
    return target


def backup_due(settings: StorageSettings, now: datetime) -> bool:
    """True when the newest backup is older than `backup_hours` (or there is none)."""
    existing = backups(settings.backup_dir)
    if not existing:
        return True
    age = now.timestamp() - existing[-1].stat().st_mtime
    return age >= settings.backup_hours * 3600


async def restore(target: str, source: Path, now: datetime) -> dict[str, int]:
    """Put a backup (a SQLite backup file or a JSON export) back as the database `target`.

    A SQLite target is moved aside first (`<file>.before-restore-<time>`, with its WAL), so a
    damaged file is kept for inspection and the restore never depends on reading it.
    """
    if not _exists(str(source)):
        raise StorageError(f"no backup at {source}")
    parsed = parse_database_url(target)
    data = await _source_tables(str(source))
    if parsed.dialect == "sqlite" and parsed.target != ":memory:":
        _set_aside(Path(parsed.target), now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ"))
    store = await Storage.open(target)
    try:
        return await store.run(lambda c: _write_tables(c, data["tables"], replace=True))
    finally:
        await store.close()

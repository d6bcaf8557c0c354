"""Operating the database: check, migrate, back up, restore, and copy between backends.

Behind `python -m bot db …` and the bot's rolling backup. One export format serves every
backend: a SQLite backup is SQLite's own online backup (a consistent file, any size), and a
PostgreSQL backup is a logical JSON export of the bot's tables (`TABLES`), which `restore` and
`copy` read back into either engine. `pg_dump` remains the tool for whole-server backups.

What `restore` and `copy` move is checked before the target is touched (`_checked`, with
`bot.storage.validate`): every table and column name must be one the migrations create (only
the schema's own spelling of a name reaches SQL text), every row must have one plain value per
column, and every text must be one any database can hold (`validate.text_problem`: no NUL,
which PostgreSQL refuses and SQLite keeps, no lone surrogate). Rows that fail the text rule
are named by table and key ("follows follow_id=ab12: a NUL character (U+0000) in query"), and
the whole move is refused unless `skip_bad` (`--skip-bad`) leaves them out. Then the rows are
written into a scratch in-memory database of the same schema, so a constraint they break is
reported before the target (or a SQLite target's file, set aside by `restore`) is touched.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.config import StorageSettings
from bot.storage import validate
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


@dataclass(frozen=True, slots=True)
class Moved:
    """What `restore` or `copy` wrote (rows per table) and the rows it left out, one line each
    ("follows follow_id=ab12: a NUL character (U+0000) in query")."""

    rows: dict[str, int]
    skipped: list[str] = field(default_factory=list)


def _read_tables(c: Conn) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for table in TABLES:
        cur: Any = c.execute(f"SELECT * FROM {table}")
        columns = [d[0] for d in cur.description]
        rows = [[row[i] for i in range(len(columns))] for row in cur.fetchall()]
        out[table] = {"columns": columns, "rows": rows}
    return out


def _write_tables(c: Conn, plan: dict[str, validate.Table], replace: bool) -> dict[str, int]:
    """Write checked rows (`validate.plan`): the table names come from `TABLES` and the column
    names from the schema, never from the export."""
    existing = _count(c)
    if not replace and any(existing.values()):
        busy = ", ".join(f"{t} {n}" for t, n in existing.items() if n)
        raise StorageError(f"the target database is not empty ({busy}); add --replace")
    for table in reversed(TABLES):
        c.execute(f"DELETE FROM {table}")
    errors = validate.driver_errors()
    written = {}
    for table in TABLES:
        data = plan.get(table, validate.Table((), ()))
        sql = (
            f"INSERT INTO {table} ({', '.join(data.columns)}) "
            f"VALUES ({', '.join('?' for _ in data.columns)})"
        )
        for number, row in enumerate(data.rows, 1):
            try:
                c.execute(sql, row)
            except errors as exc:  # a constraint or a type the rows break: roll back all
                reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise StorageError(
                    f"{data.name_of(table, row, number)}: cannot be written ({reason}): "
                    "nothing was written"
                ) from exc
        written[table] = len(data.rows)
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


async def _checked(source: str, skip_bad: bool) -> tuple[dict[str, validate.Table], list[str]]:
    """The source's rows, checked as the module docstring says, and the rows left out."""
    data = await _source_tables(source)
    scratch = await Storage.open(":memory:")
    try:
        plan, bad = validate.without_bad_text(
            validate.plan(data.get("tables"), await scratch.run(validate.shapes))
        )
        if bad and not skip_bad:
            raise StorageError(validate.refusal(bad))
        await scratch.run(lambda c: _write_tables(c, plan, replace=False))
    finally:
        await scratch.close()
    return plan, bad


async def copy(source: str, target: str, *, replace: bool = False, skip_bad: bool = False) -> Moved:
    """Every row of the bot's tables from `source` (a URL or an export) into `target`.

    Checked first (`_checked`), then one transaction on the target: a failure leaves it as it
    was. Rows holding text no database may hold refuse the copy, naming each by table and key,
    unless `skip_bad` copies the rest without them (`Moved.skipped` names them).
    """
    plan, skipped = await _checked(source, skip_bad)
    store = await Storage.open(target)
    try:
        return Moved(await store.run(lambda c: _write_tables(c, plan, replace)), skipped)
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


async def restore(target: str, source: Path, now: datetime, *, skip_bad: bool = False) -> Moved:
    """Put a backup (a SQLite backup file or a JSON export) back as the database `target`.

    The backup is checked first (`_checked`, as for `copy`): a refused one changes nothing.
    Then a SQLite target is moved aside (`<file>.before-restore-<time>`, with its WAL), so a
    damaged file is kept for inspection and the restore never depends on reading it.
    """
    if not _exists(str(source)):
        raise StorageError(f"no backup at {source}")
    parsed = parse_database_url(target)
    plan, skipped = await _checked(str(source), skip_bad)
    if parsed.dialect == "sqlite" and parsed.target != ":memory:":
        _set_aside(Path(parsed.target), now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ"))
    store = await Storage.open(target)
    try:
        return Moved(await store.run(lambda c: _write_tables(c, plan, replace=True)), skipped)
    finally:
        await store.close()

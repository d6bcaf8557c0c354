"""`python -m bot db migrate|check|backup|restore|copy`: the database from the terminal.

The database is the one the bot would use (DATABASE_URL, else `[storage] url`), unless `--url`
names another. Every command prints what it did in one or two lines and exits 0, or prints
`error: …` and exits 2, never a traceback for a damaged file or an unreachable server.
A restore or copy is checked before anything is written (`bot.storage.admin`): names the
schema does not have, malformed rows and rows holding a NUL byte are refused by table and key;
`--skip-bad` moves the rest and lists the rows holding a NUL byte as skipped.
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from bot.config import ConfigError, Settings
from bot.storage import admin
from bot.storage.schema import StorageError
from bot.storage.store import Storage

# Rows holding text no database may hold (a NUL byte SQLite kept) refuse a restore or copy,
# each named by table and key; with this flag the rest moves and those are listed as skipped.
SKIP_HELP = "leave out rows holding a NUL byte or a lone surrogate (each is listed)"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    db = sub.add_parser("db", help="check, migrate, back up, restore or copy the database")
    db.add_argument("--url", help="database URL (default: DATABASE_URL, else [storage] url)")
    actions = db.add_subparsers(dest="db_command", metavar="ACTION", required=True)
    actions.add_parser("check", help="can the bot use the database? schema version, row counts")
    actions.add_parser("migrate", help="create or upgrade the schema")
    backup = actions.add_parser("backup", help="a backup now (SQLite: backup API; else JSON)")
    backup.add_argument("--to", type=Path, help="folder (default: [storage] backup_dir)")
    restore = actions.add_parser("restore", help="replace the database with a backup")
    which = restore.add_mutually_exclusive_group(required=True)
    which.add_argument("--latest", action="store_true", help="the newest backup in backup_dir")
    which.add_argument("--from", dest="source", type=Path, help="a backup file or JSON export")
    restore.add_argument("--skip-bad", action="store_true", help=SKIP_HELP)
    copy = actions.add_parser("copy", help="copy every table from one database to another")
    copy.add_argument("--from", dest="source", required=True, help="URL or JSON export")
    copy.add_argument("--to", dest="target", help="URL (default: the bot's database)")
    copy.add_argument("--replace", action="store_true", help="overwrite a non-empty target")
    copy.add_argument("--skip-bad", action="store_true", help=SKIP_HELP)


async def _backup(url: str, directory: Path, keep: int) -> Path:
    store = await Storage.open(url)
    try:
        return await admin.backup(store, directory, keep, datetime.now(UTC))
    finally:
        await store.close()


def _moved(verb: str, moved: admin.Moved, out: TextIO) -> None:
    out.write(f"{verb}: " + ", ".join(f"{table} {n}" for table, n in moved.rows.items()) + "\n")
    for line in moved.skipped:
        out.write(f"skipped: {line}\n")


def run(args: argparse.Namespace, settings: Settings, out: TextIO, err: TextIO) -> int:
    url = args.url or settings.storage.database
    storage = settings.storage
    try:
        action = args.db_command
        if action == "check":
            report = asyncio.run(admin.check(url))
            for line in report.lines():
                out.write(f"{line}\n")
            return 0 if not report.note or report.version == 0 else 1
        if action == "migrate":
            before, after = asyncio.run(admin.migrate(url))
            out.write(f"schema version {before} -> {after}\n")
            return 0
        if action == "backup":
            path = asyncio.run(_backup(url, args.to or storage.backup_dir, storage.backup_keep))
            out.write(f"backup written: {path}\n")
            return 0
        if action == "restore":
            source = args.source
            if args.latest:
                found = admin.backups(storage.backup_dir)
                if not found:
                    raise StorageError(f"no backup in {storage.backup_dir}")
                source = found[-1]
            now = datetime.now(UTC)
            moved = asyncio.run(admin.restore(url, source, now, skip_bad=args.skip_bad))
            _moved(f"restored {source}", moved, out)
            return 0
        target = args.target or url
        moved = asyncio.run(
            admin.copy(args.source, target, replace=args.replace, skip_bad=args.skip_bad)
        )
        _moved("copied", moved, out)
        return 0
    except (StorageError, ConfigError, OSError) as exc:
        err.write(f"error: {exc}\n")
        return 2

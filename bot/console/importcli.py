"""`python -m bot library import FILE --user ID`: a reference manager's file (.bib, RIS,
CSL-JSON) into a member's library from the terminal, with the same matching and answer as
`/library import` (`bot.library.importing`): for an operator moving a member's Zotero
collection, or for scripts. Prints the answer and exits 0, or `error: ...` and exits 2 with
nothing saved.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TextIO

from bot.config import Settings
from bot.library import Library, Refused, importing
from bot.search.engine import SearchEngine
from bot.storage.schema import StorageError
from bot.storage.store import Storage


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    lib = sub.add_parser("library", help="a member's library: import a reference file")
    actions = lib.add_subparsers(dest="library_command", metavar="ACTION", required=True)
    imp = actions.add_parser("import", help="add the papers of a .bib, .ris or CSL-JSON file")
    imp.add_argument("file", type=Path, help="the file (Zotero, Better BibTeX, Mendeley, EndNote)")
    imp.add_argument("--user", type=int, required=True, help="the member's Discord user id")
    imp.add_argument("--url", help="database URL (default: DATABASE_URL, else [storage] url)")


async def _save(
    url: str, engine: SearchEngine, user: int, name: str, prepared: importing.Prepared, limit: int
) -> str:
    storage = await Storage.open(url)
    try:
        report = await importing.save_matched(
            Library(storage), engine, user, name, prepared, max_saved=limit
        )
    finally:
        await storage.close()
    return report.text().replace("`", "")


def run(args: argparse.Namespace, settings: Settings, out: TextIO, err: TextIO) -> int:
    path: Path = args.file
    try:
        data = importing.read_path(path)
        engine = SearchEngine.load(settings)
        prepared = importing.prepare(engine, path.name, data)
        url = args.url or settings.storage.database
        limit = settings.library.max_saved
        out.write(asyncio.run(_save(url, engine, args.user, path.name, prepared, limit)) + "\n")
        return 0
    except (Refused, StorageError, OSError) as exc:
        err.write(f"error: {exc}\n")
        return 2

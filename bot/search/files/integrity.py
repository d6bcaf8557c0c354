"""The digests of a saved index and paper store, checked after start-up in the background.

Why not at start-up: hashing every array of a million-paper index (~1.4 GB) took most of a
4 s start. At start-up `BM25Index.load` and `PaperStore` check the meta and every file's size
(a truncated or swapped-in file is refused there); this thread then hashes every file. A
mismatch is never left to give wrong answers: the damaged folder's meta.json is removed (so
the next start, of this process or another sharing the folder, rebuilds it), the engine
refuses searches with a clear message, and the owner (`SearchEngine`) rebuilds in place.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from bot.papers.files import file_digest

log = logging.getLogger(__name__)


def identity(folder: Path) -> int | None:
    """The folder's inode: a rebuild renames a new folder over the path, with a new inode."""
    try:
        return folder.stat().st_ino
    except OSError:
        return None


def invalidate(folder: Path, checked: int | None) -> None:
    """Make a saved folder untrusted: without meta.json every later load rebuilds it.

    Only the folder that was checked (inode `checked`): if another load has already rebuilt
    the path meanwhile, the folder there now is a sound one and stays trusted.
    """
    if identity(folder) != checked:
        log.info("%s was rebuilt meanwhile: the new folder stays", folder)
        return
    try:
        (folder / "meta.json").unlink(missing_ok=True)
    except OSError as exc:
        log.warning("could not mark %s as damaged: %s", folder, exc)


def first_damage(checks: Sequence[tuple[Path, dict[str, str]]]) -> str | None:
    """The first file whose digest differs from the saved one, as a message; None if none."""
    for folder, digests in checks:
        for name, digest in digests.items():
            try:
                found = file_digest(folder / name)
            except OSError as exc:
                return f"{folder}: cannot read {name} ({exc})"
            if found != digest:
                return f"{folder}: {name} is damaged (checksum)"
    return None


class IntegrityCheck:
    """Hash the files of `checks` in a daemon thread; on damage, invalidate the folder that
    holds it and call `on_damage(message)` (still in that thread). `done` is set at the end,
    after `on_damage` returned."""

    def __init__(
        self, checks: Sequence[tuple[Path, dict[str, str]]], on_damage: Callable[[str], None]
    ) -> None:
        self.checks = list(checks)
        self.inodes = {folder: identity(folder) for folder, _ in self.checks}
        self.on_damage = on_damage
        self.problem: str | None = None
        self.done = threading.Event()

    def start(self) -> IntegrityCheck:
        threading.Thread(target=self.run, name="index-integrity", daemon=True).start()
        return self

    def run(self) -> None:
        try:
            for folder, digests in self.checks:
                problem = first_damage([(folder, digests)])
                if problem is not None:
                    self.problem = problem
                    log.error("%s: the saved index will be rebuilt", problem)
                    invalidate(folder, self.inodes[folder])
                    self.on_damage(problem)
                    return
            log.debug("saved index verified: %d folder(s)", len(self.checks))
        finally:
            self.done.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self.done.wait(timeout)

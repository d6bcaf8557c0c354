"""Damage met while serving: a saved record or column that does not read back as written.

Same-size damage passes the checks of every start (sizes, `PaperStore.check`'s digests of the
id files and its sample of records) when it lies elsewhere, until the digest thread reaches it.
A search that reads it first must not end in a traceback nor answer from it: the engine method
it ran in (decorated `serving`) answers `IndexDamaged` instead, and the engine marks the
store's folder untrusted and rebuilds it (`SearchEngine.damage_found`), as the digest check
does. Autocomplete (`serving_quietly`) offers nothing rather than an error.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from contextlib import suppress
from functools import wraps
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar, cast

from bot.papers.records import Paper
from bot.search.files.columns import DamagedFile
from bot.search.files.integrity import invalidate
from bot.search.files.paperstore import PaperStore, StoreError
from bot.search.results import IndexDamaged

log = logging.getLogger(__name__)

# What reading the saved store raises when its bytes are not what was written.
DAMAGE = (DamagedFile, StoreError)

P = ParamSpec("P")
R = TypeVar("R")
L = TypeVar("L", bound=list[Any])


class Damage:
    """What an engine found damaged (`problem`: it refuses to answer meanwhile), and the
    rebuild that `found` started."""

    def __init__(self) -> None:
        self.problem: str | None = None
        self._lock = threading.Lock()
        self._repair: threading.Thread | None = None

    def found(
        self, problem: str, papers: Sequence[Paper], rebuild: Callable[[], None] | None
    ) -> None:
        """Refuse from now on; make the store's folder untrusted at once (a one-shot command
        may exit before the rebuild ends: the next start rebuilds it); run `rebuild` in the
        background. Once: damage met again while refusing changes nothing."""
        with self._lock:
            if self.problem is not None:  # refused already; a rebuild is under way
                return
            self.problem = problem
        log.error("%s: refusing searches until the saved files are rebuilt", problem)
        if isinstance(papers, PaperStore):
            invalidate(papers.folder, papers.inode)
        if rebuild is not None:
            self._repair = threading.Thread(target=rebuild, name="index-rebuild", daemon=True)
            self._repair.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the rebuild `found` started, if any; True when none is running."""
        repair = self._repair
        if repair is not None:
            repair.join(timeout)
            return not repair.is_alive()
        return True


class Guarded(Protocol):
    def damage_found(self, problem: str) -> None: ...


G = TypeVar("G", bound=Guarded)


def serving(method: Callable[Concatenate[G, P], R]) -> Callable[Concatenate[G, P], R]:
    """`method`, with damage met on the way answered `IndexDamaged` (and repaired)."""

    @wraps(method)
    def guarded(engine: G, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(engine, *args, **kwargs)
        except DAMAGE as exc:
            engine.damage_found(str(exc))
            raise IndexDamaged() from exc

    return guarded


def serving_quietly(method: Callable[Concatenate[G, P], L]) -> Callable[Concatenate[G, P], L]:
    """`method`, with damage met on the way answered by an empty list (and repaired):
    autocomplete offers nothing rather than an error."""
    strict = serving(method)

    @wraps(method)
    def quiet(engine: G, /, *args: P.args, **kwargs: P.kwargs) -> L:
        with suppress(IndexDamaged):
            return strict(engine, *args, **kwargs)
        return cast(L, [])

    return quiet

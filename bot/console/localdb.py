"""The console's database and event loop, in one daemon thread.

Why a thread: the console reads commands synchronously (a blocking `input()`), yet the paper of
the day must print when it is due, between two commands. So the storage, the library and the
daily scheduler all live on one asyncio loop in a thread of their own; a command hands that
loop a coroutine and waits for its answer, and the scheduler keeps running while the console
waits for the next line.

The database opens on first use, never at start when nothing needs it: a console that only
searches creates no file.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sqlite3
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from bot.config import ConfigError
from bot.search.results import SearchError
from bot.storage.schema import StorageError
from bot.storage.store import Storage
from bot.storage.urls import parse_database_url

if TYPE_CHECKING:
    import discord

    from bot.search.engine import SearchEngine

T = TypeVar("T")


class DatabaseUnavailable(SearchError):
    """The configured database cannot be opened; the message says which and why."""


class LocalDatabase:
    """One event loop thread and one lazily opened `Storage` for the whole console."""

    def __init__(self, database: str) -> None:
        self.database = database
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._storage: Storage | None = None
        self._lock = threading.Lock()

    @property
    def opened(self) -> bool:
        return self._storage is not None

    def exists(self) -> bool:
        """Whether the database already exists, so opening it creates nothing (a server
        database always exists for us; an in-memory one never holds anything yet)."""
        if self._storage is not None:
            return True
        try:
            parsed = parse_database_url(self.database)
        except ConfigError:
            return False
        if parsed.dialect != "sqlite":
            return True
        return parsed.target != ":memory:" and Path(parsed.target).exists()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop, started on first use."""
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def serve() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                self._thread = threading.Thread(target=serve, name="console-loop", daemon=True)
                self._thread.start()
                ready.wait()
                self._loop = loop
            return self._loop

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run `coro` on the console's loop; the caller may wait for the result or not."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def wait(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the console's loop and wait for its result (errors propagate)."""
        return self.submit(coro).result()

    async def storage(self) -> Storage:
        """The open storage (on the console's loop); opened, and migrated, on first use."""
        if self._storage is None:
            try:
                self._storage = await Storage.open(self.database)
            except (OSError, sqlite3.Error, ConfigError, StorageError) as exc:
                problem = f"Cannot open the database {self.database}: {exc}"
                raise DatabaseUnavailable(problem) from exc
        return self._storage

    def run(self, make: Callable[[Storage], Coroutine[Any, Any, T]]) -> T:
        """`make(storage)` run to completion on the loop: what each command does."""

        async def go() -> T:
            return await make(await self.storage())

        return self.wait(go())

    def close(self) -> None:
        """Close the storage, stop the loop and its thread (idempotent)."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        storage, self._storage = self._storage, None
        if storage is not None:
            asyncio.run_coroutine_threadsafe(storage.close(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join()
        loop.close()


@dataclass(frozen=True, slots=True)
class ConsoleContext:
    """What every console command group works with: the database thread, the engine as it is
    now (a reload swaps it), and the console's two outputs (an embed, plain text)."""

    db: LocalDatabase
    engine: Callable[[], SearchEngine]
    show: Callable[[discord.Embed], None]
    write: Callable[[str], None]

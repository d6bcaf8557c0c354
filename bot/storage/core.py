"""The storage facade's core: one backend (a SQLite file or a PostgreSQL pool), the transaction
runner every query goes through, and the metadata table.

`bot.storage.store.Storage` builds on it; the feature stores (`bot.library.store`,
`bot.follows.store`) and the daily tables (`bot.daily.tables`) run their SQL through it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from bot.storage.schema import Conn, StorageError, current_version

T = TypeVar("T")


class Backend(Protocol):
    @property
    def dialect(self) -> str: ...

    @property
    def display(self) -> str: ...

    async def run(self, fn: Callable[[Any], T], write: bool, durable: bool) -> T: ...

    async def close(self) -> None: ...


class StorageCore:
    """Async facade over one backend (a SQLite file or a PostgreSQL pool)."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self._closed = False

    @property
    def dialect(self) -> str:
        return self._backend.dialect

    @property
    def display(self) -> str:
        """Where the data lives, without a password."""
        return self._backend.display

    @property
    def backend(self) -> Backend:
        return self._backend

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._backend.close()

    async def run(self, fn: Callable[[Conn], T], write: bool = True, durable: bool = False) -> T:
        """Run `fn` in one write transaction, or as a plain read; `durable`: fsync on SQLite.
        Every feature's queries (bot/daily/tables.py, bot/library/store.py,
        bot/follows/store.py) go through here, one transaction per call."""
        if self._closed:
            raise StorageError("storage is closed")
        return await self._backend.run(fn, write, durable)

    async def column(self, sql: str, args: tuple[Any, ...]) -> list[Any]:
        """The first column of every row a read returns, in order."""
        return await self.run(lambda c: [r[0] for r in c.execute(sql, args)], write=False)

    async def one(
        self,
        sql: str,
        args: tuple[Any, ...],
        make: Callable[[Any], T],
    ) -> T | None:
        def q(c: Conn) -> T | None:
            row = c.execute(sql, args).fetchone()
            return None if row is None else make(row)

        return await self.run(q, write=False)

    async def rows(self, sql: str, args: tuple[Any, ...], make: Callable[[Any], T]) -> list[T]:
        return await self.run(lambda c: [make(r) for r in c.execute(sql, args)], write=False)

    # -- metadata -------------------------------------------------------------------------

    async def schema_version(self) -> int:
        return await self.run(current_version)

    async def journal_mode(self) -> str:
        if self.dialect != "sqlite":
            return "postgresql"
        return str(await self.one("PRAGMA journal_mode", (), lambda r: r[0]))

    async def get_meta(self, key: str) -> str | None:
        return await self.one("SELECT value FROM meta WHERE key = ?", (key,), lambda r: r[0])

    async def set_meta(self, key: str, value: str) -> None:
        await self.run(
            lambda c: c.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )
        )

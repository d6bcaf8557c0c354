"""A list that tests can wait on: ``await recorder.wait_for(predicate, timeout)``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Recorder(Generic[T]):
    """Append-only record with async waiting for an item matching a predicate."""

    def __init__(self, what: str = "item") -> None:
        self.what = what
        self.items: list[T] = []
        self._changed: asyncio.Event | None = None

    def append(self, item: T) -> None:
        self.items.append(item)
        self.notify()

    def notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    def matching(self, predicate: Callable[[T], bool] | None = None) -> list[T]:
        return [i for i in self.items if predicate is None or predicate(i)]

    async def wait_for(
        self,
        predicate: Callable[[T], bool] | None = None,
        *,
        index: int = 0,
        timeout: float = 2.0,
        describe: str = "",
    ) -> T:
        """The ``index``-th item matching ``predicate``, waiting up to ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            found = self.matching(predicate)
            if len(found) > index:
                return found[index]
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(
                    f"timed out after {timeout}s waiting for {self.what} #{index} {describe}; "
                    f"have {len(found)} matching of {len(self.items)}: {self.items!r}"[:4000]
                )
            if self._changed is None:
                self._changed = asyncio.Event()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                continue

    async def wait_count(
        self, count: int, predicate: Callable[[T], bool] | None = None, *, timeout: float = 2.0
    ) -> list[T]:
        await self.wait_for(predicate, index=count - 1, timeout=timeout)
        return self.matching(predicate)

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> T:
        return self.items[index]

    def clear(self) -> None:
        self.items.clear()

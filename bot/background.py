"""A background loop owned by one object: started at most once, stopped by cancelling it.

The daily scheduler and the source refresh each run one such loop; this is the one place that
knows how a loop task is named, started idempotently and awaited after cancellation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any


class Background:
    """One named task running `run()`; `start` twice runs it once, `stop` waits for its end."""

    def __init__(self, name: str, run: Callable[[], Coroutine[Any, Any, None]]) -> None:
        self.name = name
        self._run = run
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if not self.running:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=self.name)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

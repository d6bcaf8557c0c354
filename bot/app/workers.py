"""Blocking work (searches, corpus loads, corpus walks) off the event loop, in daemon threads.

Why not `asyncio.to_thread`: its pool's threads are joined when the interpreter exits, so a
15 s search still running at SIGTERM held the exit for 15 s. These threads are daemons: once
the bot has answered what it could and closed, the process exits at once, and a search that
was still running is simply dropped (its user was told the bot is restarting). Work that
must finish (database writes) does not belong here: storage keeps its own thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
WORKERS = min(32, (os.cpu_count() or 1) + 4)  # as concurrent.futures sizes its pool

_Job = tuple[concurrent.futures.Future[Any], Callable[[], Any]]


class DaemonPool:
    """A fixed set of daemon threads taking jobs from one queue, started on first use."""

    def __init__(self, workers: int = WORKERS) -> None:
        self.workers = workers
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._idle = threading.Semaphore(0)  # released by a thread each time it waits for work
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., T], *args: Any) -> concurrent.futures.Future[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        context = contextvars.copy_context()
        self._jobs.put((future, lambda: context.run(fn, *args)))
        if self._idle.acquire(timeout=0):
            return future  # a waiting thread takes it
        with self._lock:
            if len(self._threads) < self.workers:
                thread = threading.Thread(
                    target=self._work, name=f"paperbot-worker-{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
        return future

    def _work(self) -> None:
        while True:
            future, job = self._jobs.get()
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(job())
                except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
                    future.set_exception(exc)
            self._idle.release()


_POOL = DaemonPool()


async def off_loop(fn: Callable[..., T], *args: Any) -> T:
    """`await off_loop(fn, *args)`: `fn(*args)` in a daemon worker thread."""
    return await asyncio.wrap_future(_POOL.submit(fn, *args))

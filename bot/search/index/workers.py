"""Forked worker processes for CPU-bound builds, which a stopping process can always end.

Why not `multiprocessing.Pool`: its workers share two locked queues. A worker killed while it
waits for a task keeps the task queue's lock for good, and `Pool.terminate()` waits for that
lock without a timeout (CPython issues 96062, 73945). At interpreter exit multiprocessing
kills every daemonic child and only then finalises pools it had not seen yet: a pool still
being built in another thread when SIGTERM arrived was finalised after its workers were
killed, and the bot's exit hung for good (reproduced: the main thread in `_help_stuff_finish`,
a replacement worker waiting on the same lock).

Here each worker has its own pipe and shares no lock with anything, so it can be killed at
any moment without harm. `stop_workers()` (the bot's SIGTERM/SIGINT handler) and an exit hook
kill every worker with SIGKILL, which no worker can block or ignore, and never wait on one:
the stop is bounded whatever the workers are doing. The build then raises `WorkersStopped`.
"""

from __future__ import annotations

import atexit
import multiprocessing as mp
import multiprocessing.util  # registers its exit hook before ours (atexit is LIFO)
import signal
import threading
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from types import TracebackType
from typing import Any, Generic, TypeVar

Task = TypeVar("Task")
Result = TypeVar("Result")

# Held while workers are forked and while they are killed: a stop never misses a worker
# that is being started, and no worker starts once the process is exiting.
_LOCK = threading.Lock()
_RUNNING: set[Workers[Any, Any]] = set()
_STATE = {"exiting": False, "hooked": False}
_END = object()  # what `imap` gets from an exhausted task iterator
EXIT_LOCK_TIMEOUT = 5.0  # seconds the exit hook waits for a fork in progress, at most


class WorkersStopped(RuntimeError):
    """The workers were killed by `stop_workers` (the process is stopping)."""


class Workers(Generic[Task, Result]):
    """Forked processes that each run `work(task)` for the tasks their pipe brings.

    Use as a context manager: leaving it ends the workers (asked to exit after a normal run,
    killed after an error or a stop).
    """

    def __init__(self, work: Callable[[Task], Result]) -> None:
        self.work = work
        self.procs: list[BaseProcess] = []
        self.conns: list[Connection] = []
        self.stopped = False

    @classmethod
    def start(cls, count: int, work: Callable[[Task], Result]) -> Workers[Task, Result]:
        """`count` forked workers; `work` reaches them through the fork, never pickled."""
        if count < 1:
            raise ValueError(f"at least one worker is needed, not {count}")
        crew = cls(work)
        try:
            with _LOCK:
                if _STATE["exiting"]:
                    raise WorkersStopped("the process is exiting")
                _hook_exit()
                _RUNNING.add(crew)
                # Workers start with the stop signals blocked, so one arriving before
                # `_worker_signals` ran waits for it instead of being lost.
                blocked = signal.pthread_sigmask(signal.SIG_BLOCK, set(_WORKER_SIGNALS))
                try:
                    for _ in range(count):
                        crew._fork()
                finally:
                    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        except BaseException:
            crew.close(graceful=False)
            raise
        return crew

    def _fork(self) -> None:
        ctx = mp.get_context("fork")
        ours, theirs = ctx.Pipe()
        proc = ctx.Process(
            target=_serve, args=(theirs, ours, self.work), name="paperbot-build", daemon=True
        )
        proc.start()
        theirs.close()
        self.procs.append(proc)
        self.conns.append(ours)

    def map(self, tasks: Sequence[Task]) -> Iterator[Result]:
        """`work(task)` for each task, in order; each task goes to the next free worker."""
        todo = deque(enumerate(tasks))
        idle = list(self.conns)
        busy: dict[Connection, int] = {}
        done: dict[int, Result] = {}
        for index in range(len(tasks)):
            while index not in done:
                while idle and todo:
                    conn = idle.pop()
                    busy[conn], task = todo.popleft()
                    self._send(conn, task)
                for ready in wait(list(busy)):
                    assert isinstance(ready, Connection)
                    done[busy.pop(ready)] = self._receive(ready)
                    idle.append(ready)
            yield done.pop(index)

    def imap(self, tasks: Iterable[Task], ahead: int = 1) -> Iterator[Result]:
        """`map` over tasks made while the workers run (a streamed build reads its corpus
        meanwhile): at most one task per worker plus `ahead` are taken from `tasks` and not
        yet answered, so making the next task overlaps their work and memory stays bounded."""
        source = iter(tasks)
        pending: deque[tuple[int, Task]] = deque()
        idle = list(self.conns)
        busy: dict[Connection, int] = {}
        done: dict[int, Result] = {}
        made = given = 0
        limit = len(self.conns) + ahead
        more = True

        def take() -> bool:
            nonlocal made, more
            task = next(source, _END)
            if task is _END:
                more = False
                return False
            pending.append((made, task))  # type: ignore[arg-type]
            made += 1
            return True

        while True:
            while idle and (pending or (more and made - given < limit)):
                if not pending and not take():
                    continue
                conn = idle.pop()
                busy[conn], task = pending.popleft()
                self._send(conn, task)
            while given in done:
                yield done.pop(given)
                given += 1
            if not busy:
                if not more:
                    return
                continue
            ready = wait(list(busy), timeout=0)
            if not ready and more and len(pending) < ahead and made - given < limit:
                take()
                continue
            for answered in ready or wait(list(busy)):
                assert isinstance(answered, Connection)
                done[busy.pop(answered)] = self._receive(answered)
                idle.append(answered)

    def beside(self, task: Task) -> Callable[[], Result]:
        """Give `task` to the first worker and return at once, so the caller works meanwhile;
        call what is returned for the answer (it waits). One task per worker at a time."""
        conn = self.conns[0]
        self._send(conn, task)
        return lambda: self._receive(conn)

    def _send(self, conn: Connection, task: Task | None) -> None:
        try:
            conn.send(task)
        except OSError as exc:
            raise self._ended() from exc

    def _receive(self, conn: Connection) -> Result:
        try:
            ok, payload = conn.recv()
        except (EOFError, OSError) as exc:
            raise self._ended() from exc
        if not ok:
            raise RuntimeError(f"a build worker failed:\n{payload}")
        return payload  # type: ignore[no-any-return]

    def _ended(self) -> Exception:
        if self.stopped:
            return WorkersStopped("build workers stopped: the process is stopping")
        codes = ", ".join(str(p.exitcode) for p in self.procs)
        return RuntimeError(f"a build worker ended unexpectedly (exit codes: {codes})")

    def kill(self) -> None:
        """SIGKILL every worker; never waits."""
        for proc in self.procs:
            proc.kill()  # a no-op for a worker already reaped

    def close(self, *, graceful: bool = True) -> None:
        """End the workers: ask them to exit after a normal run, else kill them; reap them."""
        with _LOCK:
            _RUNNING.discard(self)
        if graceful and not self.stopped:
            for conn in self.conns:
                try:
                    conn.send(None)
                except OSError:
                    self.kill()
            for proc in self.procs:
                proc.join(5)
        self.kill()
        for proc in self.procs:
            proc.join()
        for conn in self.conns:
            conn.close()

    def __enter__(self) -> Workers[Task, Result]:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close(graceful=exc_type is None)


def stop_workers() -> int:
    """Kill the workers of every build running in this process; returns how many builds.

    For a stopping process (SIGTERM, SIGINT, exit): those builds raise `WorkersStopped`.
    Bounded: SIGKILL cannot be blocked or ignored, and nothing here waits on a worker.
    """
    with _LOCK:
        crews = list(_RUNNING)
        for crew in crews:
            crew.stopped = True
            crew.kill()
    return len(crews)


def _at_exit() -> None:
    """Runs before multiprocessing's own exit hook (which joins its children without a
    timeout): no worker starts any more, and the running ones are killed."""
    if _LOCK.acquire(timeout=EXIT_LOCK_TIMEOUT):
        _STATE["exiting"] = True
        _LOCK.release()
    stop_workers()


def _hook_exit() -> None:
    if not _STATE["hooked"]:
        _STATE["hooked"] = True
        atexit.register(_at_exit)


def _serve(conn: Connection, parent_end: Connection, work: Callable[[object], object]) -> None:
    """A worker's life: `work(task)` for each task its pipe brings, until None or EOF."""
    _worker_signals()
    parent_end.close()  # only the parent holds that end: its exit reads as EOF here
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        try:
            reply: tuple[bool, object] = (True, work(task))
        except Exception:  # noqa: BLE001 - reported to the parent, which raises it
            reply = (False, traceback.format_exc())
        try:
            conn.send(reply)
        except OSError:
            return  # the parent is gone


# A forked worker dies on SIGTERM and leaves SIGINT and SIGHUP to its parent.
_WORKER_SIGNALS = {
    sig: handling
    for name, handling in (
        ("SIGTERM", signal.SIG_DFL),
        ("SIGINT", signal.SIG_IGN),
        ("SIGHUP", signal.SIG_IGN),
    )
    if (sig := getattr(signal, name, None)) is not None
}


def _worker_signals() -> None:
    """Plain signal handling in a forked worker.

    Why: a worker inherits the parent's handlers, and under the bot's event loop SIGTERM is a
    no-op there (asyncio handles it in the parent, through a wake-up socket the worker shares).
    Workers die on SIGTERM, leave SIGINT and SIGHUP to the parent, and never write to its
    socket.
    """
    signal.set_wakeup_fd(-1)
    for sig, handling in _WORKER_SIGNALS.items():
        signal.signal(sig, handling)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, set(_WORKER_SIGNALS))

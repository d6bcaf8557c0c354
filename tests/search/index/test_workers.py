"""Forked build workers: results in order, errors reported, and a stop that is always bounded."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from bot.config import PROJECT_ROOT
from bot.search.index.workers import Workers, WorkersStopped, stop_workers
from tests.procs import alive

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="fork")


def square(x: int) -> int:
    return x * x


def slow(x: int) -> int:
    time.sleep(60)
    return x


def slow_first(x: int) -> int:
    if x == 0:
        time.sleep(0.5)  # the other worker answers many tasks meanwhile
    return x * x


def fail(x: int) -> int:
    raise ValueError(f"bad task {x}")


def test_imap_reads_tasks_as_the_workers_go_and_keeps_their_order() -> None:
    """A streamed build's tasks come from a generator (the corpus being read): `imap` takes
    them only while at most `ahead` wait beyond the workers' own, and answers in order."""
    taken: list[int] = []
    answered: list[int] = []

    def tasks():  # type: ignore[no-untyped-def]
        for x in range(40):
            # Two workers, 3 ahead: at most 5 taken and not yet answered.
            assert len(taken) - len(answered) < 2 + 3
            taken.append(x)
            yield x

    with Workers.start(2, slow_first) as crew:
        for result in crew.imap(tasks(), ahead=3):
            answered.append(result)
    assert answered == [x * x for x in range(40)]
    with Workers.start(2, square) as crew:
        assert list(crew.imap(iter([]))) == []
        assert list(crew.imap(iter([5]))) == [25]


def test_results_come_in_task_order_and_the_workers_end() -> None:
    with Workers.start(3, square) as crew:
        pids = [p.pid for p in crew.procs]
        assert list(crew.map(list(range(20)))) == [x * x for x in range(20)]
    assert pids
    assert not [pid for pid in pids if pid is not None and alive(pid)]


def test_a_failing_task_raises_with_the_workers_traceback() -> None:
    with (
        pytest.raises(RuntimeError, match="ValueError: bad task 1"),
        Workers.start(2, fail) as crew,
    ):
        list(crew.map([1]))


def test_stop_workers_ends_a_running_build_at_once() -> None:
    errors: list[BaseException] = []
    crews: list[Workers[int, int]] = []

    def build() -> None:
        try:
            with Workers.start(2, slow) as crew:
                crews.append(crew)
                list(crew.map([1, 2, 3]))
        except BaseException as exc:  # noqa: BLE001 - checked below
            errors.append(exc)

    thread = threading.Thread(target=build, daemon=True)
    thread.start()
    while not crews:
        time.sleep(0.01)
    started = time.monotonic()
    assert stop_workers() == 1
    thread.join(10)
    assert not thread.is_alive()
    assert time.monotonic() - started < 10
    assert [type(e) for e in errors] == [WorkersStopped]
    assert not [p.pid for p in crews[0].procs if p.pid is not None and alive(p.pid)]
    assert stop_workers() == 0  # nothing left to stop


def test_a_worker_killed_from_outside_is_an_error_not_a_stop() -> None:
    with Workers.start(1, slow) as crew:
        results = crew.map([1])
        pid = crew.procs[0].pid
        assert pid is not None
        threading.Timer(0.5, os.kill, (pid, signal.SIGKILL)).start()
        with pytest.raises(RuntimeError, match="ended unexpectedly") as info:
            next(results)
    assert not isinstance(info.value, WorkersStopped)


# A process whose main thread returns while a daemon thread's build workers run: what the bot
# does on SIGTERM during its index build. multiprocessing's own exit hook stops its children
# with SIGTERM and joins them without a timeout; these workers cannot take SIGTERM (as a worker
# stuck before its signal handling is reset), so only our hook's SIGKILL ends them.
EXIT_WHILE_BUILDING = """
import signal, threading, time
from bot.search.index.workers import Workers, WorkersStopped

def stuck(x):
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    time.sleep(60)
    return x

crews = []

def build():
    try:
        with Workers.start(2, stuck) as crew:
            crews.append(crew)
            list(crew.map([1, 2]))
    except WorkersStopped:
        pass  # the bot's build thread hands it to an abandoned future

threading.Thread(target=build, daemon=True).start()
while not crews:
    time.sleep(0.01)
time.sleep(0.5)  # both tasks taken
print(" ".join(str(p.pid) for p in crews[0].procs), flush=True)
"""


def test_the_process_exits_at_once_while_its_workers_run() -> None:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(EXIT_WHILE_BUILDING)],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
    )
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert took < 10  # the workers' tasks take 60 s
    pids = [int(p) for p in done.stdout.split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 5
    while [pid for pid in pids if alive(pid)]:
        assert time.monotonic() < deadline, "workers left running after the exit"
        time.sleep(0.05)


def test_beside_returns_before_the_work_is_done_and_answers_when_asked(tmp_path) -> None:
    """The build merges postings while the store is finished beside it: `beside` must not
    wait for the answer. Here the work waits for a file that the caller makes only after
    `beside` returned; had `beside` waited, the work would give up and answer "blocked"."""
    go = tmp_path / "go"

    def after_go(x: int) -> int | str:
        deadline = time.monotonic() + 10
        while not go.exists():
            if time.monotonic() > deadline:
                return "blocked"
            time.sleep(0.01)
        return x * 2

    with Workers.start(1, after_go) as crew:
        answer = crew.beside(21)
        go.touch()
        assert answer() == 42

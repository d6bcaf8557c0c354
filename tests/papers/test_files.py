"""Saved files: every write is whole or not at all, readable as any file the user makes, and
leaves no temporary file behind even when its writer is killed."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.papers.files import STALE_AFTER, atomic_file, file_lock, write_jsonl


def test_write_jsonl_replaces_whole_or_not_at_all(tmp_path: Path) -> None:
    """The one atomic writer (seed conversion, `ingest --out`): a failure mid-way keeps the
    old file and leaves no temporary file behind."""
    path = tmp_path / "out.jsonl"
    assert write_jsonl(path, [{"id": "a"}, {"id": "b"}]) == 2
    assert path.read_text(encoding="utf-8") == '{"id": "a"}\n{"id": "b"}\n'

    def broken() -> Iterator[dict[str, str]]:
        yield {"id": "c"}
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_jsonl(path, broken())
    assert path.read_text(encoding="utf-8") == '{"id": "a"}\n{"id": "b"}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped): a writer killed mid-save."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_save_killed_midway_leaves_a_temp_file_the_next_write_removes(tmp_path: Path) -> None:
    """kill -9 inside `atomic_file` leaves its temporary file; the next write of the same file
    removes it (its writer is gone), and leaves alone a live writer's and other files."""
    path = tmp_path / "corpus.jsonl"
    write_jsonl(path, [{"id": "a"}])
    killed = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from bot.papers.files import atomic_file\n"
        "with atomic_file(Path(sys.argv[1])) as handle:\n"
        "    handle.write('half')\n"
        "    handle.flush()\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run([sys.executable, "-c", killed, str(path)], check=False)
    assert done.returncode == -signal.SIGKILL
    left = sorted(p.name for p in tmp_path.iterdir() if p.name != "corpus.jsonl")
    assert len(left) == 1, left  # the dead writer's temporary file
    live = tmp_path / f"corpus.jsonl.tmp-{os.getpid()}-0123abcd"  # a writer at work (this one)
    live.write_text("in progress", encoding="utf-8")
    old_style = tmp_path / "corpus.jsonl.k3j9x_2a.tmp"  # before writers named their pid
    old_style.write_text("x", encoding="utf-8")
    day_ago = time.time() - STALE_AFTER - 60
    os.utime(old_style, (day_ago, day_ago))
    fresh_old_style = tmp_path / "corpus.jsonl.q8r7s6t5.tmp"
    fresh_old_style.write_text("x", encoding="utf-8")
    # Another file's temporary file, its writer gone: not ours to judge.
    other = tmp_path / f"notes.jsonl.tmp-{_dead_pid()}-abcd1234"
    other.write_text("x", encoding="utf-8")
    foreign = tmp_path / "corpus.jsonl.tmp-backup"  # not our naming
    foreign.write_text("x", encoding="utf-8")

    write_jsonl(path, [{"id": "b"}])

    assert path.read_text(encoding="utf-8") == '{"id": "b"}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["corpus.jsonl", live.name, fresh_old_style.name, other.name, foreign.name]
    )


@pytest.fixture
def umask() -> Iterator[Callable[[int], None]]:
    """Set the process umask for one test and put the old one back."""
    old = os.umask(0o022)
    os.umask(old)
    yield os.umask
    os.umask(old)


def test_a_new_file_honours_the_umask_and_a_rewrite_keeps_the_mode(
    tmp_path: Path, umask: Callable[[int], None]
) -> None:
    """A corpus file is read by other users of the host (a separate bot user): it is created
    as any file is (0666 less the umask), and a rewrite keeps the mode the file had."""
    umask(0o022)
    fresh = tmp_path / "new.jsonl"
    write_jsonl(fresh, [{"id": "a"}])
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
    umask(0o027)
    private = tmp_path / "private.jsonl"
    write_jsonl(private, [{"id": "a"}])
    assert stat.S_IMODE(private.stat().st_mode) == 0o640
    umask(0o077)
    fresh.chmod(0o664)
    write_jsonl(fresh, [{"id": "b"}])
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o664
    with atomic_file(tmp_path / "meta.json") as handle:
        handle.write("{}")
    assert stat.S_IMODE((tmp_path / "meta.json").stat().st_mode) == 0o600  # umask 077: private


def test_writers_of_one_file_take_turns_under_its_lock(tmp_path: Path) -> None:
    """`file_lock` is exclusive between threads (and processes): a second holder waits."""
    path = tmp_path / "corpus.jsonl"
    order: list[str] = []
    inside = threading.Event()
    release = threading.Event()

    def first() -> None:
        with file_lock(path):
            order.append("first in")
            inside.set()
            release.wait(10)
            order.append("first out")

    def second() -> None:
        inside.wait(10)
        with file_lock(path):
            order.append("second in")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    inside.wait(10)
    waiting = threads[1].is_alive()
    release.set()
    for thread in threads:
        thread.join(10)
    assert waiting
    assert order == ["first in", "first out", "second in"]
    assert (tmp_path / "corpus.jsonl.lock").exists()

"""Files the bot writes (the index, the paper store, corpus files): written atomically,
and saved folders trusted only when their meta.json matches what the caller expects.

A crash or an error while saving must never leave half a file or folder that a later start
would trust (the old one stays until the new one is complete), and a stale or damaged folder
is refused with the reason so the caller rebuilds it. Every write of the project goes through
`atomic_folder`, `atomic_file` (`write_jsonl` for JSON Lines) or `atomic_path`; writers of
one file that read, merge and write it take turns under `file_lock`.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

log = logging.getLogger(__name__)

# `<name>.tmp-<pid>-<random>`: the pid says whether the writer may still be at work.
_TMP = re.compile(r"^.+\.tmp-(\d+)-[^/]+$")
STALE_AFTER = 24 * 3600.0  # a writer's folder this old is dead whatever its pid says


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold the lock of `path`: an exclusive `flock` on the sidecar `<path>.lock`.

    Why a sidecar: `path` itself is replaced by every atomic write, and a lock on a file that
    was renamed over locks nothing. `flock` is held per open file, so it excludes other
    threads as well as other processes, and the kernel drops it when a holder dies.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextmanager
def build_lock(root: Path) -> Iterator[None]:
    """Hold the build lock of the saved folders under `root` (`root/.build.lock`; one file,
    whatever the keys, and builds one at a time use less memory).

    Why: two loads may decide at once that the same folder must be built: a second shard
    process starting, or the background digest check rebuilding while a foreground load
    does. Each would rename its own copy over the other's, possibly while the other is
    opening its files. Under the lock the second one finds the first one's folder and opens
    it (double-checked), and no folder is replaced while it is being opened.
    """
    root.mkdir(parents=True, exist_ok=True)
    with file_lock(root / ".build"):
        yield


@contextmanager
def atomic_folder(folder: Path) -> Iterator[Path]:
    """A temporary folder beside `folder` to fill; renamed over `folder` when the block ends
    without an error, removed otherwise (a kill -9 leaves it: `remove_stale` clears it)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    prefix = f"{folder.name}.tmp-{os.getpid()}-"
    tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=folder.parent))
    try:
        yield tmp
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists but not ours (PermissionError), or no signals here
        return True
    return True


def remove_stale(root: Path, depth: int = 2) -> list[Path]:
    """Remove half-written folders under `root` (down to `depth` levels) left by a writer that
    was killed mid-save: its process is gone, or the folder is older than a day.

    Why the pid check: several processes (shards) may share one index folder, and one of them
    may be saving right now; only folders whose writer is gone are removed.
    """
    removed: list[Path] = []
    if not root.is_dir():
        return removed
    level = [root]
    now = time.time()
    for _ in range(depth):
        below: list[Path] = []
        for parent in level:
            try:
                children = [c for c in parent.iterdir() if c.is_dir() and not c.is_symlink()]
            except OSError:
                continue
            for child in children:
                match = _TMP.match(child.name)
                if match is None:
                    below.append(child)
                    continue
                try:
                    old = now - child.stat().st_mtime > STALE_AFTER
                except OSError:
                    continue
                if old or not _alive(int(match.group(1))):
                    shutil.rmtree(child, ignore_errors=True)
                    removed.append(child)
        level = below
    for path in removed:
        log.warning("removed %s, half-written by a save that was interrupted", path)
    return removed


# After a file's name: its temporary files, `<name>.tmp-<pid>-<8 hex>[.<suffix>]`, and what
# `tempfile.mkstemp(prefix=name + ".", suffix=".tmp")` named them before writers put their pid
# in the name (only its age tells whether such a file's writer is gone).
_FILE_TMP = re.compile(r"^\.tmp-(\d+)-[0-9a-f]{8}(?:\.\w+)?$")
_OLD_TMP = re.compile(r"^\.[a-z0-9_]{8}\.tmp$")


def remove_stale_temps(path: Path) -> list[Path]:
    """Remove the temporary files of `path` (our naming only: `<name>.tmp-<pid>-<random>`)
    whose writer is gone or that are older than STALE_AFTER; return what was removed.

    Why on the next write: a writer killed mid-save (kill -9, OOM, power loss) cannot clean
    up, and nothing else looks at a corpus folder. Another file's temporaries and files of
    any other naming are never touched.
    """
    removed: list[Path] = []
    now = time.time()
    try:
        names = [n for n in os.listdir(path.parent) if n.startswith(path.name + ".")]
    except OSError:
        return removed
    for name in names:
        rest = name[len(path.name) :]
        match = _FILE_TMP.match(rest)
        if match is None and not _OLD_TMP.match(rest):
            continue
        candidate = path.with_name(name)
        try:
            info = candidate.lstat()
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            continue
        old = now - info.st_mtime > STALE_AFTER
        if old or (match is not None and not _alive(int(match.group(1)))):
            try:
                candidate.unlink()
            except OSError as exc:
                log.warning("could not remove %s, left by an interrupted save: %s", candidate, exc)
                continue
            log.warning("removed %s, left by a save that was interrupted", candidate)
            removed.append(candidate)
    return removed


def _create_temp(path: Path, suffix: str) -> tuple[int, Path]:
    """A new temporary file beside `path`, open for writing: named for its writer's pid, with
    the mode `path` has (a new file: 0666 less the umask, as any file the user makes).

    Why not `tempfile.mkstemp`: it creates files 0600 whatever the umask, and a corpus or
    index file must stay readable by the other users of the host that read it today.
    """
    try:
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        mode = None
    for _ in range(100):
        tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}{suffix}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            continue
        if mode is not None:
            os.fchmod(fd, mode)
        return fd, tmp
    raise FileExistsError(f"no free temporary name beside {path}")


@contextmanager
def atomic_path(path: Path, suffix: str = "") -> Iterator[Path]:
    """A temporary file beside `path` (empty, ending in `suffix`) for the caller to fill; it is
    renamed over `path` when the block ends without an error, removed otherwise. Stale
    temporary files of `path` left by killed writers are removed first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(path)
    fd, tmp = _create_temp(path, suffix)
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@contextmanager
def atomic_file(path: Path) -> Iterator[TextIO]:
    """A text handle on a temporary file beside `path`, flushed to disk and renamed over `path`
    when the block ends without an error, removed otherwise: readers (a reload, a second
    process) see the old file or the new one, never half of one. The file keeps the mode
    `path` had (see `_create_temp`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(path)
    fd, tmp = _create_temp(path, "")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_jsonl(path: Path, records: Iterable[Mapping[str, Any]]) -> int:
    """`records` as JSON Lines in `path`, through `atomic_file`; returns how many were written.
    On any error (a record that is not JSON, a full disk) `path` keeps its old content."""
    count = 0
    with atomic_file(path) as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count


def read_meta(
    folder: Path, what: str, fmt: int, expect: dict[str, Any], error: type[Exception]
) -> dict[str, Any]:
    """The meta.json of a saved `what`, checked against its format and the expected key.

    Shared by the index and the paper store: both are trusted only when every key the caller
    expects (corpus digest, analyzer, parameters) matches, else `error` says what changed.
    """
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise error(f"{folder}: no readable meta.json ({exc})") from exc
    if not isinstance(meta, dict) or meta.get("format") != fmt:
        found = meta.get("format") if isinstance(meta, dict) else None
        raise error(f"{folder}: {what} format {found} != {fmt}")
    for key, value in expect.items():
        if meta.get(key) != value:
            raise error(f"{folder}: stale {what} ({key} changed)")
    return meta


DIGEST_CHUNK = 8 << 20  # bytes hashed per read


def file_digest(path: Path) -> str:
    """Why large chunks: the serving bot hashes its saved files in a background thread while
    it answers. Reading and hashing release the GIL, so each chunk is a GIL hand-off that
    delays the search thread; at 1 MB they cost the /search p50 ~1 ms at a million papers."""
    digest = hashlib.blake2b(digest_size=16)
    buffer = bytearray(DIGEST_CHUNK)
    view = memoryview(buffer)
    with path.open("rb", buffering=0) as handle:
        while size := handle.readinto(buffer):
            digest.update(view[:size])
    return digest.hexdigest()


def check_sizes(folder: Path, saved: object, names: Iterable[str], error: type[Exception]) -> None:
    """Each of `names` has the size meta.json's `files` gave it when saved, else `error`.

    The cheap half of trusting a saved folder, done at every start; the digests (a second
    per GB) are checked after start-up by `bot.search.files.integrity`.
    """
    if not isinstance(saved, dict):
        raise error(f"{folder}: meta.json lists no file sizes")
    for name in names:
        want = (saved.get(name) or {}).get("bytes")
        try:
            size = (folder / name).stat().st_size
        except OSError as exc:
            raise error(f"{folder}: cannot read {name} ({exc})") from exc
        if size != want:
            raise error(f"{folder}: {name} is {size} bytes, expected {want}")

"""A memory cgroup for one benchmark child: the limit a container runs the bot under.

Issue 17's memory target is "what a 512 MB container would kill". Counting it from /proc
(anonymous vs file-backed pages) is an argument; running the bot under a real 512 MB memory
cgroup is the check itself: the kernel charges the page cache of the memory-mapped index to the
cgroup, reclaims it under the limit, and OOM-kills only when what cannot be reclaimed exceeds it.

Needs a writable memory cgroup (root in a container with cgroup v1's memory hierarchy, or a
cgroup v2 tree with the memory controller delegated); elsewhere `cage()` says why it cannot.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

V1_ROOT = Path("/sys/fs/cgroup/memory")
V2_ROOT = Path("/sys/fs/cgroup")


@dataclass
class Cage:
    """One cgroup with a memory limit; `wrap` makes a command start inside it."""

    path: Path
    version: int  # 1 or 2

    def wrap(self, argv: list[str]) -> list[str]:
        # The shell joins the cgroup before exec, so every byte the child touches is charged.
        procs = self.path / ("tasks" if self.version == 1 else "cgroup.procs")
        return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(procs), *argv]

    def oom_kills(self) -> int:
        name = "memory.oom_control" if self.version == 1 else "memory.events"
        for line in (self.path / name).read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def peak_mb(self) -> float:
        """The cgroup's peak charge (page cache included), MB."""
        name = "memory.max_usage_in_bytes" if self.version == 1 else "memory.peak"
        with contextlib.suppress(OSError):
            return int((self.path / name).read_text()) / 2**20
        return float("nan")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.path.rmdir()


def _own_v1_cgroup() -> Path:
    """This process's place in the v1 memory hierarchy (a child of it keeps any outer limit)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _id, controllers, where = line.split(":", 2)
        if "memory" in controllers.split(","):
            return V1_ROOT / where.lstrip("/")
    return V1_ROOT


def cage(limit_mb: int) -> Cage | str:
    """A fresh cgroup limited to `limit_mb`, or the reason there can be none here."""
    name = f"paperbot-bench-{os.getpid()}"
    reasons = []
    if (V1_ROOT / "memory.limit_in_bytes").exists():
        path = _own_v1_cgroup() / name
        try:
            path.mkdir()
            (path / "memory.limit_in_bytes").write_text(str(limit_mb * 2**20))
            with contextlib.suppress(OSError):  # no swap to hide in, where swap accounting is on
                (path / "memory.memsw.limit_in_bytes").write_text(str(limit_mb * 2**20))
            return Cage(path, 1)
        except OSError as exc:
            Cage(path, 1).close()
            reasons.append(f"cgroup v1 {path.parent}: {exc.strerror}")
    controllers = V2_ROOT / "cgroup.subtree_control"
    if controllers.exists() and "memory" in controllers.read_text().split():
        path = V2_ROOT / name
        try:
            path.mkdir()
            (path / "memory.max").write_text(str(limit_mb * 2**20))
            with contextlib.suppress(OSError):
                (path / "memory.swap.max").write_text("0")
            return Cage(path, 2)
        except OSError as exc:
            Cage(path, 2).close()
            reasons.append(f"cgroup v2 {path.parent}: {exc.strerror}")
    return "; ".join(reasons) or "no memory cgroup controller is mounted"

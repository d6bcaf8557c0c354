"""Processes seen through /proc (Linux): a process's children, and whether a process lives."""

from __future__ import annotations

from pathlib import Path


def _stat(pid: int | str) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name, or None once the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def children(pid: int) -> list[int]:
    """Ids of the child processes of `pid`."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        fields = _stat(stat.parent.name)
        if fields is not None and int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    """Whether `pid` is a live process (neither gone nor a zombie)."""
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"

"""Columns of strings (paper ids, titles, first-seen stamps) kept as one UTF-8 buffer plus an
offsets array, and the sorted orders that find an id by binary search.

Why not a list of `str` and a dict: at a million papers the ids and titles alone were ~0.5 GB
of Python objects per process, built at every start. Here a saved column is a memory-mapped
file (shared by every process serving the same index, and only the pages touched count), an
id lookup is a binary search over a saved permutation (about 20 string decodes), and start-up
parses nothing.
"""

from __future__ import annotations

import bisect
import mmap
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TypeVar, overload

import numpy as np

Buffer = bytes | mmap.mmap
T = TypeVar("T")


class DamagedFile(Exception):
    """A saved file's content does not read back as it was written (same size, other bytes):
    its folder is damaged. The engine answers `IndexDamaged` and rebuilds; never a traceback."""


def line_starts(data: bytes, n: int) -> np.ndarray:
    """Where each of the `n` "\\n"-separated strings of `data` starts, plus len(data) + 1:
    string i is data[starts[i]:starts[i + 1] - 1]."""
    starts = np.empty(n + 1, dtype=np.int64)
    if n:
        breaks = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
        if breaks.shape[0] != n - 1:
            raise ValueError(f"{breaks.shape[0] + 1} lines, expected {n}")
        starts[0] = 0
        starts[1:n] = breaks + 1
    starts[n] = len(data) + 1
    return starts


def map_file(path: Path) -> Buffer:
    """`path` memory-mapped read-only (an empty file cannot be mapped: b"")."""
    with path.open("rb") as handle:
        if handle.seek(0, 2) == 0:
            return b""
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)


class Rows(Sequence[T]):
    """A read-only sequence whose rows are read on demand (`row`): indexes and slices as a
    `list` takes them, for the columns here and the paper store. `ROW` names a row in errors."""

    ROW = "row"

    def row(self, i: int) -> T:
        """Row `i`, with 0 <= i < len(self)."""
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> list[T]: ...

    def __getitem__(self, i: int | slice) -> T | list[T]:
        n = len(self)
        if isinstance(i, slice):
            return [self.row(j) for j in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"{self.ROW} index out of range")
        return self.row(i)


class StringColumn(Rows[str]):
    """`n` strings without line breaks, end to end in one buffer ("\\n" between them)."""

    ROW = "column"

    def __init__(self, data: Buffer, starts: np.ndarray, source: str = "column") -> None:
        self.data = data
        self.starts = starts
        self.source = source  # the file, for the message when it does not decode
        self._n = int(starts.shape[0]) - 1

    @classmethod
    def of(cls, strings: Sequence[str]) -> StringColumn:
        data = "\n".join(strings).encode("utf-8")
        return cls(data, line_starts(data, len(strings)))

    def raw(self, i: int) -> bytes:
        return self.data[int(self.starts[i]) : int(self.starts[i + 1]) - 1]

    def __len__(self) -> int:
        return self._n

    def row(self, i: int) -> str:
        try:
            return self.raw(i).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DamagedFile(f"{self.source}: line {i + 1} is not UTF-8 ({exc.reason})") from exc

    def __iter__(self) -> Iterator[str]:
        """Every string, decoded in one pass (a million in well under a second)."""
        if self._n:
            try:
                text = self.data[:].decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DamagedFile(f"{self.source}: not UTF-8 ({exc.reason})") from exc
            yield from text.split("\n")


class OptionalColumn(Rows[str | None]):
    """A column where the empty string stands for None (papers without a first-seen time)."""

    ROW = "column"

    def __init__(self, column: StringColumn) -> None:
        self.column = column

    def __len__(self) -> int:
        return len(self.column)

    def row(self, i: int) -> str | None:
        return self.column.row(i) or None

    def __iter__(self) -> Iterator[str | None]:
        if len(self.column.data) <= len(self.column) - 1:  # no stamps: only line breaks
            return iter([None] * len(self.column))
        return (s or None for s in self.column)


def id_orders(ids: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Positions sorted by id, and by id read backwards (for lookups by the id's end)."""
    forward = sorted(range(len(ids)), key=ids.__getitem__)
    backward = sorted(range(len(ids)), key=lambda i: ids[i][::-1])
    return np.array(forward, dtype=np.int32), np.array(backward, dtype=np.int32)


class IdLookup:
    """Paper ids to positions by binary search over saved orders (no dict of a million ids)."""

    def __init__(self, ids: Sequence[str], forward: np.ndarray, backward: np.ndarray) -> None:
        if not forward.shape[0] == backward.shape[0] == len(ids):
            raise ValueError("id orders do not fit the ids")
        self.ids, self.forward, self.backward = ids, forward, backward

    @classmethod
    def of(cls, ids: Sequence[str]) -> IdLookup:
        return cls(ids, *id_orders(ids))

    def find(self, pid: str) -> int | None:
        """The position of the paper whose id is exactly `pid`."""
        ids = self.ids
        at = bisect.bisect_left(self.forward, pid, key=lambda i: ids[int(i)])
        if at < len(ids) and ids[int(self.forward[at])] == pid:
            return int(self.forward[at])
        return None

    def ending_with(self, tail: str, most: int = 2) -> list[int]:
        """Up to `most` positions (corpus order) of the papers whose id ends with `tail`."""
        want = tail[::-1]
        ids, size = self.ids, len(tail)

        def key(i: np.int32) -> str:
            return ids[int(i)][::-1][:size]

        lo = bisect.bisect_left(self.backward, want, key=key)
        hi = bisect.bisect_right(self.backward, want, lo=lo, key=key)
        return [int(i) for i in np.sort(np.asarray(self.backward[lo:hi]))[:most]]

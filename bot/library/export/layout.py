"""What every export format shares: a reading list's entry, a file laid out as a head, one
text per paper and a tail (so a list too large for one upload is cut between papers into
complete files), and the error for a list that does not fit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.papers.records import Paper


class TooLarge(ValueError):
    """The list does not fit in the files allowed; `size` is the whole export in bytes."""

    def __init__(self, size: int, limit: int, parts: int) -> None:
        super().__init__(f"{size} bytes do not fit in {parts} file(s) of {limit} bytes")
        self.size = size


@dataclass(frozen=True, slots=True)
class Entry:
    """One paper of a reading list with the reader's own state."""

    paper: Paper
    saved_at: datetime
    read: bool


@dataclass(frozen=True, slots=True)
class Layout:
    """A file as a head, one text per paper and a tail, so it can be cut between papers."""

    head: str
    items: list[str]
    sep: str = ""
    tail: str = ""

    def text(self, items: Sequence[str] | None = None) -> str:
        return self.head + self.sep.join(self.items if items is None else items) + self.tail


def cut(layout: Layout, max_bytes: int, max_parts: int) -> list[bytes]:
    """`layout` as UTF-8 files of at most `max_bytes` each, cut between papers, each a
    complete file; TooLarge when it needs more than `max_parts` of them."""
    sizes = [len(item.encode()) for item in layout.items]
    fixed = len(layout.head.encode()) + len(layout.tail.encode())
    step = len(layout.sep.encode())
    total = fixed + sum(sizes) + step * max(0, len(sizes) - 1)
    parts: list[list[str]] = [[]]
    used = fixed
    for item, size in zip(layout.items, sizes, strict=True):
        if fixed + size > max_bytes:
            raise TooLarge(total, max_bytes, max_parts)  # one paper alone is over the limit
        if parts[-1] and used + step + size > max_bytes:
            parts.append([])
            used = fixed
            if len(parts) > max_parts:
                raise TooLarge(total, max_bytes, max_parts)
        used += size + (step if len(parts[-1]) else 0)
        parts[-1].append(item)
    return [layout.text(part).encode() for part in parts]

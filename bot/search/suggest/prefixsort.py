"""Positions into "\\n"-separated text, sorted by the text that follows them: a prefix then
finds every position where it occurs by binary search (a suffix array, restricted to the
positions a caller chooses: title starts, word starts, inner suffixes of words).

Positions are ordered by the first `DEPTH` bytes that follow them (the end of a line reads
as zero bytes), ties in position order. A prefix of at most `DEPTH` bytes then has one
contiguous range; a longer one shares a `DEPTH`-byte range whose members are in position
order, and callers check them one by one. Built with numpy (three uint64 keys and a stable
lexsort), so ten million positions sort in seconds with small temporaries.
"""

from __future__ import annotations

import bisect

import numpy as np

from bot.search.files.columns import Buffer

DEPTH = 24  # bytes of sort key (3 x uint64)
_CHUNK = 1 << 21  # positions keyed at once (bounded temporaries)


def sort_positions(data: Buffer, starts: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """`pos` ordered by the DEPTH bytes each starts (zero past its line's end), then by pos."""
    u8 = np.frombuffer(data, dtype=np.uint8)
    pos = np.asarray(pos, dtype=np.int64)
    if not pos.shape[0]:
        return pos
    if not u8.shape[0]:  # every line empty: every key is zero, so the order is by position
        return np.sort(pos)
    keys = [np.zeros(pos.shape[0], dtype=np.uint64) for _ in range(DEPTH // 8)]
    for a in range(0, pos.shape[0], _CHUNK):
        part = pos[a : a + _CHUNK]
        ends = starts[np.searchsorted(starts, part, side="right")] - 1  # the line's "\n"
        for word, key in enumerate(keys):
            out = key[a : a + _CHUNK]
            for b in range(8):
                at = part + (word * 8 + b)
                byte = u8[np.minimum(at, u8.shape[0] - 1)].astype(np.uint64)
                byte[at >= ends] = 0
                out |= byte << np.uint64(8 * (7 - b))
    order = np.lexsort((pos, *reversed(keys)))
    return pos[order]


def head(data: Buffer, pos: int, size: int) -> bytes:
    """Up to `size` bytes of `data` from `pos`, cut at the end of the line."""
    text = data[pos : pos + size]
    cut = text.find(b"\n")
    return text if cut < 0 else text[:cut]


def find_range(data: Buffer, array: np.ndarray, want: bytes) -> tuple[int, int]:
    """[lo, hi) of the positions in sorted `array` whose text starts with want[:DEPTH]."""
    key = want[:DEPTH]
    size = len(key)

    def at(p: np.int64) -> bytes:
        return head(data, int(p), size)

    lo = bisect.bisect_left(array, key, key=at)
    return lo, bisect.bisect_right(array, key, lo=lo, key=at)


def matching(data: Buffer, array: np.ndarray, want: bytes, most: int | None = None) -> np.ndarray:
    """Positions in `array` whose text starts with all of `want`; with `most`, at least the
    `most` smallest of them (all when fewer), ascending."""
    lo, hi = find_range(data, array, want)
    cand = np.asarray(array[lo:hi])
    if len(want) > DEPTH:  # one shared key: position order; check the full text of each
        size = len(want)
        return np.array([p for p in cand.tolist() if data[p : p + size] == want], np.int64)
    if most is not None and most < cand.shape[0]:
        cand = np.partition(cand, most - 1)[:most]
    return np.sort(cand)


def line_of(starts: np.ndarray, pos: np.ndarray) -> np.ndarray:
    return np.searchsorted(starts, pos, side="right") - 1

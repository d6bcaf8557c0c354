"""The paper store's records, compressed in blocks (issue 25: the store was half the disk).

Why small blocks and a dictionary: a page of hits with snippets reads ~10 records, each
from another block, so a block's decompression is paid ~10 times per search (64 records,
~87 KB: 0.33 ms each, +2.6 ms per search at 100k papers). Blocks of `BLOCK_RECORDS` records
(or `BLOCK_BYTES`, whichever comes first) decompress in ~0.03 ms; what they lose in ratio a
preset dictionary (zlib's `zdict`: up to 32 KiB of the first records, dictionary.bin) wins
back: 2.77x for 4 records with it, 2.70x for 64 without (synthetic corpus, level 6). zlib
is the stdlib's (docs/decisions.md, 8). A small LRU of decompressed blocks (`BLOCK_CACHE`
bytes, reported by `cache_sizes`) serves neighbours and a page's repeated reads.

Files: records.bin (the compressed blocks, one after another), blocks.npy (int64: where each
block starts in records.bin, then the file's size), record_at.npy (uint32, one row per
paper: its block and where it starts in the decompressed block; it ends where the next record
of its block starts, or at the block's end) and dictionary.bin. zlib's checksum makes a
damaged block a clean `DamagedFile`, never wrong bytes.
"""

from __future__ import annotations

import os
import threading
import zlib
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np
import numpy.typing as npt

from bot.search.caches import LRU
from bot.search.files.columns import DamagedFile

BLOCK_RECORDS = 4  # records per block at most
BLOCK_BYTES = 8 << 10  # uncompressed bytes per block at most (a block closes past it)
LEVEL = 6  # zlib's default
DICTIONARY_RECORDS = 256  # the first records, held back until the dictionary is made of them
DICTIONARY_BYTES = 32 << 10  # zlib's window: a longer dictionary is not used
# Decompressed blocks kept (bytes): ~190 blocks of ~5.4 KB, a dozen pages of hits.
BLOCK_CACHE = 1 << 20
FILES = ("records.bin", "blocks.npy", "record_at.npy", "dictionary.bin")


def dictionary(records: list[bytes]) -> bytes:
    """A preset dictionary from the first records: every fourth of them, the last
    `DICTIONARY_BYTES` (zlib finds matches nearest the end cheapest)."""
    return b"".join(records[::4])[-DICTIONARY_BYTES:]


def compress(data: bytes, zdict: bytes) -> bytes:
    packer = zlib.compressobj(LEVEL, zdict=zdict) if zdict else zlib.compressobj(LEVEL)
    return packer.compress(data) + packer.flush()


def decompress(data: bytes, zdict: bytes) -> bytes:
    """zlib.error when the bytes are not one whole stream made with `zdict`."""
    unpacker = zlib.decompressobj(zdict=zdict) if zdict else zlib.decompressobj()
    out = unpacker.decompress(data)
    if not unpacker.eof or unpacker.unused_data:
        raise zlib.error("the stream is cut short or followed by other bytes")
    return out


class BlockWriter:
    """Records appended, compressed a block at a time into `folder`/records.bin."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._file = (folder / "records.bin").open("wb")
        self._first: list[bytes] | None = []  # until the dictionary is made
        self._zdict = b""
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._block_at = array("q", [0])
        self._record_block = array("I")
        self._record_start = array("I")

    def add(self, record: bytes) -> None:
        if self._first is not None:
            self._first.append(record)
            if len(self._first) >= DICTIONARY_RECORDS:
                self._release()
            return
        self._record_block.append(len(self._block_at) - 1)
        self._record_start.append(self._pending_bytes)
        self._pending.append(record)
        self._pending_bytes += len(record)
        if len(self._pending) >= BLOCK_RECORDS or self._pending_bytes >= BLOCK_BYTES:
            self._flush()

    def _release(self) -> None:
        """Make the dictionary of the records held back, then add them."""
        if self._first is None:
            return
        first, self._first = self._first, None
        self._zdict = dictionary(first)
        for record in first:
            self.add(record)

    def _flush(self) -> None:
        if not self._pending:
            return
        written = self._file.write(compress(b"".join(self._pending), self._zdict))
        self._block_at.append(self._block_at[-1] + written)
        self._pending.clear()
        self._pending_bytes = 0

    def close(self) -> None:
        """Write the last block and close records.bin (the index is written by `finish`)."""
        if not self._file.closed:
            self._release()
            self._flush()
            self._file.close()
            (self.folder / "dictionary.bin").write_bytes(self._zdict)

    def finish(self, folder: Path) -> int:
        """Save blocks.npy and record_at.npy; the size of records.bin."""
        self.close()
        np.save(folder / "blocks.npy", np.frombuffer(self._block_at, dtype=np.int64).copy())
        at = np.empty((len(self._record_block), 2), dtype=np.uint32)
        at[:, 0] = np.frombuffer(self._record_block, dtype=np.uint32)
        at[:, 1] = np.frombuffer(self._record_start, dtype=np.uint32)
        np.save(folder / "record_at.npy", at)
        return int(self._block_at[-1])


class BlockReader:
    """Records of a saved store, read by pread and decompressed one block per cache miss."""

    def __init__(self, folder: Path) -> None:
        """OSError or ValueError when a file cannot be read (the caller's `StoreError`)."""
        self.folder = folder
        self.block_at: npt.NDArray[np.int64] = np.load(
            folder / "blocks.npy", mmap_mode="r", allow_pickle=False
        )
        self.record_at: npt.NDArray[np.uint32] = np.load(
            folder / "record_at.npy", mmap_mode="r", allow_pickle=False
        )
        # Read with pread, not mmap: a mapped file's pages count as this process's RSS,
        # and the kernel maps whole neighbourhoods (fault-around) on every access.
        self._file: BinaryIO = (folder / "records.bin").open("rb")
        self.zdict = (folder / "dictionary.bin").read_bytes()
        self._lock = threading.Lock()
        self.cache: LRU[int, bytes] = LRU(BLOCK_CACHE, weigh=len)

    def fits(self, n: int, size: object) -> bool:
        """The index files fit `n` records and a records.bin of `size` bytes."""
        return (
            self.block_at.ndim == 1
            and self.block_at.shape[0] >= 1
            and self.record_at.shape == (n, 2)
            and int(self.block_at[-1]) == size
        )

    def record(self, i: int) -> bytes:
        """Record i's bytes; `DamagedFile` when its block or the index does not read back."""
        block, start = (int(v) for v in self.record_at[i])
        data = self.cache.get(block)
        if data is None:
            data = self.cache.put(block, self._block(block, i))
        return _cut(data, start, self._end(i, block, len(data)), self._where(i))

    def __iter__(self) -> Iterator[bytes]:
        """Every record in order, each block decompressed once (not cached: a full pass
        would only push out the blocks that searches use)."""
        n = self.record_at.shape[0]
        block, data = -1, b""
        for i in range(n):
            b, start = (int(v) for v in self.record_at[i])
            if b != block:
                block, data = b, self._block(b, i)
            yield _cut(data, start, self._end(i, b, len(data)), self._where(i))

    def _end(self, i: int, block: int, size: int) -> int:
        if i + 1 < self.record_at.shape[0] and int(self.record_at[i + 1, 0]) == block:
            return int(self.record_at[i + 1, 1])
        return size

    def _where(self, i: int) -> str:
        return f"{self.folder}: records.bin: paper {i + 1}"

    def _block(self, block: int, i: int) -> bytes:
        """Block `block` decompressed, for record i (named in the error)."""
        where = f"{self._where(i)} does not decode (block {block + 1}"
        if not 0 <= block < self.block_at.shape[0] - 1:
            raise DamagedFile(f"{where} does not exist)")
        start, end = int(self.block_at[block]), int(self.block_at[block + 1])
        if not 0 <= start <= end:
            raise DamagedFile(f"{where} has a negative size)")
        try:
            return decompress(self._read(start, end), self.zdict)
        except zlib.error as exc:  # the checksum or the stream: bytes changed on disk
            raise DamagedFile(f"{where}: {exc})") from exc

    def _read(self, start: int, end: int) -> bytes:
        if hasattr(os, "pread"):
            return os.pread(self._file.fileno(), end - start, start)
        with self._lock:  # no pread (Windows): seek + read, one reader at a time
            self._file.seek(start)
            return self._file.read(end - start)


def _cut(data: bytes, start: int, end: int, where: str) -> bytes:
    if not 0 <= start <= end <= len(data):
        raise DamagedFile(f"{where} lies outside its block")
    return data[start:end]

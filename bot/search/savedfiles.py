"""Files saved next to the corpus (the index, the paper store): written atomically, trusted
only when their meta.json matches what the caller expects.

A crash while saving must never leave half a folder that a later start would trust, and a
stale or damaged folder is refused with the reason so the caller rebuilds it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_folder(folder: Path) -> Iterator[Path]:
    """A temporary folder beside `folder` to fill; renamed over `folder` when the block ends
    without an error, removed otherwise."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
    try:
        yield tmp
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def read_meta(folder: Path, what: str, fmt: int, expect: dict, error: type[Exception]) -> dict:
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


def file_digest(path: Path) -> str:
    digest = hashlib.blake2b(digest_size=16)
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()

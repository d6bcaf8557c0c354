"""Saved files: every write is whole or not at all."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.papers.files import write_jsonl


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

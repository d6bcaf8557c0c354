"""Issue 17 (start-up): an unchanged corpus is not hashed again at every start.

The saved index records the corpus files' stamp (path, size, mtime, inode) beside the digest
that keys it; a start with the same stamp takes that digest, any change hashes again.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

import bot.search.files.opening
from bot.config import load_settings
from bot.search.engine import SearchEngine
from tests.conftest import ICML


def test_unchanged_corpus_is_not_hashed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(ICML.read_bytes())
    settings = load_settings(env={}).with_corpus([corpus])
    settings = replace(settings, corpus=replace(settings.corpus, index_dir=tmp_path / "idx"))
    first = SearchEngine.load(settings)
    hashed: list[list[Path]] = []
    real = bot.search.files.opening.corpus_digest

    def counting(files, exclude_status):  # type: ignore[no-untyped-def]
        hashed.append(list(files))
        return real(files, exclude_status)

    monkeypatch.setattr(bot.search.files.opening, "corpus_digest", counting)
    again = SearchEngine.load(settings)
    assert hashed == []
    assert again.search("sinkhorn").hits[0].paper.id == first.search("sinkhorn").hits[0].paper.id
    # Same size, new content and mtime: hashed again, and a new index for the new content.
    lines = ICML.read_text(encoding="utf-8").splitlines()
    corpus.write_text("\n".join([lines[1], lines[0], *lines[2:]]) + "\n", encoding="utf-8")
    stat = corpus.stat()
    os.utime(corpus, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    changed = SearchEngine.load(settings)
    assert hashed == [[corpus]]
    assert changed.papers[0].id == first.papers[1].id
    assert len([p for p in (tmp_path / "idx").iterdir() if p.is_dir()]) == 2

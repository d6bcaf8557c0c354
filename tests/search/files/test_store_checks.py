"""Issue 26 item 6: same-size damage to the saved paper store. What every start checks
(`PaperStore.check`) keeps a damaged store from giving the first answers; damage it cannot
see (a record between its samples) is found when read, answered `IndexDamaged` and rebuilt,
never a traceback."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bot.search.engine import SearchEngine
from bot.search.files import blocks
from bot.search.files.integrity import IntegrityCheck
from bot.search.files.paperstore import PaperStore, StoreError, sample_positions
from bot.search.results import IndexDamaged
from tests.search.files.test_integrity import settings_for


@pytest.fixture
def no_digest_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """The digest check finds any damage after start-up; here it never runs, so what is
    tested is the start-up check and the reads alone, with no race against the thread."""

    def start(check: IntegrityCheck) -> IntegrityCheck:
        check.done.set()
        return check

    monkeypatch.setattr(IntegrityCheck, "start", start)


def saved_store(tmp_path: Path) -> tuple[Path, PaperStore]:
    """A saved index and store of the test corpus, and the store opened as a start opens it."""
    settings = settings_for(tmp_path)
    engine = SearchEngine.load(settings)
    assert isinstance(engine.papers, PaperStore)
    return engine.papers.folder, engine.papers


def unsampled(n: int) -> int:
    """A paper `PaperStore.check` does not decode."""
    return min(set(range(n)) - set(sample_positions(n)))


def flip(path: Path, at: int) -> None:
    """Every bit of two bytes at `at` inverted, the size unchanged."""
    data = bytearray(path.read_bytes())
    data[at : at + 2] = bytes(b ^ 0xFF for b in data[at : at + 2])
    path.write_bytes(bytes(data))


def overwrite(path: Path, start: int, end: int) -> None:
    data = bytearray(path.read_bytes())
    data[start:end] = b"\xff" * (end - start)
    path.write_bytes(bytes(data))


def test_the_start_up_check_refuses_a_store_damaged_in_place(tmp_path: Path) -> None:
    """Records overwritten whole (a sample finds them), two ids swapped (their digest)."""
    folder, store = saved_store(tmp_path)
    store.check()  # a sound store passes
    expect = store.meta
    records = folder / "records.bin"
    overwrite(records, 0, records.stat().st_size)
    with pytest.raises(StoreError, match=r"records\.bin: paper 1 does not decode"):
        PaperStore(folder, expect).check()
    ids = folder / "ids.txt"  # checked first: records.bin's damage does not matter
    lines = ids.read_bytes().split(b"\n")
    lines[3], lines[4] = lines[4], lines[3]
    ids.write_bytes(b"\n".join(lines))
    with pytest.raises(StoreError, match=r"ids\.txt is damaged"):
        PaperStore(folder, expect).check()


def test_a_block_damaged_between_the_samples_is_refused_then_rebuilt(
    tmp_path: Path, no_digest_thread: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 25: bytes flipped inside one compressed block (one record per block here, so
    the start-up sample misses it): zlib's checksum refuses it when read."""
    monkeypatch.setattr(blocks, "BLOCK_RECORDS", 1)
    folder, store = saved_store(tmp_path)
    pos = unsampled(len(store))
    paper = store[pos]
    block_at = np.load(folder / "blocks.npy")
    assert len(block_at) == len(store) + 1
    start, end = int(block_at[pos]), int(block_at[pos + 1])
    flip(folder / "records.bin", (start + end) // 2)
    engine = SearchEngine.load(settings_for(tmp_path))  # the sample misses it
    assert engine.damaged is None
    with pytest.raises(IndexDamaged):
        engine.search(paper.title)
    assert (engine.damaged or "").startswith(
        f"{folder}: records.bin: paper {pos + 1} does not decode (block {pos + 1}: Error -3 "
    )
    assert not (folder / "meta.json").exists()  # the next start rebuilds, whatever happens
    with pytest.raises(IndexDamaged):
        engine.paper(paper.id)
    assert engine.wait_verified(timeout=60)
    assert engine.damaged is None
    assert engine.paper(paper.id) == paper
    assert engine.search(paper.title).hits[0].paper == paper


def test_a_damaged_title_offers_no_completion_and_is_rebuilt(
    tmp_path: Path, no_digest_thread: None
) -> None:
    folder, store = saved_store(tmp_path)
    pos = unsampled(len(store))
    title = store.titles[pos]
    starts = np.load(folder / "titles_at.npy")
    overwrite(folder / "titles.txt", int(starts[pos]), int(starts[pos + 1]) - 1)
    engine = SearchEngine.load(settings_for(tmp_path))
    assert engine.suggest(title[:12]) == []  # the title index finds it; its title is damaged
    assert engine.damaged == f"{folder / 'titles.txt'}: line {pos + 1} is not UTF-8 " + (
        "(invalid start byte)"
    )
    assert engine.wait_verified(timeout=60)
    assert (store.ids[pos], title) in engine.suggest(title[:12])

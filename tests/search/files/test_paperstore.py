import json

import numpy as np
import pytest

from bot.papers.corpus import load_corpus
from bot.search.files.columns import DamagedFile
from bot.search.files.paperstore import PaperStore, StoreError, record_bytes
from bot.search.files.storewriter import save_store, storable
from tests.conftest import ICML, TEST_DATA

META = {"corpus": "abc"}


@pytest.fixture
def papers():
    return load_corpus([ICML, TEST_DATA / "iclr2018_sample.json"]).papers


def test_round_trip_gives_equal_papers(tmp_path, papers):
    save_store(tmp_path / "papers", papers, META)
    store = PaperStore(tmp_path / "papers", META)
    assert len(store) == len(papers)
    assert list(store) == papers
    assert store[3] == papers[3]
    assert store[-1] == papers[-1]
    assert store[1:3] == papers[1:3]
    assert list(store.ids) == [p.id for p in papers]
    assert store.venues == ["ICLR 2018", "ICML 2026"]
    with pytest.raises(IndexError):
        store[len(papers)]


def test_stale_and_damaged_stores_are_refused(tmp_path, papers):
    folder = tmp_path / "papers"
    save_store(folder, papers, META)
    with pytest.raises(StoreError, match="stale paper store"):
        PaperStore(folder, {"corpus": "other"})
    records = folder / "records.bin"
    records.write_bytes(records.read_bytes()[:-10])
    with pytest.raises(StoreError, match=r"records\.bin is"):
        PaperStore(folder, META)
    (folder / "meta.json").write_text("[]", encoding="utf-8")
    with pytest.raises(StoreError, match="format"):
        PaperStore(folder, META)


def test_line_breaks_in_titles_rule_the_store_out(papers):
    from dataclasses import replace

    assert storable(papers)
    assert not storable([replace(papers[0], title="two\nlines")])


def test_records_in_many_blocks_read_back_and_the_block_cache_stays_bounded(
    tmp_path, papers, monkeypatch
):
    """Issue 25: blocks closed by count and by size; row, iteration and the LRU agree."""
    from bot.search.files import blocks

    monkeypatch.setattr(blocks, "BLOCK_RECORDS", 3)
    monkeypatch.setattr(blocks, "BLOCK_BYTES", 2_000)
    monkeypatch.setattr(blocks, "BLOCK_CACHE", 6_000)
    save_store(tmp_path / "papers", papers, META)
    store = PaperStore(tmp_path / "papers", META)
    at = store.records.record_at
    assert int(at[:, 0].max()) > len(papers) // 3  # the size closed some blocks early
    assert [store.row(i) for i in range(len(papers))] == papers
    assert list(store) == papers
    cache = store.records.cache
    assert 0 < cache.size <= cache.bound == 6_000
    assert (tmp_path / "papers" / "records.bin").stat().st_size < sum(
        len(record_bytes(p)) for p in papers
    )


def test_a_damaged_block_or_block_index_is_a_damaged_file(tmp_path, papers):
    """Bytes flipped inside a compressed block, or a record's block out of range: a
    `DamagedFile` naming the paper, never a traceback or another paper."""
    folder = tmp_path / "papers"
    save_store(folder, papers, META)
    records = folder / "records.bin"
    data = bytearray(records.read_bytes())
    block_at = np.load(folder / "blocks.npy")
    data[int(block_at[1] + block_at[2]) // 2] ^= 0xFF  # inside the second block
    records.write_bytes(bytes(data))
    store = PaperStore(folder, META)
    assert store.row(0) == papers[0]  # the first block is sound
    first = int(np.flatnonzero(store.records.record_at[:, 0] == 1)[0])  # of the second
    where = rf"records\.bin: paper {first + 1} does not decode"
    with pytest.raises(DamagedFile, match=where + r" \(block 2: "):
        store.row(first)
    with pytest.raises(DamagedFile, match=where):
        list(store)
    save_store(folder, papers, META)
    at = np.load(folder / "record_at.npy")
    at[2, 0] = 999
    np.save(folder / "record_at.npy", at)
    with pytest.raises(DamagedFile, match=r"paper 3 does not decode \(block 1000 does not exist"):
        PaperStore(folder, META).row(2)


def test_a_store_of_the_previous_format_is_refused(tmp_path, papers):
    """Format 6 kept records uncompressed: read as blocks it would be garbage, so it is
    refused (and rebuilt by the caller), never misread."""
    folder = tmp_path / "papers"
    save_store(folder, papers, META)
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    (folder / "meta.json").write_text(json.dumps(dict(meta, format=6)), encoding="utf-8")
    with pytest.raises(StoreError, match="paper store format 6 != 7"):
        PaperStore(folder, META)


def test_an_empty_store_and_one_past_the_dictionary_read_back(tmp_path, papers, monkeypatch):
    """The first records wait for the dictionary: none at all, or more than it holds back."""
    from bot.search.files import blocks

    save_store(tmp_path / "empty", [], META)
    assert list(PaperStore(tmp_path / "empty", META)) == []
    monkeypatch.setattr(blocks, "DICTIONARY_RECORDS", 5)
    save_store(tmp_path / "papers", papers, META)
    store = PaperStore(tmp_path / "papers", META)
    assert (tmp_path / "papers" / "dictionary.bin").read_bytes()
    assert list(store) == papers
    assert [store.row(i) for i in range(len(papers) - 1, -1, -1)] == papers[::-1]

import pytest

from bot.papers.corpus import load_corpus
from bot.search.files.paperstore import PaperStore, StoreError
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

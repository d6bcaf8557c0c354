"""Issue 17 (start-up) with issue 12 item 6's guarantee: the saved index and paper store are
checked by size at start-up and by digest right after it; damage found then is never left to
give wrong answers: the engine refuses, rebuilds in place, and the next start rebuilds too.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bot.config import load_settings
from bot.search.engine import SearchEngine
from bot.search.files.integrity import IntegrityCheck
from bot.search.files.paperstore import digests
from bot.search.results import IndexDamaged
from tests.conftest import ICML


def settings_for(tmp_path: Path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(ICML.read_bytes())
    settings = load_settings(env={}).with_corpus([corpus])
    return replace(settings, corpus=replace(settings.corpus, index_dir=tmp_path / "idx"))


def flip_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2 + 7
    data[middle] ^= 0x5A
    path.write_bytes(bytes(data))


def test_a_corrupted_index_array_is_found_after_start_up_and_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = settings_for(tmp_path)
    first = SearchEngine.load(settings)
    expected = [(h.paper.id, h.score) for h in first.search("sinkhorn transport").hits]
    (folder,) = [p for p in (tmp_path / "idx").iterdir() if p.is_dir()]
    flip_middle(folder / "sat.npy")  # same size: start-up cannot tell, the digest can
    caplog.set_level("INFO")
    engine = SearchEngine.load(settings)
    assert engine.wait_verified(timeout=60)
    assert f"{folder}: sat.npy is damaged (checksum)" in caplog.text
    assert engine.damaged is None
    assert [(h.paper.id, h.score) for h in engine.search("sinkhorn transport").hits] == expected
    # The folder was rewritten: the next start trusts it and finds nothing wrong.
    caplog.clear()
    again = SearchEngine.load(settings)
    assert again.wait_verified(timeout=60)
    assert "damaged" not in caplog.text
    assert "saved index" in caplog.text


def test_damage_that_cannot_be_rebuilt_is_refused_not_served(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    SearchEngine.load(settings)  # builds and saves
    engine = SearchEngine.load(settings)  # from the saved index and store
    assert engine.wait_verified(timeout=60)
    paper = engine.papers[0]
    (folder,) = [p for p in (tmp_path / "idx").iterdir() if p.is_dir()]
    store = folder / "papers"
    meta = engine.papers.meta  # type: ignore[attr-defined]
    flip_middle(store / "records.bin")
    settings.corpus.files[0].unlink()  # nothing to rebuild from
    IntegrityCheck([(store, digests(meta))], lambda p: engine._rebuild(settings, p)).run()
    assert engine.damaged == f"{store}: records.bin is damaged (checksum)"
    assert not (store / "meta.json").exists()  # every later start rebuilds the store
    with pytest.raises(IndexDamaged, match="integrity check"):
        engine.search("sinkhorn")
    with pytest.raises(IndexDamaged):
        engine.paper(paper.id)
    assert engine.suggest("sinkhorn") == []


def test_loads_that_race_to_build_one_folder_build_it_once(tmp_path: Path, monkeypatch) -> None:
    """Two shards starting at once, or the digest check rebuilding while a foreground load
    does: the build lock makes the later ones open the first one's folder, not replace it
    while it is being opened."""
    import threading
    import time

    import bot.search.files.opening as loading

    settings = settings_for(tmp_path)
    builds: list[int] = []
    real = loading.build_saved

    def slow_build(*args, **kwargs):
        builds.append(threading.get_ident())
        time.sleep(0.3)  # every racer has looked at the folder by now
        return real(*args, **kwargs)

    monkeypatch.setattr(loading, "build_saved", slow_build)
    engines: list[SearchEngine] = []
    errors: list[BaseException] = []

    def load() -> None:
        try:
            engines.append(SearchEngine.load(settings))
        except BaseException as exc:  # noqa: BLE001 - reported by the assert below
            errors.append(exc)

    racers = [threading.Thread(target=load) for _ in range(4)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    assert errors == []
    assert len(builds) == 1
    answers = {tuple(h.paper.id for h in e.search("sinkhorn").hits) for e in engines}
    assert len(engines) == 4
    assert len(answers) == 1


def test_damage_found_in_a_folder_already_rebuilt_leaves_the_new_one_trusted(
    tmp_path: Path,
) -> None:
    from bot.search.files.integrity import identity, invalidate

    settings = settings_for(tmp_path)
    SearchEngine.load(settings)
    (folder,) = [p for p in (tmp_path / "idx").iterdir() if p.is_dir()]
    checked = identity(folder)
    rebuilt = folder.with_name(folder.name + ".new")
    rebuilt.mkdir()
    for path in folder.iterdir():
        path.rename(rebuilt / path.name)
    folder.rmdir()
    rebuilt.rename(folder)
    invalidate(folder, checked)
    assert (folder / "meta.json").is_file()
    invalidate(folder, identity(folder))
    assert not (folder / "meta.json").exists()


def test_a_rebuild_swaps_every_part_and_the_caches_built_on_them(tmp_path: Path) -> None:
    """The rebuilt parts replace the damaged ones in one store: the same engine object
    serves them, and nothing built on the damaged parts (speller, authors) survives."""
    settings = settings_for(tmp_path)
    SearchEngine.load(settings)  # builds and saves
    engine = SearchEngine.load(settings)
    assert engine.wait_verified(timeout=60)
    expected = [(h.paper.id, h.score) for h in engine.search("sinkhorn transport").hits]
    damaged_parts, speller = engine._parts, engine.speller
    authors = engine.lookups.authors
    assert engine.speller is speller  # built once, then cached on the parts
    engine._rebuild(settings, "test damage")
    assert engine.damaged is None
    assert engine._parts is not damaged_parts
    assert engine.index is engine._parts.index is engine.filters.index
    assert engine.papers is engine.lookups.papers is engine.filters.lookups.papers
    assert engine.speller is not speller
    assert engine.lookups.authors is not authors
    assert [(h.paper.id, h.score) for h in engine.search("sinkhorn transport").hits] == expected

"""Issue 17 (build from text): the built index and paper store are the same, file for file,
whatever the build path (streamed in runs of any size, in workers or not, or in memory), and
the same as before the build was streamed and made faster.

`PINNED` holds the digests of every saved file as the build before issue 17's speed work
wrote them for `write_build_corpus` (tests/search/buildcorpus.py); any change to a saved byte
shows here. The postings are also checked against a plain reference computed here from the
analyzer (term ids in order of first occurrence, per-document counts, positions), and the
load problems are reported by `file:line` as the corpus reader finds them.

Issue 29 changed the pins once: nine generated records copy a sample paper's title and
authors, so each is merged with it as one work (`bot.papers.versions`).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import bot.search.analysis.analyzer
import bot.search.files.opening
import bot.search.index.build
import bot.search.index.streamed
from bot.config import Settings, load_settings
from bot.papers.corpus import load_corpus
from bot.search.analysis.analyzer import Analyzer, raw_words
from bot.search.engine import SearchEngine
from bot.search.files.blocks import decompress
from bot.search.files.paperstore import PaperStore
from bot.search.index.build import Partial
from bot.search.index.postings import BM25Index
from bot.search.index.workers import Workers
from bot.search.parts import doc_text
from tests.conftest import ICML
from tests.search.buildcorpus import write_build_corpus

PINNED = {
    # Issue 28.5: scripts, fractions and citations render with their meaning, so the words of
    # abstracts with them changed (`cit` is gone, `ℝ^(n × d)` is three words, not `rn`).
    "index": {
        "block_max": "6d24aa656c812bb208aa459262a1ad66",
        "block_rows": "28c1b59be7ca2e623c49df486e302f3d",
        "doc_ids": "e1cd7520f72d93553ddfc4b76f311be6",
        "doc_len": "20cf8f895e736c553979f079db34274c",
        "indptr": "bf537de9e9042db15b4ce1654d23dfb7",
        # Index format 6: positions of adjacent pairs of frequent terms (bot/search/index/pairs).
        "pair_doc_ids": "055482e3f5b2acb9a9fdd0251461ee60",
        "pair_indptr": "4d74e4d2c5fa4573ed8ffeb81e212420",
        "pair_keys": "a12d7d6e27f4dd71acc67e7edbe77429",
        "pair_pos_indptr": "02bc5ce45e2f1b307cfcd4ba47a7e2cc",
        "pair_positions": "479d02815b6f242f807e140b87fbdfc1",
        "pair_terms": "add242bb2eda4b174acd168101fccb32",
        "pair_tfs": "49c8aba46bc0c0b9c2ea2eeafdb96613",
        "pos_indptr": "ef41823ed88bcee5b758e281af1191ef",
        "positions": "efd0b6a522ee96d159f13a5e6a712ed8",
        "sat": "824c9a8d2ab5327bb7e552db1d758c1d",
        "term_max": "206aee54e02ba6a09a2bd3b9d03dd174",
        "tfs": "abe42cf62f884203a5d7a420c8d871a9",
        "vocab": "26045d3201d94ff3d7408df60347ae08",
    },
    "store": {
        "added.txt": "4cc6e6aeb3ba24049e0f460217cb09e7",
        "added_at.npy": "03e64667f1d7dbf5b0947d5f9a710522",
        "authors.jsonl": "6b565a64cb216b5c53fb6eaee39c8a4e",
        "folded.txt": "163cb340b9ef2e5e53e5bf1f523920d2",
        "folded_at.npy": "b2396b7d1c41a033af9b948394699dab",
        "id_backward.npy": "b2aa921582a926100144e6eb90f3fa90",
        "id_order.npy": "763151e008d577d7ea1d1dd683736328",
        "ids.txt": "944a4b3d1fb285c5bdf7bc6f6ed96239",
        "ids_at.npy": "7d33a02923eb486fe1e1f3a88a0ec6ab",
        "inner_docs.npy": "b2da876e7eb0486d10e317da69028843",
        "inner_ptr.npy": "cf498ff7c8090c380e51c932c65db1e1",
        "inner_sorted.npy": "8d29f458c5d5d8878849f4213fab90e4",
        "inner_vocab.txt": "deee047c8297744b08a2723094718382",
        "inner_vocab_at.npy": "727ede226fc23e13ece4624cf1d3a3ff",
        # Issue 25: records compressed in blocks. Their compressed bytes (records.bin) and
        # where the blocks start (blocks.npy) are zlib's, which may differ by zlib build, so
        # what is pinned is the decompressed records (the same bytes format 6 saved
        # uncompressed) and the block count; record_at.npy and dictionary.bin are zlib's no
        # matter.
        "blocks.npy": "110 blocks",
        "dictionary.bin": "790c419120aea89d624bd5621e83035c",
        "record_at.npy": "ddc3638585354f033e20b52c6b802b13",
        "records.bin": "3423b2f45ad7983b22cd0e0c4fdbf5ea",
        "title_heads.npy": "1820ff939048ff1407e2204aabe675f4",
        "title_words.npy": "c0bf0213cc758bcd2bfa1f166ab38292",
        "titles.txt": "79422fa9e82265003ffb97e05e32d680",
        "titles_at.npy": "b2396b7d1c41a033af9b948394699dab",
        "venue_of.npy": "80e835df0132d51ca4c5645faeda3741",
        "year_of.npy": "dc276c058d26e8649757a74096c0d67d",
    },
}


def settings_for(files: list[Path], index_dir: Path) -> Settings:
    settings = load_settings(env={}).with_corpus(files)
    # The ranking settings PINNED was saved with (issue 27 changed the defaults).
    search = replace(settings.search, k1=1.5, title_weight=2)
    return replace(settings, search=search, corpus=replace(settings.corpus, index_dir=index_dir))


def saved_digests(index_dir: Path) -> dict[str, dict[str, str]]:
    (folder,) = [p for p in index_dir.iterdir() if p.is_dir()]
    index = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    store = json.loads((folder / "papers" / "meta.json").read_text(encoding="utf-8"))
    pinned = {name: entry["digest"] for name, entry in store["files"].items()}
    block_at = np.load(folder / "papers" / "blocks.npy")
    data = (folder / "papers" / "records.bin").read_bytes()
    zdict = (folder / "papers" / "dictionary.bin").read_bytes()
    records = b"".join(decompress(data[a:b], zdict) for a, b in itertools.pairwise(block_at))
    pinned["records.bin"] = hashlib.blake2b(records, digest_size=16).hexdigest()
    pinned["blocks.npy"] = f"{len(block_at) - 1} blocks"
    return {"index": index["digests"], "store": pinned}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return write_build_corpus(tmp_path_factory.mktemp("corpus"))


def test_the_streamed_build_saves_the_pinned_files(corpus: list[Path], tmp_path: Path) -> None:
    engine = SearchEngine.load(settings_for(corpus, tmp_path / "idx"))
    assert saved_digests(tmp_path / "idx") == PINNED
    assert isinstance(engine.papers, PaperStore)  # streamed: served from the saved store
    assert len(engine.papers) == 429 - 9  # nine versions merged
    assert engine.search("sinkhorn").hits


@pytest.mark.parametrize("chunk", [1, 7, 10_000])
def test_runs_of_any_size_in_workers_save_the_pinned_files(
    corpus: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """Run boundaries anywhere (every paper, every 7th, none: one run larger than the
    corpus), tokenised by two forked workers from the first run on."""
    monkeypatch.setattr(bot.search.index.streamed, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(bot.search.index.streamed, "CHUNK", chunk)
    forked: list[int] = []
    real = Workers.start

    def counting(count: int, work: Callable[[list[str]], Partial]) -> Workers[Any, Any]:
        forked.append(count)
        return real(count, work)

    monkeypatch.setattr(Workers, "start", counting)
    monkeypatch.setattr(bot.search.index.streamed, "_cpu_count", lambda: 2)
    SearchEngine.load(settings_for(corpus, tmp_path / "idx"))
    assert forked == [2, 1]  # the tokenisers, then the store's finish beside the merge
    assert saved_digests(tmp_path / "idx") == PINNED
    assert not list(tmp_path.glob("idx/*/runs"))  # the spilled runs are gone


@pytest.mark.parametrize("step", [7, 1000])
def test_saturations_by_blocks_of_any_size_save_the_pinned_files(
    corpus: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: int
) -> None:
    """Block edges anywhere in a term's postings: the term maxima gathered block by block,
    and the block bounds read by ranges, are those of the whole arrays."""
    monkeypatch.setattr(bot.search.index.streamed, "STEP", step)
    SearchEngine.load(settings_for(corpus, tmp_path / "idx"))
    assert saved_digests(tmp_path / "idx") == PINNED


def test_the_in_memory_build_saves_the_pinned_files(
    corpus: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the streamed build cannot write (it raised OSError), the corpus is read into
    memory, tokenised by forked workers and saved as before: the same files."""

    def unwritable(*args: object, **kwargs: object) -> None:
        raise OSError("read-only file system")

    monkeypatch.setattr(bot.search.files.opening, "build_saved", unwritable)
    monkeypatch.setattr(bot.search.index.build, "PARALLEL_MIN_DOCS", 1)
    engine = SearchEngine.load(settings_for(corpus, tmp_path / "idx"))
    assert not isinstance(engine.papers, PaperStore)
    assert saved_digests(tmp_path / "idx") == PINNED


def test_a_paper_the_store_cannot_hold_falls_back_to_memory(tmp_path: Path) -> None:
    """An id with a line break cannot be saved one per line: no store, no half-written
    folder, and the engine still serves every paper from memory."""
    corpus = tmp_path / "odd.jsonl"
    lines = ICML.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[3])
    lines[3] = json.dumps(dict(record, id="two\nlines"))
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    engine = SearchEngine.load(settings_for([corpus], tmp_path / "idx"))
    assert not isinstance(engine.papers, PaperStore)
    assert len(engine.papers) == len(lines)
    (folder,) = [p for p in (tmp_path / "idx").iterdir() if p.is_dir()]
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == []
    assert engine.paper("two\nlines").id == "two\nlines"


def test_postings_agree_with_a_plain_reference(corpus: list[Path], tmp_path: Path) -> None:
    papers = load_corpus(corpus).papers
    analyzer = Analyzer()
    docs = [analyzer(doc_text(p, 2)) for p in papers]
    vocab: dict[str, int] = {}
    for tokens in docs:
        for term in tokens:
            vocab.setdefault(term, len(vocab))
    postings: dict[int, list[tuple[int, int, list[int]]]] = {t: [] for t in vocab.values()}
    for doc, tokens in enumerate(docs):
        where: dict[str, list[int]] = {}
        for offset, term in enumerate(tokens):
            where.setdefault(term, []).append(offset)
        for term, offsets in where.items():
            postings[vocab[term]].append((doc, len(offsets), offsets))
    engine = SearchEngine.load(settings_for(corpus, tmp_path / "idx"))
    index: BM25Index = engine.index
    assert index.vocab == vocab
    assert index.doc_len.tolist() == [len(t) for t in docs]
    for tid, plist in postings.items():
        a, b = int(index.indptr[tid]), int(index.indptr[tid + 1])
        assert index.doc_ids[a:b].tolist() == [d for d, _tf, _o in plist]
        assert index.tfs[a:b].tolist() == [tf for _d, tf, _o in plist]
        p, q = int(index.pos_indptr[tid]), int(index.pos_indptr[tid + 1])
        assert index.positions[p:q].tolist() == [o for *_x, offs in plist for o in offs]


def test_bad_records_are_reported_by_file_and_line(corpus: list[Path], tmp_path: Path) -> None:
    engine = SearchEngine.load(settings_for(corpus, tmp_path / "idx"))
    report = engine.load_report
    assert report is not None
    found = [(p.path.name, p.line, str(p.kind)) for p in report.problems]
    assert found[:4] == [
        ("generated.jsonl", 1, "cut"),
        ("generated.jsonl", 12, "malformed"),
        ("generated.jsonl", 23, "invalid"),
        ("generated.jsonl", 34, "duplicate"),
    ]
    assert report.skipped == 3
    # Exactly what reading the whole corpus reports, in the same order.
    whole = load_corpus(corpus)
    assert [str(p) for p in report.problems] == [str(p) for p in whole.problems]
    again = SearchEngine.load(settings_for(corpus, tmp_path / "idx"))
    assert again.load_report is not None
    assert [str(p) for p in again.load_report.problems] == [str(p) for p in report.problems]


def test_expanding_words_gives_the_analyzer_terms(
    corpus: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the build tokenises with (each distinct word expanded once, remembered across
    runs, the cache starting over when full) is exactly the analyzer's output."""
    papers = load_corpus(corpus).papers
    texts = [doc_text(p, 2) for p in papers] + ["", "the of", "co-training -a- x- a--b"]
    plain, building = Analyzer(), Analyzer()
    monkeypatch.setattr(bot.search.analysis.analyzer, "EXPAND_CACHE", 50)
    for text in texts:
        expanded = building.expand(raw_words(text))
        assert [t for terms in expanded for t in terms] == plain(text)

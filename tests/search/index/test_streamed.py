"""Issue 17 (build from text): the built index and paper store are the same, file for file,
whatever the build path (streamed in runs of any size, in workers or not, or in memory), and
the same as before the build was streamed and made faster.

`PINNED` holds the digests of every saved file as the build before issue 17's speed work
wrote them for `write_build_corpus` (tests/search/buildcorpus.py); any change to a saved byte
shows here. The postings are also checked against a plain reference computed here from the
analyzer (term ids in order of first occurrence, per-document counts, positions), and the
load problems are reported by `file:line` as the corpus reader finds them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import bot.search.analysis.analyzer
import bot.search.files.opening
import bot.search.index.build
import bot.search.index.streamed
from bot.config import Settings, load_settings
from bot.papers.corpus import load_corpus
from bot.search.analysis.analyzer import Analyzer, raw_words
from bot.search.engine import SearchEngine
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
        "block_max": "a6eb9980652f3f137de3b1f5b5c62bce",
        "block_rows": "7d33c1e5675c699db11a592b1e99d07b",
        "doc_ids": "b99df664e5e52c59b66b3114c58b325f",
        "doc_len": "6b8e785e839eb9dcbf41e4c616ef80ff",
        "indptr": "d15bb372367b3ab39e4be621833385df",
        # Index format 6: positions of adjacent pairs of frequent terms (bot/search/index/pairs).
        "pair_doc_ids": "b7c83164e73e5a51620a488e1992b26e",
        "pair_indptr": "7b46582f4bd0ef9cf6946b860b4e564c",
        "pair_keys": "782272988e519ab1775ce0a76d950775",
        "pair_pos_indptr": "d75b4b52af7eb090100c94fdfc2455c3",
        "pair_positions": "e8dd6376c8acf6c616ed065c7b75900c",
        "pair_terms": "be5aa1b647580fec486df00a0d887b97",
        "pair_tfs": "ac2aeea1d36d1a02dd16b096a6c934e3",
        "pos_indptr": "e1c87b6c05b307dfae6156eb9de028bc",
        "positions": "295936fcc2553690869af341c023751c",
        "sat": "bfcf6a4ddad3aacee654c68dd6c10000",
        "term_max": "6c93e80e745079969d5beee1911249c3",
        "tfs": "35fb3d5992d7cced1836bab27f0075ba",
        "vocab": "385eb65ea8192a069e28ccae0adc10e6",
    },
    "store": {
        "added.txt": "c2816cd3b31bbab4efd3787d45f8d466",
        "added_at.npy": "5278a873d69faa2bb22a971527d27873",
        "authors.jsonl": "196b66e34238daa3e3fc35c8a512d7bd",
        "folded.txt": "0c39518c0811a864436153b43e233119",
        "folded_at.npy": "469b164d79ce6990595be7fcaabce918",
        "id_backward.npy": "4eb6f026d3f7be93f132f9cae9d76fe4",
        "id_order.npy": "22c286e33ec52f3f3e26250adebe3180",
        "ids.txt": "a829f475ffd81b54dfeb709e3d9368ad",
        "ids_at.npy": "abfa363823708560f607490d02771215",
        "inner_docs.npy": "41bb2a0e94542d2cdf7c10b25570fe14",
        "inner_ptr.npy": "965acaa05a351aa7d6f1a7804bbc9571",
        "inner_sorted.npy": "4a5c4814288ba26f8d3cfd403d25a394",
        "inner_vocab.txt": "1f28fdb54dd38835cb7372e06d6e17d0",
        "inner_vocab_at.npy": "0cfed92f30671e777da7574a7b454129",
        "offsets.npy": "250403edc81f22f37c24f429abf50881",
        "records.bin": "aeab6675fac3613e91d6558cf7e51806",
        "title_heads.npy": "343306b4204bef908b63cda2e1ebabce",
        "title_words.npy": "7e8370fc03c13ceadafb54138b1cc751",
        "titles.txt": "f44a7cceff5fd683d24828332d896e2c",
        "titles_at.npy": "469b164d79ce6990595be7fcaabce918",
        "venue_of.npy": "2bc16af77c432e22a90bec32f971b1f0",
        "year_of.npy": "5dfb7a5a1a893e7ec31a052489dccde3",
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
    return {
        "index": index["digests"],
        "store": {name: entry["digest"] for name, entry in store["files"].items()},
    }


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return write_build_corpus(tmp_path_factory.mktemp("corpus"))


def test_the_streamed_build_saves_the_pinned_files(corpus: list[Path], tmp_path: Path) -> None:
    engine = SearchEngine.load(settings_for(corpus, tmp_path / "idx"))
    assert saved_digests(tmp_path / "idx") == PINNED
    assert isinstance(engine.papers, PaperStore)  # streamed: served from the saved store
    assert len(engine.papers) == 429
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

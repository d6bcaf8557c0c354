"""Build from text, streamed: corpus files to a saved index and paper store without ever
holding the corpus, its token lists or its postings as Python objects.

Why: at a million papers the build parsed every paper into a `Paper` (most of 5.9 GB), then
tokenised, merged and saved from memory. Here papers are read one at a time (`iter_file`,
problems reported by `file:line` exactly as `load_corpus` reports them), each written to the
store as it comes (`StoreWriter`), and their texts tokenised in runs of `CHUNK` papers by
forked workers (`forkworkers.Workers`, which a stopping bot kills, as every build's) while the
next run is read. Each run's postings and positions go to disk as numpy arrays; once every
paper is read they are merged into the saved arrays in place (memory-mapped output files),
the saturations are computed block by block, and the block bounds by `BlockMax.build`.

The saved files are those of `BM25Index.save` and `save_store` over the same corpus, byte
for byte: term ids in order of first occurrence, postings in corpus order.
"""

from __future__ import annotations

import functools
import logging
import multiprocessing as mp
import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bot.papers.corpus import LoadReport, check_loaded, iter_corpus
from bot.papers.files import atomic_folder
from bot.papers.records import Paper
from bot.search.analysis.analyzer import Analyzer, raw_words
from bot.search.files.storewriter import StoreWriter
from bot.search.index.blockmax import BlockMax, term_maxima
from bot.search.index.bm25 import length_norms, posting_saturation
from bot.search.index.build import Partial, Run, _cpu_count
from bot.search.index.pairs import PairIndex
from bot.search.index.positions import Runs, positions_per_term, run_destinations
from bot.search.index.postings import SAVED_ARRAYS, BM25Params, write_meta
from bot.search.index.workers import Workers

log = logging.getLogger(__name__)

# Corpus bytes from which the build forks (~12,000 papers): below, forking costs more than
# the workers save.
PARALLEL_MIN_BYTES = 16 << 20
CHUNK = 5_000  # papers per tokenised run: a run's temporaries stay ~50 MB per worker
AHEAD = 2  # runs waiting per worker: enough to keep both busy, few texts held
STEP = 1 << 22  # postings per block when computing saturations from the saved arrays


def build_saved(
    files: Sequence[Path],
    exclude_status: Iterable[str],
    text_of: Callable[[Paper], str],
    analyzer: Analyzer,
    params: BM25Params,
    folder: Path,
    meta: dict[str, Any],
    store_meta: dict[str, Any],
    *,
    chunk: int | None = None,
    workers: int | None = None,
) -> LoadReport:
    """Read `files`, save the index in `folder` and the store in `folder / "papers"`.

    `meta` goes into the index's meta.json, `store_meta` (plus the skipped count and the
    first 1,000 problems) into the store's. Returns the load report (its `papers` is an empty
    list: the caller opens the saved store). Raises `CorpusError` as `load_corpus` does,
    `NotStorable` for a paper the store cannot hold (before anything is renamed into place).
    """
    count = workers or _cpu_count()
    parallel = _can_fork(count) and sum(Path(f).stat().st_size for f in files) >= PARALLEL_MIN_BYTES
    with atomic_folder(folder) as tmp:
        report = LoadReport()
        store = StoreWriter(tmp / "papers")
        runs = _Runs(tmp / "runs")
        texts = _texts(files, exclude_status, report, store, text_of, chunk or CHUNK)
        try:
            for part in _tokenised(texts, analyzer, count if parallel else 1):
                runs.add(part)
        finally:
            store.close()
        check_loaded(report, store.n)
        log.info("%s", report.summary(store.n))
        problems = [p.to_json() for p in report.problems[:1000]]

        def finish_store(_task: object = None) -> None:
            store.finish(dict(store_meta, skipped=report.skipped, problems=problems))
            log.debug("paper store finished")

        if parallel:  # the store's title index and digests beside the postings' merge
            with Workers.start(1, finish_store) as apart:
                finished = apart.beside(True)
                runs.save(tmp, params, meta)
                finished()
        else:
            finish_store()
            runs.save(tmp, params, meta)
        shutil.rmtree(runs.folder)
    return report


def _texts(
    files: Sequence[Path],
    exclude_status: Iterable[str],
    report: LoadReport,
    store: StoreWriter,
    text_of: Callable[[Paper], str],
    chunk: int,
) -> Iterator[list[str]]:
    """Runs of `chunk` papers' texts, every paper written to `store` as it is read."""
    exclude = tuple(exclude_status)
    seen: set[str] = set()
    texts: list[str] = []
    for paper in iter_corpus(files, exclude, report, seen):  # versions merged
        store.add(paper)
        texts.append(text_of(paper))
        if len(texts) >= chunk:
            yield texts
            texts = []
    if texts:
        yield texts


def _tokenise(analyzer: Analyzer, texts: list[str]) -> Partial:
    """One run's postings (in a forked worker, or here for the first runs)."""
    run = Run()
    for text in texts:
        run.add(raw_words(text))
    return run.partial(analyzer.expand)


def _tokenised(runs: Iterator[list[str]], analyzer: Analyzer, workers: int) -> Iterator[Partial]:
    """The runs' postings, in order: tokenised here with one worker (a small corpus is not
    worth a fork), else by forked workers (`Workers`, which a stopping bot kills: the build
    then raises `WorkersStopped`) while the next runs are read, at most `AHEAD` runs per
    worker waiting (bounded memory)."""
    work = functools.partial(_tokenise, analyzer)
    if workers < 2:
        yield from map(work, runs)
        return
    with Workers.start(workers, work) as crew:
        log.info("tokenising in %d worker processes", workers)
        yield from crew.imap(runs, ahead=AHEAD * workers)


def _can_fork(workers: int) -> bool:
    """Forked workers help: two or more, `fork` available, a caller that may have children
    (as `indexbuild.tokenize_parallel` decides)."""
    return workers >= 2 and "fork" in mp.get_all_start_methods() and not mp.current_process().daemon


class _Runs:
    """Tokenised runs as they come back, in corpus order: their terms joined into one
    vocabulary at once (global id = order of first occurrence), their arrays spilled to
    `folder` until every run is in."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True)
        self.vocab: dict[str, int] = {}
        self.maps: list[np.ndarray] = []
        self.counts: list[np.ndarray] = []  # postings per local term
        self.pos_counts: list[np.ndarray] = []  # positions per local term
        self.lengths: list[np.ndarray] = []
        self.wide = False

    def add(self, part: Partial) -> None:
        vocab = self.vocab
        self.maps.append(
            np.fromiter(
                (vocab.setdefault(t, len(vocab)) for t in part.terms),
                dtype=np.int64,
                count=len(part.terms),
            )
        )
        k = len(self.counts)
        self.counts.append(np.diff(part.indptr))
        self.pos_counts.append(positions_per_term(part.indptr, part.tfs))
        self.lengths.append(part.lengths)
        self.wide |= part.positions.dtype != np.uint16
        for name in ("doc_ids", "tfs", "positions"):
            np.save(self.folder / f"{k}-{name}.npy", getattr(part, name))

    def _load(self, k: int, name: str) -> np.ndarray:
        values: np.ndarray = np.load(self.folder / f"{k}-{name}.npy", allow_pickle=False)
        return values

    def _indptr(self, counts: list[np.ndarray]) -> np.ndarray:
        total = np.zeros(len(self.vocab), dtype=np.int64)
        for gmap, c in zip(self.maps, counts, strict=True):
            total[gmap] += c  # a run's terms are distinct: no lost updates
        indptr = np.zeros(len(self.vocab) + 1, dtype=np.int64)
        np.cumsum(total, out=indptr[1:])
        return indptr

    def _scatter(
        self, out: dict[str, np.memmap[Any, Any]], indptr: np.ndarray, counts: list[np.ndarray]
    ) -> None:
        """Each run's arrays into `out` (memory-mapped files), each term's runs in order."""
        cursor = indptr[:-1].copy()
        first_doc = 0
        for k, (gmap, c) in enumerate(zip(self.maps, counts, strict=True)):
            dest = run_destinations(cursor, gmap, c)
            for name, array in out.items():
                values = self._load(k, name)
                array[dest] = values + first_doc if name == "doc_ids" else values
            cursor[gmap] += c
            first_doc += self.lengths[k].shape[0]
        for array in out.values():
            array.flush()

    def save(self, tmp: Path, params: BM25Params, meta: dict[str, Any]) -> None:
        """The index's files in `tmp`, as `BM25Index.save` writes them."""
        doc_len = np.concatenate(self.lengths).astype(np.uint32, copy=False)
        n_docs = int(doc_len.shape[0])
        indptr = self._indptr(self.counts)
        pos_indptr = self._indptr(self.pos_counts)
        np.save(tmp / "indptr.npy", indptr)
        np.save(tmp / "doc_len.npy", doc_len)
        np.save(tmp / "pos_indptr.npy", pos_indptr)
        nnz = int(indptr[-1])
        postings = {
            "doc_ids": _new_array(tmp / "doc_ids.npy", np.int32, nnz),
            "tfs": _new_array(tmp / "tfs.npy", np.uint16, nnz),
        }
        self._scatter(postings, indptr, self.counts)
        del postings
        log.debug("postings merged")
        wide = np.uint32 if self.wide else np.uint16
        positions = {"positions": _new_array(tmp / "positions.npy", wide, int(pos_indptr[-1]))}
        self._scatter(positions, pos_indptr, self.pos_counts)
        del positions
        log.debug("positions merged")
        term_max = _write_saturation(tmp, length_norms(doc_len, params)[1], params.k1, indptr)
        log.debug("saturations written")
        # Read by ranges, not mapped: a mapped pass over sat and doc_ids (1.2 GB at a
        # million papers) counted whole in the build's peak memory.
        bounds = BlockMax.build(
            indptr, _Ranges(tmp / "doc_ids.npy"), _Ranges(tmp / "sat.npy"), n_docs, term_max
        )
        for name, values in bounds.arrays().items():
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(values))
        del bounds
        log.debug("block bounds written")
        runs = Runs(
            indptr,
            _mapped(tmp, "doc_ids"),
            _mapped(tmp, "tfs"),
            pos_indptr,
            _mapped(tmp, "positions"),
        )
        for name, values in PairIndex.build(runs, doc_len).arrays().items():
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(values))
        del runs
        log.debug("pair index written")
        (tmp / "vocab.txt").write_text("\n".join(self.vocab), encoding="utf-8")
        names = [*SAVED_ARRAYS, *BlockMax.NAMES, *PairIndex.NAMES]
        write_meta(tmp, names, meta, n_docs, len(self.vocab), params)


def _new_array(path: Path, dtype: type[np.generic], size: int) -> np.memmap[Any, Any]:
    """A .npy file of `size` items (as np.save writes it), memory-mapped for writing."""
    out = np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=(size,))
    assert isinstance(out, np.memmap)
    return out


def _mapped(folder: Path, name: str) -> np.memmap[Any, Any]:
    out = np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False)
    assert isinstance(out, np.memmap)
    return out


def _blocks(path: Path, step: int) -> Iterator[np.ndarray]:
    """A saved 1-D array read `step` items at a time (plain reads: no mapped pages stay)."""
    mapped = _mapped(path.parent, path.stem)
    offset, dtype, size = mapped.offset, mapped.dtype, mapped.shape[0]
    del mapped
    with path.open("rb") as handle:
        handle.seek(offset)
        for _start in range(0, size, step):
            yield np.fromfile(handle, dtype=dtype, count=step)


def _write_saturation(tmp: Path, norm: np.ndarray, k1: float, indptr: np.ndarray) -> np.ndarray:
    """sat.npy (`posting_saturation` of every posting), computed and written by blocks;
    returns each term's largest saturation, gathered from the same blocks."""
    nnz = int(indptr[-1])
    out = _new_array(tmp / "sat.npy", np.float64, nnz)
    offset = out.offset
    del out
    term_max = np.zeros(indptr.shape[0] - 1, dtype=np.float64)
    first = 0
    with (tmp / "sat.npy").open("r+b") as handle:
        handle.seek(offset)
        blocks = zip(
            _blocks(tmp / "tfs.npy", STEP), _blocks(tmp / "doc_ids.npy", STEP), strict=True
        )
        for tfs, doc_ids in blocks:
            sat = posting_saturation(tfs, doc_ids, norm, k1)
            handle.write(sat.tobytes())
            np.maximum(term_max, term_maxima(indptr, sat, first), out=term_max)
            first += sat.shape[0]
    return term_max


class _Ranges:
    """A saved 1-D array whose slices are read from the file (pread) when asked for."""

    def __init__(self, path: Path) -> None:
        mapped = _mapped(path.parent, path.stem)
        self.offset, self.dtype = mapped.offset, mapped.dtype
        del mapped
        self.path = path

    def __getitem__(self, key: slice, /) -> np.ndarray:
        start, stop = int(key.start or 0), int(key.stop)
        size = self.dtype.itemsize
        with self.path.open("rb") as handle:
            raw = os.pread(handle.fileno(), (stop - start) * size, self.offset + start * size)
        return np.frombuffer(raw, dtype=self.dtype)

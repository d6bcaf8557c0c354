"""Building an index's postings from token lists: serially, or in forked workers by chunks.

Tokenising is most of a build (the analyzer stems every word), so large corpora are cut into
runs of consecutive documents; each run becomes a `Partial` index with its own term ids, and
`merge_partials` joins them in corpus order into arrays identical to a serial build, term ids
included. `BM25Index` (bot/search/index/postings.py) turns the merged arrays into a scorer.
"""

from __future__ import annotations

import functools
import multiprocessing as mp
import os
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from itertools import count
from typing import NamedTuple, TypeVar

import numpy as np

from bot.search.index.positions import (
    chunk_positions,
    merge_positions,
    positions_per_term,
    run_destinations,
)
from bot.search.index.workers import Workers

T = TypeVar("T")
MAX_TF = np.iinfo(np.uint16).max
PARALLEL_MIN_DOCS = 20_000
PARALLEL_CHUNK = 25_000


class Partial(NamedTuple):
    """The index of a run of consecutive documents, with its own term ids (`terms` order)."""

    terms: list[str]
    indptr: np.ndarray
    doc_ids: np.ndarray
    tfs: np.ndarray
    lengths: np.ndarray
    positions: np.ndarray  # offsets, aligned with the postings (`phrases.chunk_positions`)


class Merged(NamedTuple):
    """The postings of a whole corpus: what `BM25Index` is constructed from."""

    vocab: dict[str, int]
    indptr: np.ndarray
    doc_ids: np.ndarray
    tfs: np.ndarray
    lengths: np.ndarray
    pos_indptr: np.ndarray
    positions: np.ndarray


# What turns a run's distinct words into their index terms (`Analyzer.expand`); None: the
# words are the terms already.
Expand = Callable[[list[str]], list[list[str]]] | None


class Run:
    """Documents of one run as word ids, each distinct word kept once (first-seen order).

    Why: per-occurrence Python work (a Counter per document, a stem lookup per word) was most
    of a build; here a document costs one C-level pass (`map` over a defaultdict whose ids
    come from a counter), and the postings, counts and positions are computed by numpy.
    """

    def __init__(self) -> None:
        self.ids: defaultdict[str, int] = defaultdict(count().__next__)
        self.sequence = array("I")
        self.ends = array("q")

    def add(self, words: Iterable[str]) -> None:
        self.sequence.extend(map(self.ids.__getitem__, words))
        self.ends.append(len(self.sequence))

    def partial(self, expand: Expand = None) -> Partial:
        """The run's postings; `expand` maps its words to index terms (see `Expand`)."""
        words = list(self.ids)
        sequence = np.frombuffer(self.sequence, dtype=np.uint32)
        ends = np.frombuffer(self.ends, dtype=np.int64)
        if expand is None:
            return _postings(words, sequence, np.diff(ends, prepend=0))
        # Each word's terms end to end; term ids in order of first occurrence there. Done by
        # C-level passes (dict.fromkeys, map) rather than a Python loop per word.
        expanded = expand(words)
        every = [t for terms in expanded for t in terms]
        vocab = {t: i for i, t in enumerate(dict.fromkeys(every))}
        flat = np.fromiter(map(vocab.__getitem__, every), dtype=np.uint32, count=len(every))
        size = np.fromiter(map(len, expanded), dtype=np.int64, count=len(expanded))
        per_token = size[sequence] if sequence.shape[0] else np.empty(0, np.int64)
        total = np.zeros(per_token.shape[0] + 1, dtype=np.int64)
        np.cumsum(per_token, out=total[1:])
        first = np.cumsum(size) - size
        within = np.arange(int(total[-1]), dtype=np.int64) - np.repeat(total[:-1], per_token)
        terms_seq = flat[np.repeat(first[sequence], per_token) + within]
        return _postings(list(vocab), terms_seq, total[ends] - total[np.r_[0, ends[:-1]]])


def partial(docs: Iterable[Iterable[str]], expand: Expand = None) -> Partial:
    """Postings of tokenised documents, each postings list in corpus order; term ids in order
    of first occurrence."""
    run = Run()
    for tokens in docs:
        run.add(tokens)
    return run.partial(expand)


def _postings(terms: list[str], sequence: np.ndarray, lengths: np.ndarray) -> Partial:
    """`Partial` of documents end to end in `sequence` (term ids), `lengths` tokens each."""
    n_docs = int(lengths.shape[0])
    doc_lengths = lengths.astype(np.uint32)
    order = _by_term(sequence, len(terms))  # ties keep document order
    term = sequence[order]
    doc = np.repeat(np.arange(n_docs, dtype=np.int32), lengths)[order]
    starts = np.ones(term.shape[0], dtype=bool)
    if term.shape[0]:
        np.not_equal(term[1:], term[:-1], out=starts[1:])
        starts[1:] |= doc[1:] != doc[:-1]
    first = np.flatnonzero(starts)
    del starts
    doc_ids, term = doc[first], term[first]
    del doc
    tfs = np.minimum(np.diff(first, append=sequence.shape[0]), MAX_TF).astype(np.uint16)
    del first
    indptr = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(np.bincount(term, minlength=len(terms)), out=indptr[1:])
    del term
    positions = chunk_positions(sequence, doc_lengths, MAX_TF, order)
    return Partial(terms, indptr, doc_ids, tfs, doc_lengths, positions)


def _by_term(sequence: np.ndarray, n_terms: int) -> np.ndarray:
    """`np.argsort(sequence, kind="stable")`, the same permutation, sorted on 16-bit keys
    when every term id fits: numpy sorts those by radix, ~4x faster than 32-bit ones (the
    sort was a third of tokenising a run). Computed once for the postings and positions."""
    keys = sequence.astype(np.uint16) if n_terms <= 1 << 16 else sequence
    order: np.ndarray = np.argsort(keys, kind="stable")
    return order


def tokenize_parallel(
    items: Sequence[T],
    tokenize: Callable[[T], Iterable[str]],
    workers: int | None = None,
    expand: Expand = None,
) -> list[Partial] | None:
    """Partials of consecutive chunks of `items`, tokenised in forked workers (`tokenize`
    gives an item's words, `expand` their terms: `Run.partial`); None where a serial build
    is the right one (small corpora, one core, no `fork`, a daemonic caller).

    Raises `WorkersStopped` when `stop_workers` ended the workers (the process is stopping)."""
    n = len(items)
    workers = workers or _cpu_count()
    if (
        workers < 2
        or n < PARALLEL_MIN_DOCS
        or "fork" not in mp.get_all_start_methods()
        or mp.current_process().daemon
    ):
        return None
    chunk = max(1000, min(PARALLEL_CHUNK, -(-n // workers)))
    bounds = [(a, min(n, a + chunk)) for a in range(0, n, chunk)]
    work = functools.partial(_tokenize_chunk, items, tokenize, expand)
    with Workers.start(min(workers, len(bounds)), work) as crew:
        return list(crew.map(bounds))


def merge_partials(partials: Sequence[Partial]) -> Merged:
    """Partial indexes of consecutive document ranges into one, in corpus order."""
    vocab: dict[str, int] = {}
    maps = []
    for part in partials:
        maps.append(
            np.fromiter(
                (vocab.setdefault(t, len(vocab)) for t in part.terms),
                dtype=np.int64,
                count=len(part.terms),
            )
        )
    df = np.zeros(len(vocab), dtype=np.int64)
    for gmap, part in zip(maps, partials, strict=True):
        df[gmap] += np.diff(part.indptr)  # a chunk's terms are distinct: no lost updates
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    nnz = int(indptr[-1])
    doc_ids = np.empty(nnz, dtype=np.int32)
    tfs = np.empty(nnz, dtype=np.uint16)
    cursor = indptr[:-1].copy()
    first_doc = 0
    for gmap, part in zip(maps, partials, strict=True):
        counts = np.diff(part.indptr)
        dest = run_destinations(cursor, gmap, counts)
        doc_ids[dest] = part.doc_ids + first_doc
        tfs[dest] = part.tfs
        cursor[gmap] += counts
        first_doc += part.lengths.shape[0]
    lengths = np.concatenate([p.lengths for p in partials]) if partials else np.empty(0, np.uint32)
    pos_indptr, positions = merge_positions(
        [
            (gmap, positions_per_term(p.indptr, p.tfs), p.positions)
            for gmap, p in zip(maps, partials, strict=True)
        ],
        len(vocab),
    )
    return Merged(
        vocab,
        indptr,
        doc_ids,
        tfs,
        lengths.astype(np.uint32, copy=False),
        pos_indptr,
        positions,
    )


def _tokenize_chunk(
    items: Sequence[T],
    tokenize: Callable[[T], Iterable[str]],
    expand: Expand,
    bounds: tuple[int, int],
) -> Partial:
    """What a build worker does with one chunk (runs in the forked process)."""
    start, end = bounds
    return partial((tokenize(items[i]) for i in range(start, end)), expand)


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1

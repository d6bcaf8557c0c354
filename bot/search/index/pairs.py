"""Adjacent pairs of frequent terms, indexed like terms: a common phrase is one postings list.

Why: a phrase check costs the occurrences of its terms in the documents holding all of them.
For two words that each appear in a fifth of the corpus or more ("language models", "using
state") that is millions of positions at 1M papers (~40 ms, and it grows with the corpus),
whatever the answer: "using state" occurs nowhere. Lucene's CommonGrams and Tantivy's
phrase prefixes answer the same way: index the adjacent pairs of the most frequent words.
Here a pair (a, b) of terms both held by at least `MIN_SHARE` of the documents has its own
positional postings (`phrases.Runs`: documents, counts, offsets of a), so such a phrase is a
postings lookup; a pair of frequent terms with no postings occurs nowhere, and a longer
phrase is checked with pairs in place of its frequent words (`phrasematch`).

Bounded: only pairs of frequent terms (~75 terms of a paper corpus at a fifth, ~9% of the
tokens: ~80 MB at 1M papers next to 1.6 GB of index). Built from the saved postings and
positions alone (`PairIndex.build`), by document chunks, so any build that produces those
arrays gets the pairs from one call.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from bot.search.index.positions import Runs, distinct, merge_positions, run_destinations

MIN_SHARE = 0.2  # a term is frequent when at least this share of the documents hold it
CHUNK_DOCS = 1 << 16  # documents per build step: one dense token array of the chunk
MAX_TF = np.iinfo(np.uint16).max  # as term counts: the first 65,535 occurrences per document
NOWHERE = -2  # `find`: both terms frequent, and the pair occurs in no document
NOT_INDEXED = -1  # `find`: a term is not frequent, so its pairs are not indexed


@dataclass(frozen=True)
class PairIndex:
    """The positional postings of every adjacent pair of frequent terms that occurs."""

    frequent: np.ndarray  # ascending term ids whose pairs are indexed (int32)
    keys: np.ndarray  # ascending first * n_terms + second of the pairs that occur (int64)
    runs: Runs  # pair i's documents, counts and offsets (of its first term)
    n_terms: int

    NAMES = (
        "pair_terms",
        "pair_keys",
        "pair_indptr",
        "pair_doc_ids",
        "pair_tfs",
        "pair_pos_indptr",
        "pair_positions",
    )

    @cached_property
    def _is_frequent(self) -> np.ndarray:
        """Per term id, whether its pairs are indexed: `find`'s test, built on first use."""
        is_frequent = np.zeros(self.n_terms, dtype=bool)
        is_frequent[self.frequent] = True
        return is_frequent

    def find(self, first: int, second: int) -> int:
        """The pair's id in `runs`; NOT_INDEXED when a term is not frequent, NOWHERE when both
        are and the pair occurs in no document."""
        is_frequent = self._is_frequent
        if not (is_frequent[first] and is_frequent[second]):
            return NOT_INDEXED
        key = first * self.n_terms + second
        at = int(np.searchsorted(self.keys, key))
        return at if at < self.keys.shape[0] and int(self.keys[at]) == key else NOWHERE

    def arrays(self) -> dict[str, np.ndarray]:
        """What `BM25Index.save` writes."""
        values = (self.frequent, self.keys, *self.runs)
        return dict(zip(self.NAMES, values, strict=True))

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], n_terms: int) -> PairIndex | None:
        """The saved pairs, or None when they do not fit an index of `n_terms` terms."""
        frequent, keys, *rest = (arrays[name] for name in cls.NAMES)
        runs = Runs(*rest)
        if (
            runs.indptr.shape[0] != keys.shape[0] + 1
            or int(runs.indptr[-1]) != runs.doc_ids.shape[0]
            or runs.tfs.shape != runs.doc_ids.shape
            or runs.pos_indptr.shape != runs.indptr.shape
            or int(runs.pos_indptr[-1]) != runs.positions.shape[0]
            or (frequent.shape[0] and int(frequent.max()) >= n_terms)
        ):
            return None
        return cls(np.asarray(frequent), np.asarray(keys), runs, n_terms)

    @classmethod
    def build(cls, terms: Runs, doc_len: np.ndarray, share: float | None = None) -> PairIndex:
        """The pairs of an index's terms, from its postings and positions (`terms`).

        Per chunk of documents, the frequent terms' occurrences are written into a dense
        array of the chunk's tokens; two set neighbours in one document are a pair. Each
        chunk's pairs become postings sorted by pair, then document and offset, and the
        chunks are merged in corpus order as a build's partial indexes are.
        """
        share = MIN_SHARE if share is None else share
        n_terms = terms.indptr.shape[0] - 1
        n_docs = int(doc_len.shape[0])
        df = np.diff(terms.indptr)
        frequent = np.flatnonzero(df >= max(1.0, share * n_docs)).astype(np.int32)
        dtype = terms.positions.dtype
        if terms.pos_indptr.shape != terms.indptr.shape:
            frequent = frequent[:0]  # no positions saved: nothing to pair
        starts = np.zeros(n_docs + 1, dtype=np.int64)
        np.cumsum(doc_len, out=starts[1:])
        post = np.asarray(terms.indptr[frequent], dtype=np.int64)
        pos = np.asarray(terms.pos_indptr[frequent], dtype=np.int64)
        parts = []
        for d0 in range(0, n_docs if frequent.shape[0] else 0, CHUNK_DOCS):
            d1 = min(n_docs, d0 + CHUNK_DOCS)
            tokens = np.full(int(starts[d1] - starts[d0]), -1, dtype=np.int32)
            for i, tid in enumerate(frequent.tolist()):
                a, end = int(post[i]), int(terms.indptr[tid + 1])
                b = a + int(np.searchsorted(terms.doc_ids[a:end], d1))
                tf = np.asarray(terms.tfs[a:b], dtype=np.int64)
                n = int(tf.sum())
                offsets = np.asarray(terms.positions[pos[i] : pos[i] + n], dtype=np.int64)
                docs = np.asarray(terms.doc_ids[a:b], dtype=np.int64)
                tokens[np.repeat(starts[docs] - starts[d0], tf) + offsets] = tid
                post[i], pos[i] = b, pos[i] + n
            parts.append(_chunk_pairs(tokens, starts, d0, n_terms))
        keys = distinct(np.sort(np.concatenate([p[0] for p in parts]))) if parts else None
        if keys is None:
            keys = np.empty(0, np.int64)
        maps = [np.searchsorted(keys, p[0]) for p in parts]
        per_key = np.zeros(keys.shape[0], dtype=np.int64)
        for gmap, part in zip(maps, parts, strict=True):
            per_key[gmap] += part[1]
        indptr = np.zeros(keys.shape[0] + 1, dtype=np.int64)
        np.cumsum(per_key, out=indptr[1:])
        doc_ids = np.empty(int(indptr[-1]), dtype=np.int32)
        tfs = np.empty(int(indptr[-1]), dtype=np.uint16)
        cursor = indptr[:-1].copy()
        for gmap, (_keys, counts, docs, tf, _occ, _pos) in zip(maps, parts, strict=True):
            dest = run_destinations(cursor, gmap, counts)
            doc_ids[dest], tfs[dest] = docs, tf
            cursor[gmap] += counts
        pos_indptr, positions = merge_positions(
            [(gmap, p[4], p[5].astype(dtype)) for gmap, p in zip(maps, parts, strict=True)],
            keys.shape[0],
        )
        if positions.dtype != dtype:  # no parts: keep the terms' offset type
            positions = positions.astype(dtype)
        return cls(frequent, keys, Runs(indptr, doc_ids, tfs, pos_indptr, positions), n_terms)


def _chunk_pairs(
    tokens: np.ndarray, starts: np.ndarray, d0: int, n_terms: int
) -> tuple[np.ndarray, ...]:
    """A chunk's pairs as partial postings: (distinct keys, postings per key, documents,
    counts, offsets per key, offsets), grouped by key, then document, then offset.

    `tokens` holds the chunk's tokens from document `d0` on: a frequent term's id, else -1.
    """
    base = int(starts[d0])
    first = np.flatnonzero((tokens[:-1] >= 0) & (tokens[1:] >= 0))
    doc = np.searchsorted(starts, first + base, side="right") - 1  # empty docs start nowhere
    same = first + base + 1 < starts[doc + 1]  # the second token is in the same document
    first, doc = first[same], doc[same]
    code = tokens[first].astype(np.int64) * n_terms + tokens[first + 1]
    order = np.argsort(code, kind="stable")  # ties stay in corpus order: document, offset
    code, doc, first = code[order], doc[order], first[order]
    offsets = first + base - starts[doc]
    n = code.shape[0]
    new = np.ones(n, dtype=bool)
    new[1:] = (code[1:] != code[:-1]) | (doc[1:] != doc[:-1])
    group = np.flatnonzero(new)
    tf = np.diff(np.append(group, n))
    keep = np.arange(n) - np.repeat(group, tf) < MAX_TF  # a posting's first MAX_TF offsets
    tf = np.minimum(tf, MAX_TF)
    p_code = code[group]
    key_new = np.ones(p_code.shape[0], dtype=bool)
    key_new[1:] = p_code[1:] != p_code[:-1]
    key_at = np.flatnonzero(key_new)
    postings = np.diff(np.append(key_at, p_code.shape[0]))
    occurrences = np.add.reduceat(tf, key_at) if key_at.shape[0] else key_at
    return p_code[key_at], postings, doc[group], tf, occurrences, offsets[keep]

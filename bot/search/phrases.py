"""Phrase checks from a positional index: where each term occurs in each document.

Why positions: re-analysing every candidate's text cost ~15 s of CPU for `"learning model"` on
100k papers, and scanning every document's term sequence (index format 3) still touched every
token of every candidate (~20-60 ms at 100k, ten times that at 1M). With positions a phrase
touches only the occurrences of its own terms, in the documents that hold all of them, as
Lucene and Tantivy do.

Layout (saved with the index, memory-mapped): term t's occurrences are
`positions[pos_indptr[t]:pos_indptr[t + 1]]`, one run per posting in postings order (documents
ascending), each run the term's offsets in that document, ascending. A posting's run is as long
as its saved tf, which is capped at `MAX_TF`: a document repeating one word more than 65,535
times has its first 65,535 occurrences recorded (no paper comes near: abstracts are cut at
20,000 characters). Offsets are uint16 when every document is shorter than 65,537 tokens
(always, for papers), else uint32: 2 bytes per token, half of a term-id sequence.

Offsets count analysed tokens, so stopwords are not positions: "learning a model" holds the
phrase "learning model", as the analyzer sees both.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_SHIFT = 32  # a key is doc << 32 | offset: one sorted int64 per occurrence, never across docs
_LOW = (1 << _SHIFT) - 1


def offset_dtype(longest: int) -> type[np.unsignedinteger]:
    """The narrowest dtype that holds every offset of documents of at most `longest` tokens."""
    return np.uint16 if longest <= 1 << 16 else np.uint32


def chunk_positions(sequence: np.ndarray, lengths: np.ndarray, cap: int) -> np.ndarray:
    """The offsets of a run of documents' tokens, in that run's postings order.

    `sequence` holds every token's term id, documents end to end (`lengths` tokens each). The
    result is grouped by term id, then document, then offset, which is the order of the run's
    postings (sorted by term, stable in corpus order), at most `cap` per (term, document).
    """
    n = int(sequence.shape[0])
    longest = int(lengths.max()) if lengths.shape[0] else 0
    ends = np.cumsum(lengths, dtype=np.int64)
    offsets = np.arange(n, dtype=np.int64) - np.repeat(ends - lengths, lengths)
    order = np.argsort(sequence, kind="stable")  # ties keep token order: doc, then offset
    out = offsets[order]
    if longest > cap:  # only then can one term occur more than `cap` times in a document
        term = sequence[order]
        doc = np.repeat(np.arange(lengths.shape[0]), lengths)[order]
        first = np.ones(n, dtype=bool)
        first[1:] = (term[1:] != term[:-1]) | (doc[1:] != doc[:-1])
        group_start = np.maximum.accumulate(np.where(first, np.arange(n), 0))
        out = out[np.arange(n) - group_start < cap]
    return np.asarray(out, dtype=offset_dtype(longest))


def run_destinations(cursor: np.ndarray, gmap: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Where a partial index's runs land in a merged array: local term i's `counts[i]` items go
    from `cursor[gmap[i]]` on (the caller then advances `cursor[gmap] += counts`)."""
    within = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(
        np.cumsum(counts) - counts, counts
    )
    dest: np.ndarray = cursor[np.repeat(gmap, counts)] + within
    return dest


def merge_positions(
    parts: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], n_terms: int
) -> tuple[np.ndarray, np.ndarray]:
    """(pos_indptr, positions) of partial indexes of consecutive documents, in corpus order.

    Each part is (its local-to-global term map, positions per local term, its positions from
    `chunk_positions`); a term's runs from later parts follow earlier ones, as its postings do.
    """
    per_term = np.zeros(n_terms, dtype=np.int64)
    for gmap, counts, _pos in parts:
        per_term[gmap] += counts  # a part's terms are distinct: no lost updates
    pos_indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(per_term, out=pos_indptr[1:])
    wide = any(pos.dtype != np.uint16 for _g, _c, pos in parts)
    positions = np.empty(int(pos_indptr[-1]), dtype=np.uint32 if wide else np.uint16)
    cursor = pos_indptr[:-1].copy()
    for gmap, counts, pos in parts:
        positions[run_destinations(cursor, gmap, counts)] = pos
        cursor[gmap] += counts
    return pos_indptr, positions


def positions_per_term(indptr: np.ndarray, tfs: np.ndarray) -> np.ndarray:
    """How many positions each term of a partial index has: the sum of its postings' tfs."""
    if not tfs.shape[0]:
        return np.zeros(indptr.shape[0] - 1, dtype=np.int64)
    return np.add.reduceat(tfs.astype(np.int64), indptr[:-1])


class PositionIndex:
    """The phrase side of a `BM25Index`: its postings plus the positions aligned with them."""

    def __init__(
        self,
        indptr: np.ndarray,
        doc_ids: np.ndarray,
        tfs: np.ndarray,
        doc_len: np.ndarray,
        pos_indptr: np.ndarray,
        positions: np.ndarray,
    ) -> None:
        self.indptr, self.doc_ids, self.tfs, self.doc_len = indptr, doc_ids, tfs, doc_len
        self.pos_indptr, self.positions = pos_indptr, positions
        self.n_docs = int(doc_len.shape[0])
        # Where each document starts in the corpus's token space: an occurrence's key.
        self.starts = np.zeros(self.n_docs + 1, dtype=np.int64)
        np.cumsum(doc_len, out=self.starts[1:])

    def docs_with(self, tids: Sequence[int], within: np.ndarray | None = None) -> np.ndarray:
        """Ascending ids of the documents holding the run of term ids `tids` (only documents
        whose entry in the boolean mask `within` is set, when given).

        Documents holding every term are found from the postings, rarest term first. Then the
        occurrences there of the phrase's term with the fewest of them give the possible run
        starts; each other term, fewest occurrences first, keeps the starts it continues,
        its occurrences gathered only in the documents still alive. An occurrence's key is
        its place in the corpus's token space (`starts[doc] + offset`), so keys are sorted
        and a membership test is a bitmap lookup (`_members`); a start is kept only when the
        whole run fits in its document, so a run never spans two documents.
        """
        if not tids:
            return np.empty(0, np.int32)
        unique = sorted(set(tids), key=lambda t: int(self.indptr[t + 1] - self.indptr[t]))
        docs = self._block(unique[0])
        if within is not None:
            docs = docs[within[docs]]
        mark = np.zeros(self.n_docs, dtype=bool)
        for tid in unique[1:]:
            if not docs.shape[0]:
                break
            mark[:] = False
            mark[self._block(tid)] = True
            docs = docs[mark[docs]]
        if len(tids) == 1 or not docs.shape[0]:
            return np.asarray(docs, dtype=np.int32)
        mark[:] = False
        mark[docs] = True
        # Per distinct term: which of its postings are candidates, and how many occurrences.
        chosen = {tid: np.flatnonzero(mark[self._block(tid)]) for tid in unique}
        sizes = {tid: int(self.tfs[self.indptr[tid] + sel].sum()) for tid, sel in chosen.items()}
        order = sorted(range(len(tids)), key=lambda j: sizes[tids[j]])
        anchor = order[0]
        owner, offsets = self._occurrences(tids[anchor], chosen[tids[anchor]])
        fits = (offsets >= anchor) & (
            offsets - anchor + len(tids) <= self.doc_len[owner].astype(np.int64)
        )
        owner = owner[fits]
        starts = self.starts[owner] + offsets[fits] - anchor
        for j in order[1:]:
            if not starts.shape[0]:
                break
            mark[:] = False
            mark[owner] = True  # the documents still alive
            tid = tids[j]
            sel = chosen[tid]
            sel = sel[mark[self._block(tid)[sel]]]
            where, offsets = self._occurrences(tid, sel)
            hit = _members(starts + j, self.starts[where] + offsets)
            owner, starts = owner[hit], starts[hit]
        return _distinct(owner).astype(np.int32)

    def occurrences_in(self, tid: int, within: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(document, offset) of every occurrence of term `tid` in the documents whose entry
        in the boolean mask `within` is set, documents ascending, offsets ascending in each
        (the word-order bonus of `bot.search.proximity` reads pairs from these)."""
        return self._occurrences(tid, np.flatnonzero(within[self._block(tid)]))

    def _block(self, tid: int) -> np.ndarray:
        return np.asarray(self.doc_ids[self.indptr[tid] : self.indptr[tid + 1]])

    def _occurrences(self, tid: int, sel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(document, offset) of every occurrence of `tid` in its postings `sel`, in order."""
        a, b = int(self.indptr[tid]), int(self.indptr[tid + 1])
        tf = np.asarray(self.tfs[a:b], dtype=np.int64)
        counts = tf[sel]
        # Where each chosen posting's run starts in `positions`: the term's start plus the
        # tfs of its earlier postings.
        first = int(self.pos_indptr[tid]) + np.cumsum(tf)[sel] - counts
        total = int(counts.sum())
        flat = np.repeat(first - (np.cumsum(counts) - counts), counts) + np.arange(total)
        offsets = np.asarray(self.positions)[flat].astype(np.int64)
        docs = np.repeat(np.asarray(self.doc_ids[a:b])[sel], counts)
        return docs, offsets


WINDOW = 1 << 22  # token-space bitmap per membership window: 4 MB, whatever the corpus size


def _members(probe: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Mask of the sorted `probe` values found in the sorted `keys`, in O(len) per window.

    A scatter into a bitmap and a gather from it; `np.searchsorted` costs a binary search per
    probe (~3x slower at 1M papers). The key range is cut into windows of `WINDOW` tokens, so
    the scratch memory stays small on any corpus; only windows holding keys are visited.
    """
    hit = np.zeros(probe.shape[0], dtype=bool)
    if not keys.shape[0] or not probe.shape[0]:
        return hit
    base = int(keys[0])
    span = int(keys[-1]) - base + 1
    bitmap = np.zeros(min(span, WINDOW), dtype=bool)
    windows = _distinct((keys - base) // WINDOW)
    edges = base + np.concatenate([windows, windows[-1:] + 1]) * WINDOW
    k_at = np.searchsorted(keys, edges)
    p_at = np.searchsorted(probe, edges)
    for w in range(windows.shape[0]):
        low = int(edges[w])
        ks = keys[k_at[w] : k_at[w + 1]] - low
        ps = probe[p_at[w] : p_at[w + 1]] - low
        inside = ps < bitmap.shape[0]
        if not ks.shape[0] or not inside.any():
            continue
        bitmap[ks] = True
        hit[p_at[w] : p_at[w + 1]][inside] = bitmap[ps[inside]]
        bitmap[ks] = False
    return hit


def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of a sorted array (`np.unique` hashes or sorts again: slower)."""
    if not values.shape[0]:
        return values
    first = np.ones(values.shape[0], dtype=bool)
    np.not_equal(values[1:], values[:-1], out=first[1:])
    return values[first]

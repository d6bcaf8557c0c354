"""Which documents hold a phrase: a run of terms, checked from positions, never from text.

A phrase is covered by grams: its frequent adjacent pairs (`bot.search.index.pairs`) where both
words are frequent, its terms elsewhere, each at its offset in the phrase. A document holds
the phrase when every gram occurs at its offset from one start; grams of pairs make the
common words' millions of positions a short postings list (and a pair of frequent words
that occurs nowhere answers at once). Exact: a pair occurs at x exactly when its first term
is at x and its second at x + 1 in the same document.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from bot.search.index.pairs import NOT_INDEXED, NOWHERE, PairIndex
from bot.search.index.positions import Runs, distinct

Gram = tuple[Runs, int, int]  # (terms or pairs, id there, offset in the phrase)
# Locate a few documents in a long postings list by binary search, more by a dense mark.
LOCATE_RATIO = 16
WINDOW = 1 << 22  # token-space bitmap per membership window: 4 MB, whatever the corpus size


class PositionIndex:
    """The phrase side of a `BM25Index`: term positions, pair positions, document lengths."""

    def __init__(self, terms: Runs, doc_len: np.ndarray, pairs: PairIndex) -> None:
        self.terms, self.pairs, self.doc_len = terms, pairs, doc_len
        self.n_docs = int(doc_len.shape[0])
        # Where each document starts in the corpus's token space: an occurrence's key.
        self.starts = np.zeros(self.n_docs + 1, dtype=np.int64)
        np.cumsum(doc_len, out=self.starts[1:])

    def docs_with(self, tids: Sequence[int], within: np.ndarray | None = None) -> np.ndarray:
        """Ascending ids of the documents holding the run of term ids `tids` (only documents
        whose entry in the boolean mask `within` is set, when given)."""
        grams = self.grams(tids)
        if not grams:
            return np.empty(0, np.int32)
        return self._match(grams, len(tids), within)

    def grams(self, tids: Sequence[int]) -> list[Gram]:
        """What covers the run `tids`: pairs where both words are frequent (left to right;
        a last word alone takes the pair before it), terms elsewhere. Empty when the run
        holds a pair of frequent words that occurs nowhere (or when `tids` is empty)."""
        found = [self.pairs.find(a, b) for a, b in pairwise(tids)]
        if NOWHERE in found:
            return []
        out: list[Gram] = []
        i, n = 0, len(tids)
        while i < n:
            if i + 1 < n and found[i] >= 0:
                out.append((self.pairs.runs, found[i], i))
                i += 2
                continue
            if i == n - 1 and i > 0 and found[i - 1] >= 0:
                out.append((self.pairs.runs, found[i - 1], i - 1))
            else:
                out.append((self.terms, tids[i], i))
            i += 1
        return out

    def _match(self, grams: list[Gram], span: int, within: np.ndarray | None) -> np.ndarray:
        """Documents where every gram occurs at its offset from one start, the run of `span`
        terms inside the document.

        Documents holding every gram come from the postings, rarest first, each gram's rows
        (its postings in those documents) kept alongside. The gram with the fewest
        occurrences there anchors the possible starts; each other gram, fewest first, keeps
        the starts it continues, its occurrences gathered only in documents still alive.
        Keys are places in the corpus's token space (`starts[doc] + offset`), sorted, and
        a membership test is a bitmap lookup (`_members`).
        """
        unique: dict[tuple[bool, int], tuple[Runs, int]] = {}
        for store, gid, _off in grams:
            unique.setdefault((store is self.terms, gid), (store, gid))
        order = sorted(unique, key=lambda k: unique[k][0].size(unique[k][1]))
        docs = unique[order[0]][0].block(unique[order[0]][1])
        rows = {order[0]: np.arange(docs.shape[0])}
        if within is not None:
            keep = within[docs]
            docs, rows[order[0]] = docs[keep], np.flatnonzero(keep)
        for k in order[1:]:
            if not docs.shape[0]:
                return np.empty(0, np.int32)
            found, at = self._locate(docs, unique[k][0].block(unique[k][1]))
            docs = docs[found]
            rows = {r: sel[found] for r, sel in rows.items()}
            rows[k] = at[found]
        if len(grams) == 1 or not docs.shape[0]:
            return np.asarray(docs, dtype=np.int32)
        sizes = {k: store.occurrence_count(gid, rows[k]) for k, (store, gid) in unique.items()}
        keys = [(store is self.terms, gid) for store, gid, _off in grams]
        entries = sorted(range(len(grams)), key=lambda j: sizes[keys[j]])
        store, gid, anchor = grams[entries[0]]
        owner, offsets = store.occurrences(gid, rows[keys[entries[0]]])
        fits = (offsets >= anchor) & (
            offsets - anchor + span <= self.doc_len[owner].astype(np.int64)
        )
        owner = owner[fits]
        starts = self.starts[owner] + offsets[fits] - anchor
        for j in entries[1:]:
            if not starts.shape[0]:
                break
            store, gid, off = grams[j]
            alive = np.searchsorted(docs, distinct(owner))  # owner is ascending
            where, offsets = store.occurrences(gid, rows[keys[j]][alive])
            hit = _members(starts + off, self.starts[where] + offsets)
            owner, starts = owner[hit], starts[hit]
        return distinct(owner).astype(np.int32)

    def _locate(self, docs: np.ndarray, block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(mask of `docs` found in `block`, their rows in `block`), both ascending."""
        if docs.shape[0] * LOCATE_RATIO < block.shape[0]:
            at = np.searchsorted(block, docs)
            found = at < block.shape[0]
            found[found] = block[at[found]] == docs[found]
            return found, at
        mark = np.zeros(self.n_docs, dtype=bool)
        mark[docs] = True
        hits = np.flatnonzero(mark[block])
        mark[:] = False
        mark[block[hits]] = True
        found = mark[docs]
        at = np.zeros(docs.shape[0], dtype=np.int64)
        at[found] = hits
        return found, at

    def occurrences_in(self, tid: int, within: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(document, offset) of every occurrence of term `tid` in the documents whose entry
        in the boolean mask `within` is set, documents ascending, offsets ascending in each
        (the reference for `bot.search.query.proximity.occurrences`, which reads a few
        documents)."""
        return self.terms.occurrences(tid, np.flatnonzero(within[self.terms.block(tid)]))

    def pair_counts(self, first: int, second: int, docs: np.ndarray) -> np.ndarray | None:
        """How often each of the ascending documents `docs` holds term `first` right before
        term `second`, from the pair's postings; None when that pair is not indexed."""
        pid = self.pairs.find(first, second)
        if pid == NOT_INDEXED:
            return None
        counts = np.zeros(docs.shape[0], dtype=np.int64)
        if pid != NOWHERE:
            found, rows = self._locate(np.asarray(docs), self.pairs.runs.block(pid))
            start = int(self.pairs.runs.indptr[pid])
            counts[found] = self.pairs.runs.tfs[start + rows[found]]
        return counts


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
    windows = distinct((keys - base) // WINDOW)
    edges = base + np.concatenate([windows, windows[-1:] + 1]) * WINDOW
    k_at = np.searchsorted(keys, edges)
    p_at = np.searchsorted(probe, edges)
    for w in range(windows.shape[0]):
        low = int(edges[w])
        ks = keys[k_at[w] : k_at[w + 1]] - low
        ps = probe[p_at[w] : p_at[w + 1]] - low
        inside = (ps >= 0) & (ps < bitmap.shape[0])
        if not ks.shape[0] or not inside.any():
            continue
        bitmap[ks] = True
        hit[p_at[w] : p_at[w + 1]][inside] = bitmap[ps[inside]]
        bitmap[ks] = False
    return hit

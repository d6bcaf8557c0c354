"""Autocomplete matches inside a word ("ormer" in "Transformer") without scanning every title.

Every distinct word of the folded titles (a run of alphanumeric characters, as `str.isalnum`
sees them) is kept once, with the titles that contain it (postings) and the sorted positions
of its inner suffixes ("ransformer", "ansformer", ... of "transformer"). A text that starts
inside a word either lies inside that word ("ormer": an inner suffix starts with it) or runs
to the word's end and on ("ormer b": an inner suffix equals "ormer" exactly); the titles are
then the postings of the words found, in corpus order. At a million real titles that is a few
hundred thousand words, so the arrays are small; they are memory-mapped like the rest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bot.search.files.columns import StringColumn, map_file
from bot.search.suggest.prefixsort import line_of, matching, sort_positions

WORD = re.compile(r"[^\W_]+")  # \w is alphanumeric or "_": this is str.isalnum's runs
_TOKEN = re.compile(r"[^\W_]+|\n")
_CHUNK = 50_000  # titles tokenised at once
FILES = (
    "inner_vocab.txt",
    "inner_vocab_at.npy",
    "inner_sorted.npy",
    "inner_ptr.npy",
    "inner_docs.npy",
)


class InnerWords:
    """Distinct title words, their inner suffixes sorted, and the titles holding each word."""

    def __init__(
        self, vocab: StringColumn, inner: np.ndarray, ptr: np.ndarray, docs: np.ndarray
    ) -> None:
        self.vocab, self.inner, self.ptr, self.docs = vocab, inner, ptr, docs

    @classmethod
    def of(cls, folded: Sequence[str]) -> InnerWords:
        """Built from the folded titles: a regex pass (C speed) over `_CHUNK` titles at a
        time, word ids by one dict in order of first occurrence, (word, title) pairs
        deduplicated and ordered by numpy. Why by chunks: a million titles' tokens held at
        once as Python strings were ~1 GB of a build's peak."""
        ids: dict[str, int] = {"\n": 0}
        n_docs = max(1, len(folded))
        parts = []
        for a in range(0, len(folded), _CHUNK):
            tokens = _TOKEN.findall("\n".join(folded[a : a + _CHUNK]))
            for word in dict.fromkeys(tokens):
                ids.setdefault(word, len(ids))
            codes = np.fromiter(map(ids.__getitem__, tokens), dtype=np.int64, count=len(tokens))
            breaks = codes == 0
            doc = a + np.cumsum(breaks)[~breaks]
            parts.append((codes[~breaks] - 1) * n_docs + doc)
        n_words = len(ids) - 1
        pairs = np.sort(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
        first = np.ones(pairs.shape[0], dtype=bool)
        first[1:] = pairs[1:] != pairs[:-1]
        pairs = pairs[first]
        ptr = np.zeros(n_words + 1, dtype=np.int64)
        np.cumsum(np.bincount(pairs // n_docs, minlength=n_words), out=ptr[1:])
        vocab = StringColumn.of(list(ids)[1:])
        return cls(vocab, _inner_sorted(vocab), ptr, (pairs % n_docs).astype(np.int32))

    def save(self, folder: Path) -> None:
        (folder / FILES[0]).write_bytes(bytes(self.vocab.data))
        for name, values in zip(
            FILES[1:], (self.vocab.starts, self.inner, self.ptr, self.docs), strict=True
        ):
            np.save(folder / name, values)

    @classmethod
    def open(cls, folder: Path) -> InnerWords:
        starts, inner, ptr, docs = (
            np.load(folder / name, mmap_mode="r", allow_pickle=False) for name in FILES[1:]
        )
        vocab = StringColumn(map_file(folder / FILES[0]), starts, str(folder / FILES[0]))
        if ptr.shape[0] != len(vocab) + 1 or int(ptr[-1]) != docs.shape[0]:
            raise ValueError("inner-word index does not fit together")
        return cls(vocab, inner, ptr, docs)

    def words(self, piece: str, *, whole: bool) -> np.ndarray:
        """Ids of the words with an inner suffix starting with `piece` (`whole`: equal to it)."""
        raw = piece.encode("utf-8")
        pos = matching(self.vocab.data, self.inner, raw)
        if whole and pos.shape[0]:
            after = self.vocab.starts[line_of(self.vocab.starts, pos) + 1] - 1
            pos = pos[pos + len(raw) == after]
        return np.unique(line_of(self.vocab.starts, pos))

    def postings(self, words: np.ndarray) -> int:
        """How many (word, title) pairs `words` have: the cost of `titles`."""
        ptr = np.asarray(self.ptr)
        return int((ptr[words + 1] - ptr[words]).sum())

    def titles(self, words: np.ndarray, first: int | None = None) -> np.ndarray:
        """The titles holding any of `words`, ascending; with `first`, only the `first`
        smallest of each word's list (enough for the first `first` of the union)."""
        if not words.shape[0]:
            return np.empty(0, np.int32)
        lo = np.asarray(self.ptr)[words]
        size = np.asarray(self.ptr)[words + 1] - lo
        if first is not None:
            size = np.minimum(size, first)
        total = int(size.sum())
        within = np.arange(total) - np.repeat(np.cumsum(size) - size, size)
        return np.unique(np.asarray(self.docs)[np.repeat(lo, size) + within])


def _inner_sorted(vocab: StringColumn) -> np.ndarray:
    """Byte positions of every character of every word but its first, sorted by suffix."""
    starts = np.asarray(vocab.starts)
    lengths = np.diff(starts) - 1  # bytes per word
    n_inner = np.maximum(lengths - 1, 0)
    total = int(n_inner.sum())
    pos = np.repeat(starts[:-1] + 1, n_inner) + (
        np.arange(total) - np.repeat(np.cumsum(n_inner) - n_inner, n_inner)
    )
    odd = [i for i, word in enumerate(vocab) if not word.isascii()]
    if odd:  # multi-byte characters: only character starts are suffixes
        owner = line_of(starts, pos)
        pos = pos[~np.isin(owner, odd)]
        extra = [
            int(starts[i]) + len(word[:j].encode("utf-8"))
            for i in odd
            for word in (vocab[i],)
            for j in range(1, len(word))
        ]
        pos = np.concatenate([pos, np.array(extra, dtype=np.int64)])
    return sort_positions(vocab.data, starts, pos)

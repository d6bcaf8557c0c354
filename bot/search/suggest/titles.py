"""Title autocomplete and title lookups by binary search instead of a scan of every title.

The folded titles (`fold`, as the user's input is folded) are kept end to end in one UTF-8
buffer, with two sorted arrays of positions into it (`bot.search.suggest.prefixsort`): every title's
start (`heads`) and every word start inside a title (`words`: a position whose previous
character is not alphanumeric). Matches inside a word come from `bot.search.suggest.innerwords`. A
prefix finds its matches in microseconds at a million titles, where `str.find` over every
title cost ~30 ms at p99.

Order of suggestions: title-start matches first, then word-start matches, then matches inside
a word, each in corpus order. The old scan ranked each title by the first place the text
occurred and looked at the first 200 titles containing it; here a title counts with its best
match and every title is considered, so a title-start match late in the corpus is no longer
lost behind early inside-word ones. A scan of every title is left only for texts without a
letter or digit, and for inside-word matches whose candidates are too many to check.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bot.search.analysis.analyzer import fold
from bot.search.files.columns import Buffer, DamagedFile, line_starts, map_file
from bot.search.suggest.innerwords import FILES as INNER_FILES
from bot.search.suggest.innerwords import WORD, InnerWords
from bot.search.suggest.prefixsort import DEPTH, find_range, line_of, matching, sort_positions

FILES = ("folded.txt", "folded_at.npy", "title_heads.npy", "title_words.npy", *INNER_FILES)
_ASCII_ALNUM = np.array([chr(c).isalnum() or c >= 128 for c in range(256)], dtype=bool)
_ASCII_SPACE = np.array([c < 128 and chr(c).isspace() for c in range(256)], dtype=bool)
_CHECK_ONE_BY_ONE = 2_000  # titles; more: a scan is cheaper
_MANY = 200_000  # word starts checked at once for an inside-word match


def fold_title(title: str) -> str:
    """A title as autocomplete compares it: folded, one line, no NUL (the sort's end mark)."""
    folded = title.lower() if title.isascii() else fold(title)
    return folded.replace("\n", " ").replace("\0", " ")


def _word_starts(data: bytes, starts: np.ndarray, folded: Sequence[str]) -> np.ndarray:
    """Byte positions where a word starts inside a title (not at its start, not a space)."""
    u8 = np.frombuffer(data, dtype=np.uint8)
    if u8.shape[0] < 2:
        return np.empty(0, np.int64)
    prev, cur = u8[:-1], u8[1:]
    # Bytes >= 128 count as letters here; titles with such characters are redone below.
    at = np.flatnonzero(~_ASCII_ALNUM[prev] & (prev != 10) & ~_ASCII_SPACE[cur]) + 1
    odd = [i for i, t in enumerate(folded) if not t.isascii()]
    if not odd:
        return at
    keep = at[~np.isin(line_of(starts, at), odd)]
    extra = []
    for i in odd:
        title, base = folded[i], int(starts[i])
        for j in range(1, len(title)):
            if not title[j - 1].isalnum() and not title[j].isspace():
                extra.append(base + len(title[:j].encode("utf-8")))
    return np.sort(np.concatenate([keep, np.array(extra, dtype=np.int64)]))


def _fresh(docs: np.ndarray, seen: set[int], need: int) -> list[int]:
    """The first `need` of ascending `docs` that are not in `seen`."""
    if seen:
        docs = docs[~np.isin(docs, np.fromiter(seen, dtype=np.int64, count=len(seen)))]
    return [int(d) for d in docs[:need]]


class TitleIndex:
    """Folded titles, their sorted start positions and inner words; see the module docstring."""

    def __init__(
        self,
        data: Buffer,
        starts: np.ndarray,
        heads: np.ndarray,
        words: np.ndarray,
        inner: InnerWords,
    ) -> None:
        self.data, self.starts, self.heads, self.words = data, starts, heads, words
        self.inner = inner
        self.n = int(starts.shape[0]) - 1

    @classmethod
    def of(cls, titles: Sequence[str]) -> TitleIndex:
        """Built in memory (an engine without a saved paper store, or before saving one)."""
        folded = [fold_title(t) for t in titles]
        data = "\n".join(folded).encode("utf-8")
        starts = line_starts(data, len(folded))
        heads = sort_positions(data, starts, starts[:-1])
        words = sort_positions(data, starts, _word_starts(data, starts, folded))
        return cls(data, starts, heads, words, InnerWords.of(folded))

    def save(self, folder: Path) -> None:
        (folder / FILES[0]).write_bytes(bytes(self.data))
        np.save(folder / FILES[1], self.starts)
        np.save(folder / FILES[2], self.heads)
        np.save(folder / FILES[3], self.words)
        self.inner.save(folder)

    @classmethod
    def open(cls, folder: Path, n: int) -> TitleIndex:
        """A saved title index, memory-mapped: only the pages a lookup touches are read."""
        data = map_file(folder / FILES[0])
        starts, heads, words = (
            np.load(folder / name, mmap_mode="r", allow_pickle=False) for name in FILES[1:4]
        )
        if starts.shape[0] != n + 1 or heads.shape[0] != n or int(starts[-1]) != len(data) + 1:
            raise ValueError("title index does not fit the store")
        return cls(data, starts, heads, words, InnerWords.open(folder))

    # -- lookups ----------------------------------------------------------------------------

    def doc_of(self, pos: int) -> int:
        return int(np.searchsorted(self.starts, pos, side="right")) - 1

    def title(self, doc: int) -> str:
        raw = self.data[int(self.starts[doc]) : int(self.starts[doc + 1]) - 1]
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DamagedFile(f"{FILES[0]}: title {doc + 1} is not UTF-8") from exc

    def _first(self, array: np.ndarray, want: bytes, need: int, seen: set[int]) -> list[int]:
        """The first `need` titles (corpus order, not in `seen`) with a match in `array`."""
        if need <= 0:
            return []
        most = 4 * (need + len(seen)) + 16
        while True:
            pos = matching(self.data, array, want, most)
            found = _fresh(np.unique(line_of(self.starts, pos)), seen, need)
            if len(found) == need or pos.shape[0] < most:
                return found
            most *= 4

    def complete(self, want: str, limit: int, first: Sequence[int] = ()) -> list[int]:
        """Titles holding folded `want`: at their start, then at a word start, then inside
        a word; each group in corpus order. `first` (an exact id match) leads."""
        found = list(first)
        seen = set(found)
        raw = want.encode("utf-8")
        if b"\n" in raw:  # no title holds a line break: never match across two titles
            return found[:limit]
        for array in (self.heads, self.words):
            for doc in self._first(array, raw, limit - len(found), seen):
                found.append(doc)
                seen.add(doc)
        if len(found) < limit:
            for doc in self._inside_words(want, limit - len(found), seen):
                found.append(doc)
                seen.add(doc)
        return found[:limit]

    def _inside_words(self, want: str, need: int, seen: set[int]) -> list[int]:
        """Titles (not in `seen`) where `want` starts right after a letter or digit."""
        piece = WORD.search(want)
        if piece is None:  # no letter or digit at all ("-"): scan
            return self._scan(want.encode("utf-8"), need, seen)
        if piece.start() > 0:  # "-based": a word start ("based") after "-" after a letter
            found = self._before_word_starts(want, piece.start(), need, seen)
            return found if found is not None else self._scan(want.encode("utf-8"), need, seen)
        rest = want[piece.end() :]
        if not rest:  # inside one word
            docs = self.inner.titles(self.inner.words(want, whole=False), need + len(seen))
            return _fresh(docs, seen, need)
        after = WORD.search(rest)
        if after is not None:  # "ormer bas": "bas" starts a word; check what precedes it
            found = self._before_word_starts(want, piece.end() + after.start(), need, seen)
            if found is not None:
                return found
            return self._scan(want.encode("utf-8"), need, seen)
        # The piece ends its word ("ormer: ..."): that word's titles, each checked; a scan
        # when they are too many to check one by one (then matches are rarely far apart).
        words = self.inner.words(piece.group(), whole=True)
        if self.inner.postings(words) > _CHECK_ONE_BY_ONE:
            return self._scan(want.encode("utf-8"), need, seen)
        docs = self.inner.titles(words)
        found = []
        for doc in docs.tolist():
            if doc not in seen and self._inside_match(self.title(doc), want):
                found.append(doc)
                if len(found) == need:
                    break
        return found

    def _before_word_starts(
        self, want: str, cut: int, need: int, seen: set[int]
    ) -> list[int] | None:
        """Matches of want[cut:] at word starts preceded by want[:cut] after a letter or
        digit; None when there are too many word starts to check at once."""
        lead, tail = want[:cut].encode("utf-8"), want[cut:].encode("utf-8")
        lo, hi = find_range(self.data, self.words, tail)
        if hi - lo > _MANY:
            return None
        pos = matching(self.data, self.words, tail)
        pos = pos[pos - len(lead) - 1 >= 0] - len(lead)  # where `want` would start
        u8 = np.frombuffer(self.data, dtype=np.uint8)
        for i, byte in enumerate(lead):
            if not pos.shape[0]:
                break
            pos = pos[u8[pos + i] == byte]
        before = u8[pos - 1]
        odd = before >= 128
        ok = _ASCII_ALNUM[before] & ~odd
        ok[odd] = [self._alnum_before(int(p)) for p in pos[odd]]
        return _fresh(np.unique(line_of(self.starts, pos[ok])), seen, need)

    @staticmethod
    def _inside_match(title: str, want: str) -> bool:
        at = title.find(want)
        while at >= 0:
            if at > 0 and title[at - 1].isalnum():
                return True
            at = title.find(want, at + 1)
        return False

    def _scan(self, raw: bytes, need: int, seen: set[int]) -> list[int]:
        """Matches after a letter or digit, by a scan of every title (rare: see `complete`)."""
        data, starts = self.data, self.starts
        found: list[int] = []
        at = data.find(raw)
        while at >= 0 and len(found) < need:
            doc = self.doc_of(at)
            if doc not in seen and at != int(starts[doc]) and self._alnum_before(at):
                found.append(doc)
                at = data.find(raw, int(starts[doc + 1]))
            elif doc in seen:
                at = data.find(raw, int(starts[doc + 1]))
            else:
                at = data.find(raw, at + 1)
        return found

    def _alnum_before(self, at: int) -> bool:
        back = 1
        while back < 4 and at - back > 0 and 0x80 <= self.data[at - back] < 0xC0:
            back += 1  # a continuation byte: step back to the character's first byte
        char = self.data[at - back : at].decode("utf-8", errors="replace")
        return char[:1].isalnum()

    def title_match(self, want: str) -> tuple[int | None, list[int]]:
        """(first title equal to folded `want`, first two titles starting with it)."""
        raw = want.encode("utf-8")
        if b"\n" in raw:
            return None, []
        prefix = self._first(self.heads, raw, 2, set())
        exact = None
        lo, hi = find_range(self.data, self.heads, raw)
        for p in self.heads[lo:hi]:  # an equal title sorts first (zero bytes after it)
            pos, end = int(p), int(p) + len(raw)
            if self.data[pos:end] == raw and self.data[end : end + 1] in (b"\n", b""):
                exact = self.doc_of(pos)
                break
            if len(raw) < DEPTH:
                break
        return exact, prefix

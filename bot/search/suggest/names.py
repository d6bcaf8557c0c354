"""Did you mean, for author names: an `author:` value that matches nobody, corrected against the
author index only (never against the papers' words, which turned "Sergey Levine" into
"series levie").

Each typed word of two letters or more may be any author word within `name_budget` edits of
it (itself included, when some author has it); initials stay as typed. A name is a candidate
when its words take the typed ones in order as `name_matches` does (the surname as written
or one of its close words, an initial for a first name); the fewest edits win, then the name
on the most papers. Close words come from one vectorised distance pass over the distinct author
words (`spelling.prefix_distances`), so a lookup costs milliseconds at any corpus size.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bot.search.analysis.analyzer import fold
from bot.search.suggest.authors import AuthorIndex, name_words
from bot.search.suggest.spelling import MAX_CHARS, MAX_EDITS, edit_distance, prefix_distances


def name_budget(word: str) -> int:
    """Edits allowed in one typed name word: none under three letters (`li`, `xu` have too
    many neighbours), one up to four, two beyond."""
    return 0 if len(word) < 3 else 1 if len(word) <= 4 else MAX_EDITS


@dataclass(frozen=True, slots=True)
class NameWords:
    """The author index's distinct plain-letter words as a byte matrix, for close words."""

    matrix: np.ndarray
    lengths: np.ndarray
    words: tuple[str, ...]

    @classmethod
    def of(cls, authors: AuthorIndex) -> NameWords:
        width = MAX_CHARS + MAX_EDITS
        words = tuple(
            sorted(
                w for w in authors.by_word if 3 <= len(w) <= width and w.isascii() and w.isalpha()
            )
        )
        matrix = np.zeros((len(words), width), dtype=np.uint8)
        for row, word in enumerate(words):
            matrix[row, : len(word)] = np.frombuffer(word.encode(), dtype=np.uint8)
        lengths = np.fromiter((len(w) for w in words), dtype=np.int16, count=len(words))
        return cls(matrix, lengths, words)

    def near(self, word: str) -> dict[str, int]:
        """Author words within `name_budget(word)` edits of the whole `word`: word -> edits."""
        budget = name_budget(word)
        if budget == 0 or not word.isascii() or not word.isalpha() or len(word) > MAX_CHARS:
            return {}
        m = len(word)
        rows = np.flatnonzero(np.abs(self.lengths.astype(np.int64) - m) <= budget)
        if not rows.shape[0]:
            return {}
        lengths = self.lengths[rows]
        dist = prefix_distances(self.matrix[rows], lengths, word.encode(), limit=budget)
        # Row k is the distance to word[:length + k - budget]: the whole word is k = m - length
        # + budget.
        k = m - lengths.astype(np.int64) + budget
        whole = dist[k, np.arange(rows.shape[0])]
        # Exact distances (the band counts Snowball's i for a y as no edit).
        close = (self.words[rows[i]] for i in np.flatnonzero(whole <= budget).tolist())
        found = {w: edit_distance(word, w, budget) for w in close}
        return {w: d for w, d in found.items() if d <= budget}


class NameSpeller:
    """Corrections of `author:` values against one author index."""

    def __init__(self, authors: AuthorIndex) -> None:
        self.authors = authors
        self._words: NameWords | None = None

    @property
    def words(self) -> NameWords:
        """Built on the first name that matches nobody: most searches never need it."""
        if self._words is None:
            self._words = NameWords.of(self.authors)
        return self._words

    def correct(self, typed: str) -> str | None:
        """The author name (as the index shows it) closest to `typed`; None when `typed`
        matches an author already, no name is within each word's budget, or two different
        names are equally close."""
        words = name_words(typed)
        if not words or self.authors.matching_names(typed):
            return None
        options: list[dict[str, int]] = []
        for word in words:
            found = {} if len(word) == 1 else self.words.near(word)
            if word in self.authors.by_word:
                found[word] = 0
            options.append(found)
        full = [n for n, word in enumerate(words) if len(word) > 1]
        if not full:
            return None
        surname = full[-1]
        candidates = {pos for w in options[surname] for pos in self.authors.by_word.get(w, ())}
        best: tuple[int, int, str, int] | None = None
        least, closest = MAX_EDITS * len(words) + 1, set[str]()
        for pos in candidates:
            aligned = _align(words, options, surname, self.authors.words[pos])
            if aligned is None or not 0 < aligned[0] <= MAX_EDITS:
                continue
            shown = _shown(words, aligned[1], self.authors.words[pos], self.authors.names[pos])
            key = (aligned[0], -len(self.authors.papers[pos]), shown, pos)
            if best is None or key < best:
                best = key
            if aligned[0] < least:
                least, closest = aligned[0], {shown}
            elif aligned[0] == least:
                closest.add(shown)
        # Two names as close (`yane zhang`: Yang or Yan Zhang?) are a guess, not a correction.
        return best[2] if best and len(closest) == 1 else None


def _shown(typed: Sequence[str], at: Sequence[int], listed: Sequence[str], name: str) -> str:
    """The typed name with each written-out word as the author's name spells it (its case
    too) and initials as typed: `y bengoi` -> `Y. Bengio`, `levnie` -> `Levine`."""
    spelled = {fold(w): w for w in re.split(r"[\s,]+", name) if w}
    out = []
    for word, pos in zip(typed, at, strict=True):
        if len(word) == 1:
            out.append(word.upper() + ".")
        else:
            out.append(spelled.get(listed[pos], listed[pos].capitalize()))
    return " ".join(out)


def _align(
    typed: Sequence[str], options: Sequence[dict[str, int]], surname: int, listed: Sequence[str]
) -> tuple[int, list[int]] | None:
    """(edits, the listed word each typed word takes) for `listed` to take the typed words in
    order as `name_matches` does, each typed word allowed its close words; None when it
    cannot. The `surname` must be one of its close words. A first name may also be an
    initial of the listed one (free) or stand for it (a listed initial, or a prefix: `per`
    for Percy; one edit each: the typed letters are not confirmed)."""
    at, total, taken = 0, 0, []
    for n, word in enumerate(typed):
        while at < len(listed):
            here = listed[at]
            if here in options[n]:
                total += options[n][here]
                break
            if n != surname:
                if len(word) == 1 and here.startswith(word):
                    break
                if (len(here) == 1 and word.startswith(here)) or here.startswith(word):
                    total += 1
                    break
            at += 1
        if at == len(listed):
            return None
        taken.append(at)
        at += 1
    return total, taken

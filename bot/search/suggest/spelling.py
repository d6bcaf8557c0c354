"""Did you mean: the closest frequent word of the index for a query word it does not know.

Distance 1 is Norvig's corrector over the index itself: the typed word's ~50n edits are
stemmed like the documents (one C call), and the edit whose stem is in the most documents
wins (`difusion` -> diffusion, in hundreds of abstracts, rather than a rarer word as close).

Distance 2 would be ~10^5 edits per word (seconds), so it goes the other way round: the
index's frequent terms (in at least two documents, at most the 100,000 most frequent, so
memory and time stay bounded at any corpus size) sit in one byte matrix (`Lexicon`, 22
bytes a term plus the term as a string), and one vectorised, banded Damerau-Levenshtein
(optimal string alignment) pass compares the typed word with all of them at once. Index
terms are stems, and a stem drops the word's ending, exactly where a typo in `difusoin` sits:
so each stem is compared with the typed word's *prefixes* (the ending left over is free),
and the best candidates are then checked as written.

Either way the suggestion is a word as papers write it (`diffus` -> diffusion), within two
edits of the whole typed word; the closest wins, then the one in the most documents.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bot.search.analysis.analyzer import Analyzer, fold
from bot.search.caches import LRU
from bot.search.index.postings import BM25Index

LETTERS = "abcdefghijklmnopqrstuvwxyz"
MIN_CHARS = 4  # shorter words have too many neighbours to guess from
MAX_CHARS = 20  # longer "words" are identifiers or noise
MAX_EDITS = 2
# Letters a stemmer may drop from a word's end (`normalization` -> normal: 7).
MAX_SUFFIX = 8
LEXICON_TERMS = 100_000  # the most frequent terms: bounded memory and time at any corpus size
CHECKED = 12  # distance-2 candidates checked as written, in `Lexicon.near` order
FORMS_FROM = 50  # papers read for a stem's written forms
STEMS_TRIED = 5  # distance-1 stems, most documents first, whose written forms are read
# A word the corpus has is left alone, unless it is in at most RARE_DF papers and one edit away
# is a word in RARE_RATIO times as many: then it is most likely a typo that a paper made too
# (`tranformer`, in one abstract, beside `transformer` in hundreds).
RARE_DF = 2
RARE_RATIO = 20
# At equal distance, the more used word wins only when it is in this many times the papers.
WINNER_RATIO = 10
RARE_CHARS = 6  # shorter rare words are names and acronyms (`Void`, `Rust`, `SEAL`) as often
# Corrections remembered, keyed by what users type: the same words come back when a page of
# results is turned or re-run; a misspelling of every query for weeks must not stay.
SPELL_CACHE = 1024
_WORD = re.compile(r"[a-z]+")
_I, _Y = ord("i"), ord("y")


def edits1(word: str) -> set[str]:
    """Every string one deletion, transposition, replacement or insertion away."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deletes = [a + b[1:] for a, b in splits if b]
    transposes = [a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1]
    replaces = [a + c + b[1:] for a, b in splits if b for c in LETTERS]
    inserts = [a + c + b for a, b in splits for c in LETTERS]
    return set(deletes + transposes + replaces + inserts)


def missing(typed: str, form: str) -> int:
    """How many of the typed letters `form` lacks (counted with repeats): at equal distance,
    the word holding the letters typed is the likelier one (`floting` is "floating", not
    "flowing"; `disrte` is "discrete", not "dirt"): a typist drops and swaps letters more
    often than typing foreign ones."""
    return sum((Counter(typed) - Counter(form)).values())


def edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance (a swap counts 1), or `limit + 1` once it exceeds
    `limit`: rows whose minimum is already past the limit end the comparison early."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            cost = 0 if ca == cb else 1
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], prev2[j - 2] + 1)
        if min(row) > limit:
            return limit + 1
        prev2, prev = prev, row
    return prev[-1] if prev[-1] <= limit else limit + 1


def prefix_distances(
    terms: np.ndarray, lengths: np.ndarray, word: bytes, limit: int = MAX_EDITS
) -> np.ndarray:
    """OSA distances of each term (row of `terms`, `lengths` long) to the prefixes of `word`
    whose length is within `limit` of the term's: an array (2 * limit + 1, terms) whose
    row k is the distance to word[:length + k - limit] (exact up to `limit`; anything
    above, and any prefix that does not exist, is `limit + 1`). Other prefixes are more than
    `limit` away by their length alone. A term's i matches a word's y, as Snowball writes
    a y (density -> densiti).

    A banded dynamic programme, one step per term letter, computed for all terms at once
    (nothing loops over terms in Python; the band is 2 * limit + 1 cells wide). A term
    whose last two steps are both past `limit` can never come back under it (every cell is
    built from one of them), so it is dropped: most terms are gone after a few letters.
    """
    n, m, width = terms.shape[0], len(word), 2 * limit + 1
    over = limit + 1
    offsets = np.arange(width) - limit
    w = np.frombuffer(word, dtype=np.uint8)
    # word[j - 1] is padded[j + width]: zeros where j - 1 falls outside the word.
    padded = np.concatenate([np.zeros(width + 1, np.uint8), w, np.zeros(width + 1, np.uint8)])
    has_y = bool((w == _Y).any())
    # Band cells are rows here (cell k of every term side by side): each step is a
    # contiguous operation over the terms, not thousands of 5-wide ones.
    out = np.full((width, n), over, dtype=np.int8)
    first = np.where((offsets >= 0) & (offsets <= m), np.minimum(offsets, over), over)
    prev = np.repeat(first.astype(np.int8)[:, None], n, axis=1)
    prev2 = np.full((width, n), over, dtype=np.int8)
    active = np.arange(n)
    for i in range(1, int(lengths.max(initial=0)) + 1):
        if not active.shape[0]:
            break
        j = i + offsets  # the prefix length of each band cell
        outside = (j < 0) | (j > m)
        at_j = padded[np.minimum(j + width, padded.shape[0] - 1)][:, None]  # word[j - 1]
        letter = terms[active, i - 1][None, :]
        differ = letter != at_j
        if has_y:  # Snowball's i for a y
            differ &= ~((letter == _I) & (at_j == _Y))
        # D[i-1][j-1] is prev[k]; D[i-1][j] is prev[k+1]; D[i-2][j-2] is prev2[k].
        base = prev + differ
        np.minimum(base[:-1], prev[1:] + 1, out=base[:-1])
        if i > 1:
            swap = (letter == padded[np.minimum(j - 1 + width, padded.shape[0] - 1)][:, None]) & (
                terms[active, i - 2][None, :] == at_j
            )
            swap &= (j >= 2)[:, None]
            np.minimum(base, np.where(swap, prev2 + 1, over), out=base)
        base[j == 0] = min(i, over)
        base[outside] = over
        row = base
        for k in range(1, width):  # insertions: a running minimum along the band
            np.minimum(row[k], row[k - 1] + 1, out=row[k])
        np.minimum(row, over, out=row)
        row[outside] = over
        done = lengths[active] == i
        out[:, active[done]] = row[:, done]
        alive = ~done & ((row.min(axis=0) <= limit) | (prev.min(axis=0) <= limit))
        active, prev2, prev = active[alive], prev[:, alive], row[:, alive]
    return out


@dataclass(frozen=True, slots=True)
class Lexicon:
    """The index's frequent plain-letter terms as a byte matrix, for distance-2 lookups."""

    terms: np.ndarray  # (n, MAX_CHARS + 2) uint8, zero padded
    lengths: np.ndarray  # (n,) int16
    df: np.ndarray  # (n,) int64
    words: tuple[str, ...]

    @classmethod
    def of(cls, index: BM25Index, min_df: int = 2, limit: int = LEXICON_TERMS) -> Lexicon:
        df = np.diff(index.indptr)
        width = MAX_CHARS + MAX_EDITS
        chosen = [
            (term, int(df[tid]))
            for term, tid in index.vocab.items()
            if df[tid] >= min_df and 2 <= len(term) <= width and term.isascii() and term.isalpha()
        ]
        chosen.sort(key=lambda pair: -pair[1])  # most documents first: ties go to them
        del chosen[limit:]
        words = tuple(term for term, _df in chosen)
        matrix = np.zeros((len(words), width), dtype=np.uint8)
        for row, term in enumerate(words):
            matrix[row, : len(term)] = np.frombuffer(term.encode(), dtype=np.uint8)
        lengths = np.fromiter((len(t) for t in words), dtype=np.int16, count=len(words))
        counts = np.fromiter((d for _t, d in chosen), dtype=np.int64, count=len(words))
        return cls(matrix, lengths, counts, words)

    def near(
        self, word: str, count: int = CHECKED, max_suffix: int = MAX_SUFFIX
    ) -> list[tuple[str, int]]:
        """(term, j) for the best `count` terms within MAX_EDITS of word[:j], a prefix
        leaving at most `max_suffix` letters over; ordered by edits plus letters left over
        (a stem explains most of its word), then edits, then the most documents."""
        m = len(word)
        if m < 3 or not self.words:
            return []
        # Two edits cannot touch all of a word's first three letters: a term shares one of
        # them, at most one place off (`bobability` / probabl: the o).
        keep = np.zeros(len(self.words), dtype=bool)
        for p in range(3):
            for q in range(max(0, p - 1), min(3, p + 2)):
                keep |= self.terms[:, p] == ord(word[q])
        keep &= (self.lengths >= max(3, m - MAX_EDITS - max_suffix)) & (
            self.lengths <= m + MAX_EDITS
        )
        rows = np.flatnonzero(keep)
        if not rows.shape[0]:
            return []
        lengths = self.lengths[rows]
        dist = prefix_distances(self.terms[rows], lengths, word.encode())
        j = lengths[None, :].astype(np.int64) + (np.arange(dist.shape[0]) - MAX_EDITS)[:, None]
        dist[(j < m - max_suffix) | (j > m)] = MAX_EDITS + 1
        closest = dist.min(axis=0)
        # The longest prefix that is closest: the fewest letters left over.
        last = dist.shape[0] - 1 - np.argmax((dist == closest)[::-1], axis=0)
        left = m - j[last, np.arange(j.shape[1])]
        ok = np.flatnonzero(closest <= MAX_EDITS)
        order = ok[np.lexsort((closest[ok], closest[ok] + left[ok]))][:count]  # stable: df
        return [(self.words[rows[i]], m - int(left[i])) for i in order.tolist()]


class Speller:
    """Corrections for words the index does not hold, drawn from the index's own terms."""

    def __init__(
        self,
        analyzer: Analyzer,
        index: BM25Index,
        texts: Callable[[int], str] | None = None,
    ) -> None:
        self.analyzer = analyzer
        self.index = index
        self.texts = texts  # a document's indexed text, to show a stem as a written word
        self._cache: LRU[str, str] = LRU(SPELL_CACHE)  # "" for no correction
        self._lexicon: Lexicon | None = None

    def known(self, word: str) -> bool:
        """True when the word (as analysed) is an indexed term, or is no term at all."""
        terms = self.analyzer(word)
        return all(self.index.doc_freq(t) > 0 for t in terms)

    def correct(self, word: str) -> str | None:
        """The closest frequent indexed word for an unknown `word`; None if it is known,
        not a plain word, or nothing is within two edits."""
        word = fold(word)
        cached = self._cache.get(word)
        if cached is not None:
            return cached or None
        found: str | None = None
        if _WORD.fullmatch(word) and MIN_CHARS <= len(word) <= MAX_CHARS:
            seen = self.seen_in(word)
            options: list[tuple[int, int, int, str]] = []
            if seen == 0:
                options = self._within_one(word)
                if min(options, default=(MAX_EDITS,))[0] > 1:
                    options += self._within_two(word)
            elif seen <= RARE_DF and len(word) >= RARE_CHARS:
                options = self._within_one(word, at_least=RARE_RATIO * seen, edits=1)
            found = self._clear_winner(options)
        self._cache.put(word, found or "")
        return found

    def _clear_winner(self, options: list[tuple[int, int, int, str]]) -> str | None:
        """The best (distance, `missing`, most documents) of the candidate forms, unless
        another word (another stem) is as close and as complete and used nearly as often
        (`WINNER_RATIO`): `niamal` is "animal" or "normal", and a guess shown as "did you
        mean" misleads more often than it helps (benchmarks/spelling.py)."""
        if not options:
            return None
        ranked = sorted(set(options))
        best = ranked[0]
        stem = self.analyzer.stem_word(best[3])
        for other in ranked[1:]:
            if other[:2] != best[:2]:
                break
            used, also = -best[2], -other[2]  # documents holding each
            if self.analyzer.stem_word(other[3]) != stem and used < WINNER_RATIO * also:
                return None
        return best[3]

    def seen_in(self, word: str) -> int:
        """How many papers hold the word (its rarest term; 0 when one is not indexed, and a
        large number for a word that is no term at all, a stopword)."""
        terms = self.analyzer(word)
        return min((self.index.doc_freq(t) for t in terms), default=1 << 30)

    @property
    def lexicon(self) -> Lexicon:
        """Built on the first distance-2 lookup: most queries never need it."""
        if self._lexicon is None:
            self._lexicon = Lexicon.of(self.index)
        return self._lexicon

    def _within_one(
        self, word: str, at_least: int = 1, edits: int = MAX_EDITS
    ) -> list[tuple[int, int, int, str]]:
        """The edit of `word` whose stem is in the most documents (at least `at_least`),
        shown as papers write that stem (`diffusio` -> diffusion, not the edit `diffusic`
        that stems the same), within `edits` of `word`: the candidates (distance, `missing`,
        minus documents, form) of the `STEMS_TRIED` most used stems. A stem no paper writes
        near the typed word gives none (`atention`: its edit `agention` stems to the frequent
        `agent`, but papers write "agent", four edits away; `attention` is one)."""
        typed = self.analyzer.stem_word(word)
        candidates = sorted(edits1(word) - self.analyzer.stopwords)
        stems = self.analyzer.stem_words(candidates)
        best: dict[str, tuple[int, str]] = {}
        for edit, stem in zip(candidates, stems, strict=True):
            df = self.index.doc_freq(stem)
            if df >= at_least and stem != typed and stem not in best:
                best[stem] = (df, edit)
        ranked = sorted(best.items(), key=lambda item: (-item[1][0], item[0]))
        found: list[tuple[int, int, int, str]] = []
        for stem, (df, edit) in ranked[:STEMS_TRIED]:
            form = edit if self.texts is None else self._closest(word, self._forms(stem), edits)
            if form is not None:
                found.append((edit_distance(word, form, edits), missing(word, form), -df, form))
        return found

    def _within_two(self, word: str) -> list[tuple[int, int, int, str]]:
        """The closest written form among the best distance-2 candidates; on a tie the one
        holding more of the typed letters (`missing`), then the one in the most documents."""
        stopwords = self.analyzer.stopwords
        found: list[tuple[int, int, int, str]] = []
        for term, j in self.lexicon.near(word):
            if term in stopwords:
                continue
            form = self._closest(word, self._forms(term))
            if form is None:
                # No paper read writes it so: the stem with the typed ending, if that is a
                # form of the stem (`gktenerators` -> generat + ors).
                built = term + word[j:]
                if built != word and self.analyzer.stem_word(built) == term:
                    form = self._closest(word, [built])
            if form is not None:
                distance = edit_distance(word, form, MAX_EDITS)
                found.append((distance, missing(word, form), -self.index.doc_freq(term), form))
        return found

    def _closest(self, word: str, forms: list[str], edits: int = MAX_EDITS) -> str | None:
        """The form within `edits` of `word` that is closest, the most used on a tie."""
        close = [
            (distance, rank, form)
            for rank, form in enumerate(forms)
            if form not in self.analyzer.stopwords
            and (distance := edit_distance(word, form, edits)) <= edits
        ]
        return min(close)[2] if close else None

    def _forms(self, term: str) -> list[str]:
        """`term` as the first papers holding it write it, most used first (`diffus` ->
        diffusion, diffusive, diffused); the term itself when there are no texts to read.

        Snowball stems are prefixes of their words (a final y becomes i: studi <- study), so
        one regular expression over each paper's text finds the written forms, and one
        stemming call keeps those that are really `term`.
        """
        if self.texts is None:
            return [term]
        head = term[:-1] if term.endswith("i") else term
        pattern = re.compile(r"(?<![a-z])" + re.escape(head) + r"[a-z]*")
        seen: Counter[str] = Counter()
        for doc in self.index.postings(term)[0][:FORMS_FROM].tolist():
            seen.update(pattern.findall(self.texts(int(doc)).lower()))
        words = [w for w, _n in seen.most_common()]
        stems = self.analyzer.stem_words(words)
        forms = [w for w, stem in zip(words, stems, strict=True) if stem == term]
        return forms or [term]

"""Did you mean: the closest frequent word of the index for a query word it does not know.

Distance 1 is Norvig's corrector over the index itself: the typed word's ~50n edits are
stemmed like the documents (one C call), and an edit whose stem is an indexed term is a
candidate; the most documents win (`difusion` -> diffusion, in hundreds of abstracts, rather
than a rarer word as close). The suggestion is the edited word as written, so it reads as a
word, not a stem. Distance 2 would be ~10^5 edits (seconds): instead the typed word's stem is
compared with the indexed stems of the same first letter and a similar length (in at least
two documents: "frequent"), and the winner is shown as a paper writes it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

import numpy as np

from bot.search.analyzer import Analyzer, fold
from bot.search.index import BM25Index

LETTERS = "abcdefghijklmnopqrstuvwxyz"
MIN_CHARS = 4  # shorter words have too many neighbours to guess from
MAX_CHARS = 20  # longer "words" are identifiers or noise, and distance-2 edits explode
_WORD = re.compile(r"[a-z]+")


def edits1(word: str) -> set[str]:
    """Every string one deletion, transposition, replacement or insertion away."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deletes = [a + b[1:] for a, b in splits if b]
    transposes = [a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1]
    replaces = [a + c + b[1:] for a, b in splits if b for c in LETTERS]
    inserts = [a + c + b for a, b in splits for c in LETTERS]
    return set(deletes + transposes + replaces + inserts)


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
        self._cache: dict[str, str | None] = {}

    def known(self, word: str) -> bool:
        """True when the word (as analysed) is an indexed term, or is no term at all."""
        terms = self.analyzer(word)
        return all(self.index.doc_freq(t) > 0 for t in terms)

    def _best(self, candidates: Iterable[str]) -> str | None:
        words = sorted(set(candidates))
        if not words:
            return None
        stems = self.analyzer.stem_words(words)
        best: tuple[int, str] | None = None
        for word, stem in zip(words, stems, strict=True):
            if word in self.analyzer.stopwords:
                continue
            df = self.index.doc_freq(stem)
            if df and (best is None or df > best[0]):
                best = (df, word)
        return best[1] if best else None

    def correct(self, word: str) -> str | None:
        """The closest frequent indexed word for an unknown `word`; None if it is known,
        not a plain word, or nothing is within two edits."""
        word = fold(word)
        if word in self._cache:
            return self._cache[word]
        found: str | None = None
        if _WORD.fullmatch(word) and MIN_CHARS <= len(word) <= MAX_CHARS and not self.known(word):
            found = self._best(edits1(word)) or self._within_two(word)
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[word] = found
        return found

    def _within_two(self, word: str) -> str | None:
        stem = self.analyzer.stem_word(word)
        best: tuple[int, str] | None = None
        for term in self._bucket(stem[0]):
            if abs(len(term) - len(stem)) > 2 or term in self.analyzer.stopwords:
                continue
            df = self.index.doc_freq(term)
            if (best is None or df > best[0]) and edit_distance(stem, term, 2) <= 2:
                best = (df, term)
        return self._written(best[1]) if best else None

    def _bucket(self, letter: str) -> list[str]:
        buckets: dict[str, list[str]] | None = self.__dict__.get("_buckets")
        if buckets is None:
            buckets = {}
            df = np.diff(self.index.indptr)
            for term, tid in self.index.vocab.items():
                if df[tid] >= 2 and term:
                    buckets.setdefault(term[0], []).append(term)
            self.__dict__["_buckets"] = buckets
        return buckets.get(letter, [])

    def _written(self, term: str) -> str:
        """`term` as the first paper holding it writes it (`diffus` -> diffusion)."""
        docs = self.index.postings(term)[0]
        if docs.shape[0] and self.texts is not None:
            text = self.texts(int(docs[0]))
            for start, end, found in self.analyzer.token_spans(text):
                if found == term and "-" not in text[start:end]:
                    return fold(text[start:end])
        return term

    def suggest_query(self, query: str) -> str | None:
        """`query` with each unknown word replaced by its correction; None when none was."""
        changed = False

        def fix(match: re.Match[str]) -> str:
            nonlocal changed
            text = match.group(0)
            start = match.start()
            # Leave syntax alone: `author:`, `venue:` values and `-excluded` words.
            before = query[:start]
            token_start = max(before.rfind(" "), before.rfind('"')) + 1
            token = query[token_start:start]
            if ":" in token or token.startswith("-") or query[match.end() :].startswith(":"):
                return text
            fixed = self.correct(text)
            if fixed is None:
                return text
            changed = True
            return fixed

        corrected = re.sub(r"[^\W\d_]+", fix, query)
        return corrected if changed else None

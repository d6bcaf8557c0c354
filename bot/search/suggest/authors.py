"""Author names as people type them: `jordan`, `Michael Jordan`, `Jordan, Michael`, `M. Jordan`.

Conference lists spell a person differently from how a reader remembers them ("Michael I.
Jordan", "Bernhard Schölkopf"). A name is compared as folded words (accents off, lowercase,
punctuation out, "Last, First" turned around); a typed name matches an author when its words
appear in the author's words in order, a one-letter word matching any word it starts (and a
listed initial matching a typed first name). So `michael jordan` finds "Michael I. Jordan",
`m jordan` too, and `jordan` alone finds every Jordan.

`AuthorIndex` keeps each distinct name once with the papers that list it, and a word -> names
map, so a query checks only the names sharing one of its words, not every author.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from bot.search.analysis.analyzer import fold

_NOT_WORD = re.compile(r"[^\w]+")


def display_name(name: str) -> str:
    """The name in reading order, spaces tidied: `Jordan, Michael I.` -> `Michael I. Jordan`."""
    if name.count(",") == 1:
        last, first = name.split(",")
        if first.strip() and last.strip():
            name = f"{first} {last}"
    return " ".join(name.split())


def name_words(name: str) -> tuple[str, ...]:
    """Folded words of a name in reading order: `Jordan, Michael I.` -> ("michael", "i",
    "jordan")."""
    name = display_name(name)
    return tuple(w for w in _NOT_WORD.sub(" ", fold(name)).replace("_", " ").split() if w)


def _word_matches(typed: str, listed: str) -> bool:
    if typed == listed:
        return True
    if len(typed) == 1:
        return listed.startswith(typed)
    return len(listed) == 1 and typed.startswith(listed)


def name_matches(typed: Sequence[str], listed: Sequence[str], *, surname: bool = True) -> bool:
    """Every typed word matches a listed word, in order. The last typed word, when written
    out, is taken as a surname and must be listed as written: `michael jordan` matches
    "M. I. Jordan" but not "Michael J. O'Neill". `surname=False` for a name still being typed."""
    if not typed:
        return False
    at = 0
    last = len(typed) - 1
    for n, word in enumerate(typed):
        exact = surname and n == last and len(word) > 1
        while at < len(listed) and not (
            word == listed[at] if exact else _word_matches(word, listed[at])
        ):
            at += 1
        if at == len(listed):
            return False
        at += 1
    return True


@dataclass
class AuthorIndex:
    """Distinct author names, the papers of each, and a word -> names map."""

    names: list[str] = field(default_factory=list)
    words: list[tuple[str, ...]] = field(default_factory=list)
    papers: list[list[int]] = field(default_factory=list)
    by_word: dict[str, list[int]] = field(default_factory=dict)

    @classmethod
    def build(cls, authors: Iterable[Sequence[str]]) -> AuthorIndex:
        """`authors[doc]` is the author list of paper `doc`, in corpus order."""
        index = cls()
        seen: dict[tuple[str, ...], int] = {}
        by_word: dict[str, list[int]] = defaultdict(list)
        for doc, names in enumerate(authors):
            for name in names:
                words = name_words(name)
                if not words:
                    continue
                pos = seen.get(words)
                if pos is None:
                    pos = seen[words] = len(index.names)
                    index.names.append(display_name(name))
                    index.words.append(words)
                    index.papers.append([])
                    for word in set(words):
                        by_word[word].append(pos)
                if not index.papers[pos] or index.papers[pos][-1] != doc:
                    index.papers[pos].append(doc)
        index.by_word = dict(by_word)
        return index

    def matching_names(self, typed: str) -> list[int]:
        """Positions of the names `typed` matches."""
        words = name_words(typed)
        full = [w for w in words if len(w) > 1]
        candidates: Iterable[int]
        if not full:
            # Only initials: nothing selective to look up, so check every name.
            candidates = range(len(self.names))
        else:
            # A matching name lists at least one typed full word as written (a surname is
            # rarely listed as an initial), so the union of their names is a superset.
            union: set[int] = set()
            for word in full:
                union.update(self.by_word.get(word, ()))
            candidates = sorted(union)
        return [i for i in candidates if name_matches(words, self.words[i])]

    def docs(self, typed: str) -> np.ndarray:
        """Sorted ids of the papers with an author matching `typed`."""
        found: set[int] = set()
        for pos in self.matching_names(typed):
            found.update(self.papers[pos])
        return np.array(sorted(found), dtype=np.int32)

    def complete(self, typed: str, limit: int = 25) -> list[tuple[str, int]]:
        """(name, number of papers) for autocomplete: names whose words start as typed,
        the most prolific first; every name (most prolific first) when nothing is typed."""
        words = name_words(typed)
        if not words:
            order = sorted(range(len(self.names)), key=lambda i: (-len(self.papers[i]), i))
            return [(self.names[i], len(self.papers[i])) for i in order[:limit]]
        last = words[-1]
        candidates = set()
        for word, positions in self.by_word.items():
            if word.startswith(last):
                candidates.update(positions)
        head = words[:-1]
        found = []
        for i in candidates:
            listed = self.words[i]
            if head and not name_matches(head, listed, surname=False):
                continue
            if any(w.startswith(last) for w in listed):
                found.append(i)
        found.sort(key=lambda i: (-len(self.papers[i]), self.names[i]))
        return [(self.names[i], len(self.papers[i])) for i in found[:limit]]


def matched_authors(listed: Sequence[str], typed: Sequence[str]) -> tuple[str, ...]:
    """The names of `listed` (one paper's authors, as it spells them) that any `author:` value
    of `typed` matches: what a hit shows instead of its first three names."""
    wanted = [words for words in map(name_words, typed) if words]
    return tuple(name for name in listed if any(name_matches(w, name_words(name)) for w in wanted))

"""Did you mean, for a whole query: each piece corrected by what it is, and only when the
correction is better than what was typed.

- Free words and the words of quoted phrases: by `Speller.correct` (a word no paper has, or
  one so rare beside a frequent neighbour that it is a typo a paper made too), never a word
  that is part of an author's name the index knows (`Yoshua`, `Bengio`, `Liang`: people search
  for authors by name, and "Bengio" -> "engin" helps nobody).
- `author:` values: against the author index only (`NameSpeller`), never against the papers'
  words; a value that matches an author is left alone.
- `-excluded` words, `venue:`, `year:` and `sort:` values: left as typed.

The query is rebuilt piece by piece (`parser._PIECE`), so a correction never leaks across
syntax: `author:"Sergey Levine"` is one piece, not two words to correct.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from weakref import WeakKeyDictionary

from bot.search.analysis.analyzer import fold
from bot.search.query.parser import PIECE
from bot.search.suggest.authors import AuthorIndex
from bot.search.suggest.names import NameSpeller
from bot.search.suggest.spelling import RARE_DF, Speller

_LETTERS = re.compile(r"[^\W\d_]+")
# One name speller per speller (one corpus's parts hold both it and the author index).
_NAMES: WeakKeyDictionary[Speller, NameSpeller] = WeakKeyDictionary()


def names_for(speller: Speller, authors: AuthorIndex) -> NameSpeller:
    """The name speller of `authors`, kept beside `speller` (built once per corpus)."""
    found = _NAMES.get(speller)
    if found is None or found.authors is not authors:
        found = _NAMES[speller] = NameSpeller(authors)
    return found


def suggest_query(
    speller: Speller,
    query: str,
    terms: Sequence[str] = (),
    phrases: Sequence[tuple[str, ...]] = (),
    names: NameSpeller | None = None,
) -> str | None:
    """`query` with each correctable piece corrected; None when nothing was.

    `terms`, `phrases`: the query as the engine analysed it. Every term in more than
    `RARE_DF` papers, no phrase and no `author:`: nothing to correct, and no word is analysed
    again (~0.3 ms of a /search)."""
    index = speller.index
    if (
        terms
        and not phrases
        and "author:" not in query.lower()
        and all(index.doc_freq(t) > RARE_DF for t in terms)
    ):
        return None
    authors = names.authors if names is not None else None
    changed = False
    out: list[str] = []
    last = 0
    for match in PIECE.finditer(query):
        negate, key, quoted, bare = match.groups()
        text = match.group(0)
        fixed = text
        if key and key.lower() == "author" and names is not None:
            value = quoted if quoted is not None else bare or ""
            name = names.correct(value) if value.strip() else None
            if name is not None:
                fixed = f'author:"{name}"'
        elif not key and not negate:
            fixed = _LETTERS.sub(lambda m: _word(speller, m.group(0), authors), text)
        changed |= fixed != text
        out.append(query[last : match.start()] + fixed)
        last = match.end()
    out.append(query[last:])
    return "".join(out) if changed else None


def _word(speller: Speller, word: str, authors: AuthorIndex | None) -> str:
    """One free word corrected (in the case it was typed in), or as typed: a word of a known
    author's name, or an acronym the papers use, is never corrected."""
    if authors is not None and fold(word) in authors.by_word:
        return word
    if len(word) > 1 and word.isupper() and speller.seen_in(word):
        return word  # an acronym some paper uses (`CRUST`, `RICL`)
    fixed = speller.correct(word)
    if fixed is None:
        return word
    if word.isupper() and len(word) > 1:
        return fixed.upper()
    return fixed.capitalize() if word[:1].isupper() else fixed

"""One analyzer for documents and queries, so a query word always meets the same token.

Steps: URLs out (they are links, not words), LaTeX spans to Unicode, markdown emphasis
dropped, accents folded, lowercase, words split on anything but letters and digits, hyphenated
names kept whole *and* split (`AG-REPA` -> agrepa, ag, repa) so `ag repa`, `agrepa` and `repa`
all find it, English stopwords dropped, Snowball (Porter2) stems.

`ANALYZER_VERSION` is part of the saved index's key: bump it whenever output changes.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

import Stemmer

from bot.papers.latex import has_latex, latex_to_unicode
from bot.papers.links import URL

ANALYZER_VERSION = "2"
# Distinct words `expand` remembers during a build (~40 MB full; a full cache starts over).
# Build-time only: `forget_expansions` drops them once the index is built.
EXPAND_CACHE = 300_000
# Words per generation of the stem cache (two are kept, ~2.5 MB). Its keys are what users
# type and the words of the abstracts their hits show. Issue 26 item 15: 20,000 kept growing
# from 2,000 to 20,000 distinct queries (+4.9 % peak RSS of the console); at 8,192 the
# /search p50 at 100k papers is unchanged (4,096 cost ~0.2 ms of snippet stemming).
STEM_CACHE = 8_192

# A word: letters/digits, optionally joined by single hyphens (k-means, AG-REPA, state-of-the-art).
WORD = re.compile(r"[^\W_]+(?:[-‐‑][^\W_]+)*")
# The same words in ASCII text, where [^\W_] is [A-Za-z0-9]: ~40% faster to find.
ASCII_WORD = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
HYPHENS = re.compile(r"[-‐‑]")
# Every branch starts with one of [*_`~]: the leading lookahead says so, which lets the
# matcher skip to those characters instead of trying the lookbehind everywhere (twice as fast).
MARKDOWN = re.compile(r"(?=[*_`~])(?:(?<!\w)[*_`~]+|[*_`~]+(?!\w)|\*\*|__)")
SUBSCRIPT_IN_WORD = re.compile(r"(?=[_^])(?<=\w)[_^](?=\w)")  # lookahead first: as MARKDOWN

# The classic English stopword list used by NLTK and most IR toolkits: function words only,
# no content words, so "not", "no" and "against" are dropped too (as BM25 baselines do).
STOPWORDS = frozenset(
    """
a about above after again against all am an and any are aren't as at be because been before
being below between both but by can couldn couldn't d did didn didn't do does doesn doesn't
doing don don't down during each few for from further had hadn hadn't has hasn hasn't have
haven haven't having he her here hers herself him himself his how i if in into is isn isn't it
it's its itself just ll m ma me mightn mightn't more most mustn mustn't my myself needn needn't
no nor not now o of off on once only or other our ours ourselves out over own re s same shan
shan't she she's should should've shouldn shouldn't so some such t than that that'll the their
theirs them themselves then there these they this those through to too under until up ve very
was wasn wasn't we were weren weren't what when where which while who whom why will with won
won't wouldn wouldn't y you you'd you'll you're you've your yours yourself yourselves
""".split()
)


def fold(text: str) -> str:
    """Unicode compatibility form, accents removed, lowercased: `Schrödinger` -> `schrodinger`.

    ASCII text is its own normal form without accents: only lowercased (snippets fold every
    word of the abstracts shown, so this is most of a snippet's cost otherwise). Combining
    marks are found among the text's distinct characters and dropped in one `translate`:
    a Python call per character was a third of tokenising an abstract with an accent."""
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKD", text)
    marks = {ord(ch): None for ch in set(text) if unicodedata.combining(ch)}
    if marks:
        text = text.translate(marks)
    return unicodedata.normalize("NFC", text).lower()


def _hyphenated(word: str) -> bool:
    return "-" in word or "‐" in word or "‑" in word


def clean(text: str) -> str:
    """Text reduced to words: no URLs, LaTeX as Unicode, no markdown emphasis, folded case."""
    # Every URL holds "://" or "www." (any case): most texts have neither, and the check
    # costs a tenth of running the pattern over them.
    if "://" in text or "www." in text.lower():
        text = URL.sub(" ", text)
    if has_latex(text):
        text = latex_to_unicode(text)
        if "_" in text or "^" in text:
            text = SUBSCRIPT_IN_WORD.sub("", text)
    if "*" in text or "_" in text or "`" in text or "~" in text:
        text = MARKDOWN.sub("", text)
    return fold(text)


def raw_words(text: str) -> list[str]:
    """The words of `text` as written after `clean`, hyphenated ones whole, stopwords kept:
    what the analyzer splits, drops and stems (`Analyzer.expand`)."""
    text = clean(text)
    if not text.isascii():
        return WORD.findall(text)
    return ascii_words(text)


# ASCII characters that are no part of an `ASCII_WORD`, each mapped to a space.
_NOT_WORD = str.maketrans(
    {chr(c): " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "-")}
)


def ascii_words(text: str) -> list[str]:
    """`ASCII_WORD.findall(text)` for ASCII `text`, a third faster (a build splits every
    abstract): with every character that no word holds made a space, `split` gives the
    maximal runs of letters, digits and hyphens, and such a run is one whole word unless a
    hyphen starts or ends it or follows another, where the pattern itself decides."""
    spaced = text.translate(_NOT_WORD)
    if "-" in spaced and (
        "--" in spaced
        or " -" in spaced
        or "- " in spaced
        or spaced.startswith("-")
        or spaced.endswith("-")
    ):
        return ASCII_WORD.findall(text)
    return spaced.split()


class StemCache:
    """Word -> stem, bounded: at most 2 x `size` words, the recently used ones kept.

    Why bounded: every distinct word ever queried used to stay (1.26 M entries after 40k
    queries, RSS 66 -> 120 MB after 5,000). Two generations: new words go to the young one;
    when it is full it becomes the old one and the previous old one is dropped; a word found
    in the old generation moves back to the young one. No per-entry bookkeeping, and a
    concurrent reader at worst recomputes a stem (PyStemmer costs about a microsecond).
    """

    def __init__(self, size: int = STEM_CACHE) -> None:
        self.size = size
        self._young: dict[str, str] = {}
        self._old: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._young) + len(self._old)

    def get(self, word: str) -> str | None:
        stem = self._young.get(word)
        if stem is None:
            stem = self._old.get(word)
            if stem is not None:
                self.put(word, stem)
        return stem

    def known(self, words: set[str]) -> tuple[dict[str, str], list[str]]:
        """(stems of the `words` held, the words not held): `get` for many words at once,
        without a Python call per word (a snippet looks up every word of its sentences)."""
        young = self._young
        found = {w: young[w] for w in words if w in young}
        rest = [w for w in words if w not in found]
        if rest and self._old:
            for word in rest:
                stem = self.get(word)
                if stem is not None:
                    found[word] = stem
            rest = [w for w in rest if w not in found]
        return found, rest

    def put(self, word: str, stem: str) -> None:
        if len(self._young) >= self.size:
            self._old, self._young = self._young, {}
        self._young[word] = stem


@dataclass
class Analyzer:
    """Text to index terms. Stems are cached per word: vocabularies are small, text isn't."""

    stopwords: frozenset[str] = STOPWORDS
    stem: bool = True
    language: str = "english"
    _cache: StemCache = field(default_factory=StemCache, repr=False)
    # Word -> index terms for `expand` (a build's workers each fill their own copy).
    _expanded: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._stemmer = Stemmer.Stemmer(self.language) if self.stem else None

    @property
    def signature(self) -> str:
        """Identifies the analyzer's behaviour for the saved-index key."""
        return (
            f"v{ANALYZER_VERSION}-stem:{self.language if self.stem else 'none'}"
            f"-stop:{len(self.stopwords)}"
        )

    def _pieces(self, text: str) -> list[tuple[str, bool]]:
        """(word, is the joined whole of a hyphenated word), stopwords dropped, in order."""
        out: list[tuple[str, bool]] = []
        stop = self.stopwords
        for word in raw_words(text):
            if "-" in word or "‐" in word or "‑" in word:
                out.extend(self._hyphenated(word))
            elif word not in stop:
                out.append((word, False))
        return out

    def _hyphenated(self, word: str) -> list[tuple[str, bool]]:
        """A hyphenated word's pieces: its joined whole, then its parts (stopwords dropped)."""
        stop = self.stopwords
        parts = [p for p in HYPHENS.split(word) if p]
        whole = "".join(parts)
        out = [(whole, True)] if whole not in stop else []
        out.extend((p, False) for p in parts if p not in stop)
        return out

    def expand(self, words: list[str]) -> list[list[str]]:
        """The index terms of each of `words` (as `raw_words` gives them).

        `self(text)` is the concatenation of `expand` over `raw_words(text)`; an index build
        expands each distinct word of a run of documents once instead of every occurrence,
        and the words of earlier runs are remembered (up to `EXPAND_CACHE` of them): most of
        a run's words were in the one before.
        """
        cache = self._expanded
        found = [cache.get(word) for word in words]
        todo = [word for word, terms in zip(words, found, strict=True) if terms is None]
        fresh = self._expand_new(todo)
        if len(cache) + len(todo) > EXPAND_CACHE:
            cache.clear()
        cache.update(zip(todo, fresh, strict=True))
        made = iter(fresh)
        return [terms if terms is not None else next(made) for terms in found]

    def forget_expansions(self) -> None:
        """Drop the words `expand` remembered for a build: no query reads them (queries stem
        through `stem_word` and `stems_of`), and a process that built its index in memory
        would otherwise keep up to `EXPAND_CACHE` of them as long as it serves."""
        self._expanded.clear()

    def _expand_new(self, words: list[str]) -> list[list[str]]:
        """`expand` without the cache: stopwords dropped, hyphenated words split, one
        stemWords call for all the pieces."""
        stop = self.stopwords
        pieces = [
            [w for w, _whole in self._hyphenated(word)]
            if "-" in word or "‐" in word or "‑" in word
            else ([] if word in stop else [word])
            for word in words
        ]
        if self._stemmer is None:
            return pieces
        stems = iter(self._stemmer.stemWords([p for group in pieces for p in group]))
        return [[next(stems) for _p in group] for group in pieces]

    def words(self, text: str) -> list[str]:
        """Unstemmed words, hyphenated names whole then by part, stopwords dropped."""
        return [word for word, _whole in self._pieces(text)]

    def query_terms(self, text: str, whole_weight: float = 1.0) -> tuple[list[str], list[float]]:
        """The terms of `self(text)`, in the same order, each with a query weight.

        A hyphenated word yields its whole and its parts, which all match the same papers; at
        weight 1 each the one concept would count two or three times over the other words
        of the query. `whole_weight` scales the joined whole (1.0 = plain `self(text)`).
        """
        pieces = self._pieces(text)
        return (
            [self.stem_word(word) for word, _whole in pieces],
            [whole_weight if whole else 1.0 for _word, whole in pieces],
        )

    def stem_words(self, words: list[str]) -> list[str]:
        """Stems of many words in one call (the spelling corrector stems ~10^5 candidates)."""
        return list(self._stemmer.stemWords(words)) if self._stemmer else list(words)

    def stem_word(self, word: str) -> str:
        cached = self._cache.get(word)
        if cached is None:
            cached = self._stemmer.stemWord(word) if self._stemmer else word
            self._cache.put(word, cached)
        return cached

    def __call__(self, text: str) -> list[str]:
        """Index terms of `text`, in order, repeats kept (BM25 counts them)."""
        words = self.words(text)
        if self._stemmer is None:
            return words
        stems = self.stems_of(set(words))
        return [stems[w] for w in words]

    def stems_of(self, words: set[str]) -> dict[str, str]:
        """Each distinct word's stem: from the cache, the others stemmed in one call."""
        if self._stemmer is None:
            return {w: w for w in words}
        stems, missing = self._cache.known(words)
        if missing:
            for word, stem in zip(missing, self._stemmer.stemWords(missing), strict=True):
                stems[word] = stem
                self._cache.put(word, stem)
        return stems

    def token_spans(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, term) for each word of `text` as written, for highlighting snippets.

        Works on the original text (no LaTeX conversion) so offsets stay valid; a hyphenated
        word yields one span per part plus one for the whole.
        """
        spans: list[tuple[int, int, str]] = []
        # ASCII text folds to its lowercase, character for character: fold it once.
        source = text.lower() if text.isascii() else text
        for match in WORD.finditer(source):
            word = fold(match.group(0))
            if _hyphenated(word):
                at = match.start()
                spans.extend((at + a, at + b, t) for a, b, t in self._hyphen_terms(match.group(0)))
            elif word not in self.stopwords:
                spans.append((match.start(), match.end(), self.stem_word(word)))
        return spans

    def term_set(self, text: str) -> set[str]:
        """The terms of `token_spans(text)`, without their places. Why: a snippet chooses its
        sentences by the terms they hold, then highlights only those; this looks at each
        distinct word once and makes no match objects (a third of a /search at 100k papers
        went to spans of sentences never shown)."""
        if text.isascii():  # lowercase is its fold; no stopword holds a hyphen
            words = set(WORD.findall(text.lower())) - self.stopwords
            joined = {w for w in words if "-" in w}
            terms = set(self.stems_of(words - joined).values())
            for raw in joined:
                terms.update(t for _a, _b, t in self._hyphen_terms(raw))
            return terms
        terms = set()
        for raw in set(WORD.findall(text)):
            word = fold(raw)
            if _hyphenated(word):
                terms.update(t for _a, _b, t in self._hyphen_terms(raw))
            elif word not in self.stopwords:
                terms.add(self.stem_word(word))
        return terms

    def _hyphen_terms(self, raw: str) -> list[tuple[int, int, str]]:
        """(start, end, term) inside one hyphenated word as written: the whole (its parts
        joined), then each part."""
        out: list[tuple[int, int, str]] = []
        whole = "".join(p for p in HYPHENS.split(fold(raw)) if p)
        if whole not in self.stopwords:
            out.append((0, len(raw), self.stem_word(whole)))
        start = 0
        for part in HYPHENS.split(raw):
            folded = fold(part)
            if folded and folded not in self.stopwords:
                out.append((start, start + len(part), self.stem_word(folded)))
            start += len(part) + 1
        return out

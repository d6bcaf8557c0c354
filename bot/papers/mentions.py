"""The papers a chat message points at: arXiv ids and URLs, OpenReview forums, DOIs, quoted titles.

Members paste papers into chat every way there is: `https://arxiv.org/abs/2401.01234v2`,
`arxiv.org/pdf/2401.01234.pdf`, `arXiv:2401.01234`, a bare `2401.01234`, the old
`hep-th/9901001`, `https://openreview.net/forum?id=AbC_12-x`, `doi:10.1145/3292500.3330701`,
`https://doi.org/10.48550/arXiv.2401.01234` (arXiv's own DOI: that is an arXiv paper), or the
title in quotes. `find_mentions` returns each paper once, in the order the message names them,
so "Find papers" and the link replies answer the way the message reads. URLs are matched
first and their spans set aside, so the id inside an arXiv URL or the DOI inside a doi.org URL
is not counted twice. Nothing here imports `discord` or does I/O: the console's `find` and the
Discord side share it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

ARXIV, OPENREVIEW, DOI, TITLE = "arxiv", "openreview", "doi", "title"
MAX_MENTIONS = 10  # one message's worth: Discord shows 10 embeds on a message
# arXiv archives of the old scheme (`hep-th/9901001`, `math.GT/0309136`), for bare old ids.
OLD_ARCHIVES = (
    "astro-ph|cond-mat|gr-qc|hep-ex|hep-lat|hep-ph|hep-th|math-ph|nlin|nucl-ex|nucl-th|"
    "physics|quant-ph|math|cs|q-bio|q-fin|stat|eess|econ|chao-dyn|solv-int|patt-sol|adap-org|"
    "cmp-lg|comp-gas|dg-ga|funct-an|alg-geom|q-alg|mtrl-th|supr-con|chem-ph|atom-ph|bayes-an|"
    "plasm-ph|ao-sci|acc-phys"
)
_NEW_ID = r"(?:\d{2}(?:0[1-9]|1[0-2]))\.\d{4,5}"
_OLD_ID = rf"(?:{OLD_ARCHIVES})(?:\.[A-Z]{{2}})?/\d{{7}}"
_ARXIV_ID = rf"(?P<id>{_NEW_ID}|{_OLD_ID})(?:v(?P<v>\d+))?"
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        ARXIV,
        re.compile(
            rf"(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html|format)/{_ARXIV_ID}"
            r"(?:\.pdf)?",
            re.IGNORECASE,
        ),
    ),
    (
        OPENREVIEW,
        re.compile(
            r"(?:https?://)?(?:www\.)?openreview\.net/(?:forum|pdf|attachment)\?"
            r"(?:[^\s#]*?&)?id=(?P<id>[A-Za-z0-9_-]{5,64})",
            re.IGNORECASE,
        ),
    ),
    (
        DOI,
        re.compile(
            r"(?:(?:https?://)?(?:dx\.)?doi\.org/|\bdoi:\s?)?\b(?P<id>10\.\d{4,9}/[^\s\"'<>]+)",
            re.IGNORECASE,
        ),
    ),
    (ARXIV, re.compile(rf"\barxiv:\s?{_ARXIV_ID}\b", re.IGNORECASE)),
    (ARXIV, re.compile(rf"(?<![\w./-]){_ARXIV_ID}(?![\w/-]|\.\d)")),
)
# "A quoted title", “curly” or «guillemets»: at least three words, one line.
_QUOTED = re.compile(r"\"([^\"\n]{10,300})\"|“([^”\n]{10,300})”|«([^»\n]{10,300})»")
_ARXIV_DOI = re.compile(rf"^10\.48550/arxiv\.{_ARXIV_ID}$", re.IGNORECASE)
_DOI_TRAILING = ".,;:!?)]}>'\"*_~`"


@dataclass(frozen=True, slots=True)
class Mention:
    """One paper a message names: `kind` (arxiv, openreview, doi, title) and its `key` (the
    arXiv id without version, the forum id, the lower-case DOI, or the title as written)."""

    kind: str
    key: str
    version: int | None = None

    @property
    def label(self) -> str:
        """How the answer names it: `arXiv 2401.01234v2`, `OpenReview AbC`, `DOI 10.1/x`."""
        names = {ARXIV: "arXiv", OPENREVIEW: "OpenReview", DOI: "DOI", TITLE: "Title"}
        version = f"v{self.version}" if self.version else ""
        return f"{names[self.kind]} {self.key}{version}"

    @property
    def url(self) -> str | None:
        """The page this mention points at, when it has one."""
        if self.kind == ARXIV:
            return f"https://arxiv.org/abs/{self.key}"
        if self.kind == OPENREVIEW:
            return f"https://openreview.net/forum?id={self.key}"
        if self.kind == DOI:
            return f"https://doi.org/{self.key}"
        return None


def _doi(raw: str) -> str:
    """A DOI without what prose leaves after it (a sentence's full stop, a closing bracket)."""
    while raw and raw[-1] in _DOI_TRAILING:
        if raw[-1] == ")" and raw.count("(") >= raw.count(")"):
            break
        raw = raw[:-1]
    return raw


def _overlaps(start: int, end: int, taken: list[tuple[int, int]]) -> bool:
    return any(start < b and a < end for a, b in taken)


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def find_mentions(text: str, limit: int = MAX_MENTIONS) -> list[Mention]:
    """Every paper `text` names, each once, in the order it names them (at most `limit`)."""
    found: list[tuple[int, Mention]] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            if _overlaps(match.start(), match.end(), taken):
                continue
            taken.append((match.start(), match.end()))
            mention = _mention(kind, match)
            if mention is not None:
                found.append((match.start(), mention))
    for match in _QUOTED.finditer(text):
        title = " ".join(next(g for g in match.groups() if g).split())
        if len(title.split()) >= 3 and not _overlaps(match.start(), match.end(), taken):
            found.append((match.start(), Mention(TITLE, title)))
    found.sort(key=lambda item: item[0])
    out: list[Mention] = []
    seen: set[tuple[str, str]] = set()
    for _start, mention in found:
        key = (mention.kind, _fold(mention.key) if mention.kind == TITLE else mention.key)
        if key not in seen:
            seen.add(key)
            out.append(mention)
    return out[:limit]


def _mention(kind: str, match: re.Match[str]) -> Mention | None:
    raw = match.group("id")
    if kind == DOI:
        doi = _doi(raw)
        arxiv_doi = _ARXIV_DOI.match(doi)
        if arxiv_doi:  # arXiv's DOI for its own papers
            return Mention(ARXIV, arxiv_doi.group("id"), _version(arxiv_doi.group("v")))
        return Mention(DOI, doi.lower()) if "/" in doi and len(doi) > 8 else None
    if kind == ARXIV:
        return Mention(ARXIV, raw, _version(match.group("v")))
    return Mention(kind, raw)


def _version(raw: str | None) -> int | None:
    return int(raw) if raw else None

"""Convert the ICML 2026 seed (bare abstracts, no titles or authors) into the project's JSONL.

The seed gives no titles, so each record gets a headline derived from its own abstract: the
method the paper names (`we propose dWorldEval, an action-centric ...`) with a few words of its
topic, else the object of its `we propose/introduce/present` clause, else its first sentence,
shortened. Every such record says `"title_derived": true` so nobody mistakes the headline for
the authors' title. Authors are never invented: the list stays empty.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from bot.search.analyzer import URL
from bot.search.latex import latex_to_unicode
from bot.search.links import abstract_links
from bot.search.savedfiles import write_jsonl

VENUE = "ICML 2026"
YEAR = 2026

_CLAUSE = re.compile(
    r"\b(?:[Ww]e|[Tt]his (?:paper|work))\s+(?:propose|introduce|present|develop|call it|term it)s?"
    r"\s+(.+?)(?:[.;](?:\s|$)|$)"
)
_CALLED = re.compile(r'\b(?:called|termed|dubbed)\s+"([^"]{3,80})"')
_TITLE_PHRASE = re.compile(r"^((?:[A-Z][\w-]*\s+){1,5}[A-Z][\w-]*),\s+(.*)$")
# A coined name: two or more capitals in one word (dWorldEval, CATArena, AG-REPA, SOPS).
_NAME = re.compile(r"(?<![\w-])([a-z]?[A-Z][\w]*[A-Z][\w]*(?:-[A-Z][\w]*)*)(?![\w-])")
_PAREN = re.compile(r"\(([^()]{2,80})\)")
_LEAD = re.compile(r"^(?:(?:a|an|the|novel|new|first|simple)\s+)+", re.IGNORECASE)
_MARKUP = re.compile(r"\*\*|\*|__|`")
_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'"})
MAX_HEADLINE = 100


def _plain(text: str) -> str:
    text = URL.sub("", text)
    text = _MARKUP.sub("", latex_to_unicode(text)).translate(_QUOTES)
    return re.sub(r"\s+", " ", text).strip()


def _words(text: str, count: int) -> str:
    parts = text.split()
    short = " ".join(parts[:count]).rstrip(",;:")
    return short + ("…" if len(parts) > count else "")


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _topic_after(clause: str, name: str) -> str:
    """The appositive after the name: `dWorldEval, an action-centric world model that ...`."""
    rest = clause.split(name, 1)[1].lstrip(" ,)")
    rest = re.split(r",|\bthat\b|\bwhich\b|\bwhere\b", rest, maxsplit=1)[0]
    return _LEAD.sub("", rest).strip()


def derive_headline(abstract: str) -> str:
    """An honest display headline built only from words of the abstract."""
    text = _plain(abstract)
    clause_match = _CLAUSE.search(text)
    if clause_match:
        clause = clause_match.group(1)
        for paren in _PAREN.finditer(clause):
            inner = paren.group(1).strip()
            before = clause[: paren.start()].rstrip()
            if " " not in inner and _NAME.fullmatch(inner):
                # `Mixture Prototype Flow Matching (MPFM)`: the words before are its expansion.
                expansion = _LEAD.sub("", re.split(r",|\btermed\b|\bcalled\b", before)[-1])
                expansion = expansion.strip().strip('"')
                topic = expansion if expansion else _topic_after(clause, inner)
                return _fit(inner, _words(topic, 9))
            if " " in inner and before and _NAME.fullmatch(before.split()[-1]):
                # `GAS (Gradient-Aware Scheduling)`: the name first, its expansion inside.
                return _fit(before.split()[-1], _words(inner, 9))
        lead = _LEAD.sub("", clause)
        name_match = _NAME.search(lead)
        if name_match and len(lead[: name_match.start()].split()) <= 2:
            name = name_match.group(1)
            topic = _topic_after(lead, name)
            return _fit(name, _words(topic, 9)) if topic else name
        phrase = _TITLE_PHRASE.match(lead)
        if phrase:
            # `Sinkhorn-parameterized Variational Inference, a first scalable framework for ...`
            return _fit(phrase.group(1), _words(_LEAD.sub("", phrase.group(2)), 9))
        return _fit("", _capital(_words(re.split(r",|\band\b", lead)[0], 11)))
    called = _CALLED.search(text)
    if called:
        return called.group(1).strip(" .,;")
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return _fit("", _words(first, 12))


def _fit(name: str, topic: str) -> str:
    headline = f"{name}: {topic}" if name and topic else (name or topic)
    if len(headline) > MAX_HEADLINE:
        headline = headline[: MAX_HEADLINE - 1].rsplit(" ", 1)[0] + "…"
    return headline


def links_in(abstract: str) -> list[dict[str, str]]:
    """Code and project URLs written in the abstract, each once, cleaned by `bot.search.links`."""
    return [{"kind": link.kind, "url": link.url} for link in abstract_links(abstract)]


def read_seed(path: Path) -> list[str]:
    """Abstracts of the seed file: paragraphs after the one-line header, blank-line separated."""
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    _header, _, body = text.partition("\n")
    return [re.sub(r"\s*\n\s*", " ", p).strip() for p in re.split(r"\n\s*\n", body) if p.strip()]


def seed_records(abstracts: list[str]) -> list[dict[str, Any]]:
    records = []
    for number, abstract in enumerate(abstracts, start=1):
        digest = hashlib.sha1(abstract.encode("utf-8")).hexdigest()[:8]
        records.append(
            {
                "id": f"icml2026/{number:03d}-{digest}",
                "venue": VENUE,
                "year": YEAR,
                "title": derive_headline(abstract),
                "title_derived": True,
                "authors": [],
                "abstract": abstract,
                "links": links_in(abstract),
            }
        )
    return records


def convert(seed: Path, out: Path) -> int:
    """Write `out` atomically (`write_jsonl`) so a failed run leaves the old file."""
    return write_jsonl(out, seed_records(read_seed(seed)))

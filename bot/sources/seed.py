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

from bot.papers.files import write_jsonl
from bot.papers.latex import latex_to_unicode
from bot.papers.links import URL, abstract_links

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
MAX_HEADLINE = 90

# Words a headline may be cut before: what follows them qualifies the phrase before. A cut
# before a strong word ends a whole noun phrase ("a framework | designed to ..."); a cut
# before a weak one may split a list or a verb from its object, so it is a second choice.
_STRONG_CUTS = frozenset(
    "that which who whose where when while by via through using designed aimed aiming "
    "intended because thereby whereas".split()
)
_WEAK_CUTS = frozenset(
    "to so such thus for in with on from across under into based and or but as".split()
)
# Words a headline never ends on, and words that point outside it ("this vulnerability").
_WEAK_END = frozenset(
    "a an the of and or for to in on with by as at from is are be designed aimed its their "
    "our both novel new first simple this these".split()
)
_POINTING = frozenset("this these those such it its their them".split())


def _bare(word: str) -> str:
    return word.strip(".,;:()[]\"'").lower()


def _phrase(text: str, budget: int, *, inside: bool = False) -> str:
    """A complete phrase of `text` within `budget` characters, "" if there is none.

    A phrase ends just before a word that starts a qualification, never on a function word,
    and never holds a word pointing outside it (`this vulnerability`). The longest phrase
    ending at a strong cut wins (`that`, `via`, `designed`, a comma); failing that, the
    shortest of three words or more at a weak cut (`for`, `and`), failing that the longest.
    `inside`: the phrase must stop before the end of `text` (a headline drawn from a first
    sentence should not be the whole sentence).
    """
    words = text.replace("**", "").split()
    strong: list[str] = []
    weak: list[str] = []
    for end in range(1, len(words) + 1):
        head = words[:end]
        if any(_bare(w) in _POINTING for w in head):
            break
        last = end == len(words)
        nxt = "" if last else _bare(words[end])
        is_strong = last or nxt in _STRONG_CUTS or head[-1].endswith((",", ";", ":"))
        if (last and inside) or not (is_strong or nxt in _WEAK_CUTS):
            continue
        while head and _bare(head[-1]) in _WEAK_END:
            head = head[:-1]
        candidate = " ".join(head).rstrip(".,;:")
        if len(candidate) > budget:
            break
        if len(head) >= 2:
            (strong if is_strong else weak).append(candidate)
    if strong:
        return strong[-1]
    longer = [c for c in weak if len(c.split()) >= 3]
    return longer[0] if longer else (weak[-1] if weak else "")


def _plain(text: str) -> str:
    text = URL.sub("", text)
    text = _MARKUP.sub("", latex_to_unicode(text)).translate(_QUOTES)
    return re.sub(r"\s+", " ", text).strip()


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
                return _fit(inner, topic)
            if " " in inner and before and _NAME.fullmatch(before.split()[-1]):
                # `GAS (Gradient-Aware Scheduling)`: the name first, its expansion inside.
                return _fit(before.split()[-1], inner)
        lead = _LEAD.sub("", clause)
        name_match = _NAME.search(lead)
        if name_match and len(lead[: name_match.start()].split()) <= 2:
            name = name_match.group(1)
            topic = _topic_after(lead, name)
            return _fit(name, topic) if topic else name
        phrase = _TITLE_PHRASE.match(lead)
        if phrase:
            # `Sinkhorn-parameterized Variational Inference, a first scalable framework for ...`
            return _fit(phrase.group(1), _LEAD.sub("", phrase.group(2)))
        return _fit("", _capital(re.split(r",|\band\b", lead)[0]))
    called = _CALLED.search(text)
    if called:
        return called.group(1).strip(" .,;")
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return _fit("", first.rstrip(".!?"), inside=True)


def _fit(name: str, topic: str, *, inside: bool = False) -> str:
    """`name: topic` as a finished title: the topic cut to its longest complete phrase that
    fits MAX_HEADLINE (no trailing "…", no dangling "this"), or the name alone."""
    budget = MAX_HEADLINE - (len(name) + 2 if name else 0)
    phrase = _phrase(topic, budget, inside=inside) if topic else ""
    if not phrase and not name:
        phrase = _phrase(topic, budget) or " ".join(topic.split()[:8])
    return f"{name}: {phrase}" if name and phrase else (name or phrase)


def links_in(abstract: str) -> list[dict[str, str]]:
    """Code and project URLs written in the abstract, each once, cleaned by `bot.papers.links`."""
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

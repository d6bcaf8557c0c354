"""Versions of one work merged into one paper: an arXiv preprint and its accepted conference
record (OpenReview, a Paper Copilot list), or a workshop and a conference record of it.

Why here, where corpus records are read: the engine, `/new`, follows and the daily pool then
see one record and cannot show the same work twice; nothing downstream has to know.

Matching (`same_work`), strongest evidence first:
- a shared identifier: an arXiv id (the record's own id, an arxiv.org link, a BibTeX
  `eprint`/`arXiv:` mention; a mention inside the abstract only counts when the titles agree
  too, since abstracts cite other papers), a DOI (arXiv's `10.48550/arXiv.<id>` is an arXiv
  id), an OpenReview forum id (Paper Copilot's ids for OpenReview venues are forum ids);
- the same normalised title (case, accents, punctuation and LaTeX braces ignored) with at
  least half of the shorter author list's surnames in common (or no authors on one side
  and a title of four words or more);
- reworded titles (word-set Jaccard >= 0.5) at different venues, with at least half of the
  shorter author list's surnames, and two, in common, and abstracts sharing >= 0.3 of their
  content words (a follow-up by the same group shares authors and title words, not its
  abstract).
Records of one corpus file never merge: a file holds one record per work (the same title
twice in one list is two papers, or a "withdrawn" placeholder).

The merged paper (`merge_group`) shows the accepted record's fields (title, abstract,
authors, venue, decision) with every member's links, the preprint's page as an `arxiv` link.
Its id is the one first seen (`canonical`): the earliest `added` stamp, a static file's
record (no stamp) counting as there from the start, the accepted record on a tie. Library
entries, daily picks and sent notices made under that id keep working, and every other id is
an alias (`Paper.aliases`) that lookups resolve to the merged paper.

A corpus's papers are grouped into works by `bot.papers.grouping` (in memory or streamed).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import replace

from bot.papers.records import Link, Paper

# Bumped whenever the rules change: a saved index keyed on it is rebuilt.
RULES_VERSION = 2
_ARXIV_ID = r"(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?"
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/" + _ARXIV_ID, re.IGNORECASE)
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\." + _ARXIV_ID + "$", re.IGNORECASE)
_ARXIV_MENTION = re.compile(r"\barxiv[:\s]\s*" + _ARXIV_ID, re.IGNORECASE)
_EPRINT = re.compile(r"\beprint\s*=\s*[{\"]\s*" + _ARXIV_ID, re.IGNORECASE)
_DOI_FIELD = re.compile(r"\bdoi\s*=\s*[{\"]\s*(10\.\d{4,9}/[^\s}\"]+)", re.IGNORECASE)
_DOI_URL = re.compile(r"doi\.org/(10\.\d{4,9}/\S+)$", re.IGNORECASE)
_FORUM = re.compile(r"openreview\.net/(?:forum|pdf)\?id=([A-Za-z0-9_-]+)")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the of for and in on to with via from by at is are as its".split())
TITLE_JACCARD = 0.5  # reworded titles: word-set overlap at least this...
ABSTRACT_JACCARD = 0.3  # ...and their abstracts' content words at least this
AUTHOR_SHARE = 0.5  # share of the shorter author list's surnames found in the other
MIN_TITLE_WORDS = 4  # an exact title alone (one side without authors) must be this long
# A workshop (or a rejected submission's) record is a version; the conference record is primary.
_LOWER_RANK = ("workshop", "reject", "withdraw", "desk reject")


def fold(text: str) -> str:
    """Lower case without accents: `Schrödinger` -> `schrodinger`."""
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in text if not unicodedata.combining(ch)).lower()


def title_words(title: str) -> list[str]:
    """A title's words as matched: folded, LaTeX braces and punctuation gone."""
    return _WORD.findall(fold(title.replace("{", "").replace("}", "")))


def title_key(title: str) -> str:
    """The normalised title two versions of a work share (`"BERT: Pre-training..."` ->
    `"bert pre training ..."`)."""
    return " ".join(title_words(title))


def surname(name: str) -> str:
    """A name's family name, folded: `"Müller, José"` and `"José Müller"` -> `"muller"`."""
    name = name.strip()
    if "," in name:
        name = name.split(",", 1)[0]
    else:
        parts = name.split()
        name = parts[-1] if parts else ""
    return "".join(_WORD.findall(fold(name)))


def surnames(paper: Paper) -> frozenset[str]:
    return frozenset(s for s in map(surname, paper.authors) if s)


def is_preprint(paper: Paper) -> bool:
    return paper.id.startswith("arxiv:") or paper.venue.casefold() == "arxiv"


def arxiv_ids(paper: Paper, *, abstract: bool = False) -> set[str]:
    """The arXiv ids a record names for itself (without the version); with `abstract`, also
    those its abstract mentions (weaker: an abstract may cite another paper)."""
    found: set[str] = set()
    if paper.id.startswith("arxiv:"):
        found.add(paper.id[len("arxiv:") :])
    # The substring tests first: a regex over every record's BibTeX is most of a corpus's cost.
    for link in paper.links:
        if "arxiv" in link.url.lower():
            found.update(m.group(1) for m in _ARXIV_URL.finditer(link.url))
            doi = _DOI_URL.search(link.url)
            if doi and (m := _ARXIV_DOI.match(doi.group(1))):
                found.add(m.group(1))
    low = paper.bibtex.lower()
    if "arxiv" in low or "eprint" in low:
        for pattern in (_EPRINT, _ARXIV_MENTION, _ARXIV_URL):
            found.update(m.group(1) for m in pattern.finditer(paper.bibtex))
    if abstract:
        for pattern in (_ARXIV_URL, _ARXIV_MENTION):
            found.update(m.group(1) for m in pattern.finditer(paper.abstract))
    return found


def dois(paper: Paper) -> set[str]:
    """DOIs of the record, lower case (DOIs are case-insensitive); arXiv's own are left to
    `arxiv_ids`."""
    found = {
        m.group(1) for link in paper.links if "doi" in link.url and (m := _DOI_URL.search(link.url))
    }
    if paper.bibtex and "doi" in paper.bibtex.lower():
        found.update(m.group(1) for m in _DOI_FIELD.finditer(paper.bibtex))
    return {d.lower().rstrip(".") for d in found if not _ARXIV_DOI.match(d)}


def forum_ids(paper: Paper) -> set[str]:
    """OpenReview forum ids: `openreview:<forum>` and forum links (a Paper Copilot record of an
    OpenReview venue links its forum)."""
    found = {
        m.group(1)
        for link in paper.links
        if "openreview" in link.url and (m := _FORUM.search(link.url))
    }
    if paper.id.startswith("openreview:"):
        found.add(paper.id[len("openreview:") :])
    return found


def identifiers(paper: Paper) -> set[str]:
    """Strong keys: two records sharing one are the same work."""
    return (
        {"arxiv:" + i for i in arxiv_ids(paper)}
        | {"doi:" + d for d in dois(paper)}
        | {"forum:" + f for f in forum_ids(paper)}
    )


def block_keys(paper: Paper) -> list[str]:
    """Keys that put possible versions of one work side by side: identifiers, the exact
    title, and (first author's surname, one of the title's three longest words) for titles that
    were reworded."""
    keys = sorted(identifiers(paper))
    words = title_words(paper.title)
    if paper.title_derived or not words:
        return keys
    keys.append("title:" + " ".join(words))
    first = surname(paper.authors[0]) if paper.authors else ""
    if first:
        longest = sorted({w for w in words if w not in _STOP}, key=lambda w: (-len(w), w))[:3]
        keys += [f"fuzzy:{first}|{w}" for w in longest]
    return keys


def _author_overlap(a: frozenset[str], b: frozenset[str]) -> tuple[int, float]:
    if not a or not b:
        return 0, 0.0
    shared = len(a & b)
    return shared, shared / min(len(a), len(b))


def same_work(a: Paper, b: Paper) -> str | None:
    """Why `a` and `b` are versions of one work ("arxiv id", "doi", "openreview id", "title",
    "similar title"), or None."""
    ids_a, ids_b = identifiers(a), identifiers(b)
    shared = ids_a & ids_b
    if shared:
        kind = sorted(shared)[0].split(":", 1)[0]
        return {"arxiv": "arxiv id", "doi": "doi", "forum": "openreview id"}[kind]
    words_a, words_b = title_words(a.title), title_words(b.title)
    if a.title_derived or b.title_derived or not words_a or not words_b:
        return None
    authors_a, authors_b = surnames(a), surnames(b)
    count, share = _author_overlap(authors_a, authors_b)
    if words_a == words_b:
        if share >= AUTHOR_SHARE:
            return "title"
        if (not authors_a or not authors_b) and len(words_a) >= MIN_TITLE_WORDS:
            return "title"
        return None
    # A reworded title is a later version, which comes out elsewhere (arXiv, another venue):
    # two records of one venue with similar titles are two papers of a series.
    if a.venue == b.venue or _jaccard(set(words_a), set(words_b)) < TITLE_JACCARD:
        return None
    # An arXiv id the abstract mentions: enough with a similar title.
    if arxiv_ids(a, abstract=True) & arxiv_ids(b, abstract=True):
        return "arxiv id"
    if share < AUTHOR_SHARE or count < min(2, len(authors_a), len(authors_b)):
        return None
    # Same authors, a reworded title: a new version keeps most of its abstract's words, a
    # follow-up paper of the same group does not.
    if _jaccard(_content(a.abstract), _content(b.abstract)) >= ABSTRACT_JACCARD:
        return "similar title"
    return None


def _content(text: str) -> set[str]:
    return set(title_words(text)) - _STOP


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


# --- merging -------------------------------------------------------------------------------


def _primary_rank(paper: Paper) -> tuple[bool, bool, int, str]:
    """Lowest first: the accepted (non-arXiv) record, not a workshop, the latest year."""
    status = (paper.status or "").casefold()
    return (is_preprint(paper), status in _LOWER_RANK, -(paper.year or 0), paper.id)


def canonical(members: Sequence[Paper], primary: Paper) -> Paper:
    """The member whose id the merged paper keeps: first seen (earliest `added`, a static
    record counting as the earliest), the primary record on a tie."""
    return min(members, key=lambda p: (p.added is not None, p.added or "", p is not primary, p.id))


def _links(primary: Paper, members: Sequence[Paper]) -> tuple[Link, ...]:
    out: list[Link] = []
    seen: set[str] = set()
    for paper in (primary, *(p for p in members if p is not primary)):
        for link in paper.links:
            kind = link.kind
            if paper is not primary and is_preprint(paper):
                kind = {"page": "arxiv", "pdf": "arxiv pdf"}.get(kind, kind)
            elif paper is not primary and kind in ("page", "pdf"):
                kind = f"{kind} ({paper.venue})" if paper.venue else kind
            if link.url not in seen:
                seen.add(link.url)
                out.append(Link(kind, link.url))
    return tuple(out)


def merge_group(members: Sequence[Paper]) -> Paper:
    """One paper for the versions in `members` (one alone comes back as it is)."""
    if len(members) == 1:
        return members[0]
    primary = min(members, key=_primary_rank)
    keep = canonical(members, primary)
    others = [p for p in members if p is not primary]
    aliases = {p.id for p in members} | {a for p in members for a in p.aliases}
    aliases.discard(keep.id)
    added = None if any(p.added is None for p in members) else min(p.added or "" for p in members)
    return replace(
        primary,
        id=keep.id,
        abstract=primary.abstract or next((p.abstract for p in others if p.abstract), ""),
        authors=primary.authors or next((p.authors for p in others if p.authors), ()),
        tldr=primary.tldr or next((p.tldr for p in others if p.tldr), ""),
        links=_links(primary, members),
        added=added,
        aliases=tuple(sorted(aliases)),
    )


def accepted_note(paper: Paper) -> str | None:
    """`accepted at ICLR 2026 (oral)` for a merged preprint, else None."""
    ids = (paper.id, *paper.aliases)
    if paper.venue.casefold() == "arxiv" or not any(i.startswith("arxiv:") for i in ids):
        return None
    decision = (paper.status or "").strip()
    note = f"accepted at {paper.venue}"
    return note + (f" ({decision.lower()})" if decision else "")

"""From a message's text to its papers: the corpus first, then arXiv or OpenReview on demand.

`find_papers` is what "Find papers", the link replies and the console's `find` all run: the
mentions of `bot.papers.mentions`, each looked up in the corpus (arXiv ids as `arxiv:<id>` or
a corpus id ending in it, OpenReview forums likewise, a quoted title by the engine's title
match when it really is that title), and what the corpus lacks fetched through
`OnDemand` when one is given. A DOI that is not arXiv's can only be found in the corpus; the
answer then links it.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

from bot.links.fetching import OnDemand
from bot.papers.latex import display_title
from bot.papers.mentions import ARXIV, DOI, OPENREVIEW, TITLE, Mention, find_mentions
from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from bot.search.results import SearchError

CORPUS = "corpus"
TITLE_PREFIX = 20  # a quoted title may be the start of one, from this many characters


@dataclass(frozen=True, slots=True)
class Found:
    """One mention and its paper: `source` is "corpus", "arXiv" or "OpenReview" (fetched now),
    or "" when it was not found."""

    mention: Mention
    paper: Paper | None
    source: str = ""

    @property
    def in_corpus(self) -> bool:
        return self.source == CORPUS


@dataclass
class Finding:
    """Everything a message names, in its order, and what could not be fetched."""

    found: list[Found] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def papers(self) -> list[Found]:
        return [f for f in self.found if f.paper is not None]

    @property
    def missing(self) -> list[Found]:
        return [f for f in self.found if f.paper is None]


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split()).rstrip(".…")


def _by_id(engine: SearchEngine, prefix: str, key: str) -> Paper | None:
    """`prefix:key`, else a corpus id ending in `/key` or `:key` (a venue's own prefix)."""
    for ref in (f"{prefix}:{key}", key):
        try:
            paper = engine.paper(ref)
        except SearchError:
            continue
        if paper.id == ref or paper.id.endswith(("/" + key, ":" + key)):
            return paper
    return None


def in_corpus(engine: SearchEngine, mention: Mention) -> Paper | None:
    """The corpus paper `mention` names, or None."""
    if mention.kind == ARXIV:
        return _by_id(engine, "arxiv", mention.key)
    if mention.kind == OPENREVIEW:
        return _by_id(engine, "openreview", mention.key)
    if mention.kind == DOI:
        return _by_id(engine, "doi", mention.key)
    if mention.kind == TITLE:
        try:
            paper = engine.paper(mention.key)
        except SearchError:
            return None
        want, have = _fold(mention.key), _fold(display_title(paper.title))
        if have == want or (len(want) >= TITLE_PREFIX and have.startswith(want)):
            return paper
    return None


async def find_papers(text: str, engine: SearchEngine, fetcher: OnDemand | None = None) -> Finding:
    """The papers `text` names, in its order; those not in the corpus fetched by `fetcher`."""
    mentions = find_mentions(text)
    local = {m: in_corpus(engine, m) for m in mentions}
    fetched = None
    if fetcher is not None:
        arxiv_ids = [m.key for m in mentions if m.kind == ARXIV and local[m] is None]
        forums = [m.key for m in mentions if m.kind == OPENREVIEW and local[m] is None]
        if arxiv_ids or forums:
            fetched = await fetcher.fetch(arxiv_ids, forums)
    finding = Finding(problems=list(fetched.problems) if fetched else [])
    for mention in mentions:
        paper = local[mention]
        if paper is not None:
            finding.found.append(Found(mention, paper, CORPUS))
            continue
        remote = None
        if fetched is not None and mention.kind in (ARXIV, OPENREVIEW):
            remote = fetched.papers.get(f"{mention.kind}:{mention.key}")
        source = "arXiv" if mention.kind == ARXIV else "OpenReview"
        finding.found.append(Found(mention, remote, source if remote else ""))
    return finding

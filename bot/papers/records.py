"""The paper record and its links: plain, immutable, shared by every layer.

Nothing here imports `discord` or numpy: sources, the search core, the features and the
console all hold these records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Link:
    """A URL attached to a paper. `kind` is one of: page, pdf, code, project, other."""

    kind: str
    url: str


@dataclass(frozen=True, slots=True)
class Paper:
    """One paper as loaded from a corpus file; immutable so an index can share it safely."""

    id: str
    title: str
    abstract: str
    venue: str
    year: int | None = None
    authors: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    status: str | None = None
    keywords: tuple[str, ...] = ()
    # What the source carries beyond the abstract (Paper Copilot lists: TL;DRs on OpenReview
    # venues, BibTeX on ~99 % of records): shown and exported, never invented.
    tldr: str = ""
    bibtex: str = ""
    # True when the title is a headline we derived from the abstract (the seed has no titles):
    # renderers may mark it so nobody mistakes it for the authors' own title.
    title_derived: bool = False
    # When this corpus first saw the paper (ISO-8601 UTC, `2026-12-01T06:00:00Z`), written by
    # `python -m bot fetch`; None for papers of static files. Drives /new and the `new` pool.
    added: str | None = None
    # Other ids of the same work merged into this paper (`bot.papers.versions`): an arXiv
    # preprint's `arxiv:<id>` on its accepted record, or the reverse. Lookups by an alias find
    # this paper, so a library entry or a daily pick made under either id keeps working.
    aliases: tuple[str, ...] = ()

    def link(self, kind: str) -> str | None:
        for link in self.links:
            if link.kind == kind:
                return link.url
        return None

    def to_json(self) -> dict[str, Any]:
        extra = {"aliases": list(self.aliases)} if self.aliases else {}
        return {
            "id": self.id,
            "title": self.title,
            "title_derived": self.title_derived,
            "venue": self.venue,
            "year": self.year,
            "authors": list(self.authors),
            "status": self.status,
            "keywords": list(self.keywords),
            "tldr": self.tldr,
            "abstract": self.abstract,
            "bibtex": self.bibtex,
            "links": [{"kind": link.kind, "url": link.url} for link in self.links],
            "added": self.added,
            **extra,
        }

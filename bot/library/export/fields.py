"""What RIS and CSL-JSON both say about a paper, read once: plain-text title and abstract, names
split into family and given, the DOI, the arXiv id and the best URL."""

from __future__ import annotations

from dataclasses import dataclass

from bot.papers import versions
from bot.papers.latex import latex_to_unicode
from bot.papers.records import Paper


def split_name(name: str) -> tuple[str, str]:
    """(family, given): `"Müller, José"` and `"José Müller"` -> ("Müller", "José"); a single
    word is a family name."""
    name = " ".join(name.split())
    if "," in name:
        family, given = name.split(",", 1)
        return family.strip(), given.strip()
    given, _, family = name.rpartition(" ")
    return family, given


@dataclass(frozen=True, slots=True)
class Citation:
    """One paper as reference managers describe it."""

    paper_id: str
    title: str
    authors: tuple[tuple[str, str], ...]
    year: int | None
    venue: str
    preprint: bool
    abstract: str
    keywords: tuple[str, ...]
    url: str
    doi: str
    arxiv: str

    @classmethod
    def of(cls, paper: Paper) -> Citation:
        arxiv = sorted(versions.arxiv_ids(paper))
        dois = sorted(versions.dois(paper))
        url = paper.link("page") or paper.link("arxiv") or paper.link("pdf") or ""
        return cls(
            paper_id=paper.id,
            title=" ".join(latex_to_unicode(paper.title).split()),
            authors=tuple(split_name(a) for a in paper.authors),
            year=paper.year,
            venue=paper.venue,
            preprint=paper.venue.casefold() == "arxiv",
            abstract=" ".join(latex_to_unicode(paper.abstract).split()),
            keywords=paper.keywords,
            url=url,
            doi=dois[0] if dois else "",
            arxiv=arxiv[0] if arxiv else "",
        )

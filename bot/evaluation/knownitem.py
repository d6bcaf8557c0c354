"""Known-item sets built from conference paper lists: a paper's own words as the query.

Researchers often look for one paper they half remember: its title, its keywords, what its
abstract opens with, what it is about in one sentence. Each set here takes one of those as the
query and the paper itself as the only relevant answer, so nDCG@10 and MRR@10 say how high the
bot puts the paper people meant. Papers are split in two halves by a hash of their id: `train`
to tune on, `test` to report, so the figures in docs/search-quality.md come from papers no
default was chosen on.

The `tldr` kind is the authors' own one-sentence summary (OpenReview's TL;DR, which the index
does not hold): unlike the other kinds its words are not copied from the indexed text, so it
is the held-out kind of query that says whether defaults tuned on the others carry over.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.papers.latex import display_title, latex_to_unicode
from bot.papers.records import Paper

KINDS = ("title", "keywords", "first-sentence", "tldr")
SPLITS = ("train", "test", "all")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


@dataclass(frozen=True, slots=True)
class KnownItemSet:
    name: str
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def split_of(paper_id: str) -> str:
    """`train` or `test`, fixed per paper (a hash of its id), independent of corpus order."""
    return "train" if hashlib.sha1(paper_id.encode()).digest()[0] % 2 == 0 else "test"


def first_sentence(abstract: str, max_words: int = 40) -> str:
    text = " ".join(latex_to_unicode(abstract).split())
    sentence = _SENTENCE_END.split(text, maxsplit=1)[0]
    return " ".join(sentence.split()[:max_words])


def query_for(paper: Paper, kind: str) -> str:
    """The paper's own words for one kind of known-item query ("" when it has none)."""
    if kind == "title":
        return "" if paper.title_derived else display_title(paper.title)
    if kind == "keywords":
        return " ".join(paper.keywords)
    if kind == "first-sentence":
        return first_sentence(paper.abstract)
    if kind == "tldr":
        return " ".join(latex_to_unicode(paper.tldr).split())
    raise ValueError(f"unknown known-item kind {kind!r}; choose one of {', '.join(KINDS)}")


def known_item_set(papers: Sequence[Paper], kind: str, split: str = "all") -> KnownItemSet:
    """Queries (and their one relevant paper) of `kind` for the papers of `split`."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    for paper in papers:
        if split != "all" and split_of(paper.id) != split:
            continue
        text = query_for(paper, kind)
        # Query syntax must not bite: a keyword list is words, not `-exclusions` or `key:`s.
        text = re.sub(r'["]|(?<!\w)-|\b(author|venue|year):', " ", text).strip()
        if text:
            queries[paper.id] = text
            qrels[paper.id] = {paper.id: 1}
    return KnownItemSet(f"{kind} ({split})", queries, qrels)

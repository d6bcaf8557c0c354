"""The query behind "more like this" (`/similar`): what a paper is about, not its words.

The query used to be the paper's 25 most distinctive terms by tf-idf over its indexed text.
That text is mostly abstract, and an abstract is mostly genre: citation residue ("Jang et
al., 2016", "<cit.>"), years, and the boilerplate every paper has ("end-to-end",
"state-of-the-art", "outperforms"). Those words are rare enough to look distinctive and
drove the list (issue 27: for *Gumbel-Sinkhorn Networks* the neighbours matched on "et al"
and "2016").

Here the query is built field by field: citation residue is cut from the text first, the
genre's filler words are dropped, and the fields that name the topic count more than the
abstract — title and author keywords `TOPIC_WEIGHT` times, the TL;DR `TLDR_WEIGHT` times —
before MoreLikeThis's tf-idf choice (`feedback.distinctive_terms`). Each chosen term's query
weight follows its tf-idf (`weight_of`), so the paper's own topic words dominate the ranking
and a term picked up from one sentence of the abstract only tips the balance. Measured in
docs/search-quality.md ("More like this") with `python -m benchmarks.similar`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.papers.records import Paper
from bot.search.query.feedback import distinctive_terms

# Title and keywords name the topic; the TL;DR says it in a sentence; the abstract counts 1.
TOPIC_WEIGHT = 3.0
TLDR_WEIGHT = 2.0
# The weight of the weakest chosen term against the strongest's 1.0 (`weight_of`).
WEAKEST = 0.1

# Citation residue: "Smith et al. (2016)", "[12, 14]", "<cit.>", years such as 2016 or 1998a.
CITATION = re.compile(
    r"(?-i:(?:\b[A-Z][\w'-]*\s+(?:and\s+[A-Z][\w'-]*\s+)?)?)\bet\.?\s+al\b\.?"
    r"|<\s*cit\.?\s*>|\[\s*\d[\d,;\s–-]*\]|\b(?:19|20)\d\d[a-z]?\b",
    re.IGNORECASE,
)

# The genre's words: in many abstracts whatever the topic, so they say nothing about it.
FILLER = """
end-to-end state-of-the-art via propose proposed proposes proposing present presents introduce
introduces novel new paper
approach approaches method methods technique framework show shows shown demonstrate
demonstrates experiment experiments experimental empirical empirically result results
outperform outperforms outperforming existing previous prior recent recently work works
state art sota end significantly significant effective effectively efficient efficiently
simple various several able allow allows also however based use using used well achieve
achieves achieving improve improves improved improvement better benchmark benchmarks
extensive extensively key general task tasks problem problems challenging challenge address
addresses widely known first study studies consider paper's propose show furthermore
moreover thus therefore conduct conducted evaluate evaluated evaluation demonstrating
competitive superior strong stronger leading leverage leverages leveraging enable enables
"""
FILLER_TEXT = " ".join(FILLER.split())


@dataclass(frozen=True, slots=True)
class SimilarQuery:
    """Terms (strongest first) and their query weights (1.0 for the strongest)."""

    terms: tuple[str, ...]
    weights: tuple[float, ...]


def clean_citations(text: str) -> str:
    """`text` without citation residue: author-year references, bracketed numbers, years."""
    return CITATION.sub(" ", text)


def weighted_counts(paper: Paper, analyze: Callable[[str], list[str]]) -> dict[str, float]:
    """Each term's frequency in the paper, the topic fields' occurrences counted more and
    citation residue and filler left out."""
    filler = frozenset(analyze(FILLER_TEXT))  # the index's forms (stems) of the words
    counts: defaultdict[str, float] = defaultdict(float)
    fields: Sequence[tuple[str, float]] = (
        (paper.title, TOPIC_WEIGHT),
        ("; ".join(paper.keywords), TOPIC_WEIGHT),
        (paper.tldr, TLDR_WEIGHT),
        (paper.abstract, 1.0),
    )
    for text, weight in fields:
        if not text:
            continue
        for term in analyze(clean_citations(text)):
            if term not in filler and not term.isdigit():
                counts[term] += weight
    return dict(counts)


def weight_of(score: float, best: float) -> float:
    """A term's query weight: its tf-idf against the best term's, between WEAKEST and 1."""
    return WEAKEST + (1 - WEAKEST) * (score / best) if best > 0 else 1.0


def similar_query(
    paper: Paper,
    analyze: Callable[[str], list[str]],
    df: Callable[[str], int],
    n_docs: int,
    limit: int,
) -> SimilarQuery:
    """The "more like this" query for `paper` over an index of `n_docs` documents."""
    chosen = distinctive_terms(weighted_counts(paper, analyze), df, n_docs, limit)
    if not chosen:
        return SimilarQuery((), ())
    best = chosen[0][1]
    return SimilarQuery(
        tuple(term for term, _score in chosen),
        tuple(weight_of(score, best) for _term, score in chosen),
    )

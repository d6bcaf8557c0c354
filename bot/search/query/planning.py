"""A query's plan (`SearchEngine.plan`): its text parsed, analysed as the documents were,
its filters merged and checked, and widened by feedback from its best first-pass hits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.search.query.feedback import expand
from bot.search.query.parser import merge_filters, parse_query
from bot.search.results import BadFilter, EmptyQuery, Filters, Plan
from bot.search.suggest.queries import names_for, suggest_query

if TYPE_CHECKING:
    from bot.search.parts import EngineParts


def make_plan(
    parts: EngineParts, query: str, filters: Filters | None = None, *, suggest: bool = False
) -> Plan:
    """`query` parsed and analysed as every surface runs it; EmptyQuery when it holds
    neither a word to rank by nor a filter to list by.

    With `prf_docs`/`prf_terms`/`prf_weight` set, the query is widened with words of its
    best first-pass hits (`bot.search.query.feedback`). `suggest` looks for corrections of words
    the index does not know (people see them; evaluation and daily pools need none).
    """
    parsed = parse_query(query or "")
    if parsed.problems:
        raise BadFilter(" ".join(parsed.problems))
    s = parts.settings
    terms, term_weights = parts.analyzer.query_terms(parsed.text, s.compound_weight)
    merged = merge_filters(parsed.filters, filters)
    if not terms and merged.is_empty():
        if parsed.text.strip():
            raise EmptyQuery(
                "Nothing to search for: those are all very common words. "
                "Try the words that make the paper special."
            )
        raise EmptyQuery()
    if merged.venue:
        parts.lookups.resolve_venues(merged.venue)  # an unknown venue is an error, said now
    phrases, notices = _phrases_found(parts, parsed.phrases)
    # All-1 weights are left out so a plain query scores exactly as rank_bm25 would.
    weights: Sequence[float] | None = None
    if any(w != 1.0 for w in term_weights):
        weights = term_weights
    extra: tuple[str, ...] = ()
    if terms and s.prf_docs > 0 and s.prf_terms > 0 and s.prf_weight > 0:
        ids, scores = parts.index.score(terms, weights)
        expansion = expand(
            terms,
            ids,
            scores,
            parts.doc_terms,
            docs=s.prf_docs,
            n_terms=s.prf_terms,
            weight=s.prf_weight,
            weights=weights,
        )
        extra = expansion.added
        if extra:
            weights = expansion.weights
    return Plan(
        query=query,
        terms=tuple(terms),
        weights=tuple(weights) if weights is not None else None,
        filters=merged,
        phrases=tuple(phrases),
        excludes=parsed.excludes,
        extra=extra,
        suggestion=_suggestion(parts, query, terms, phrases) if suggest else None,
        notices=notices,
        sort=parsed.sort,
    )


def _phrases_found(
    parts: EngineParts, typed: Sequence[str]
) -> tuple[list[tuple[str, ...]], tuple[str, ...]]:
    """The quoted phrases as terms, and a notice for each that no paper holds.

    A phrase some paper holds stays a hard requirement. One that no paper in the corpus holds
    would empty the list whatever else was typed (a TL;DR quoting "stay in the sun"), so it is
    dropped: its words still rank (they are among the query's terms), and the page says so."""
    phrases: list[tuple[str, ...]] = []
    notices: list[str] = []
    for text in typed:
        terms = tuple(parts.analyzer(text))
        if not terms:
            continue
        if not parts.index.phrase_docs(terms).shape[0]:
            notices.append(f'No paper has the phrase "{text}"; best matches for its words:')
            continue
        phrases.append(terms)
    return phrases, tuple(notices)


def _suggestion(
    parts: EngineParts, query: str, terms: Sequence[str], phrases: Sequence[tuple[str, ...]]
) -> str | None:
    """Did you mean (`bot.search.suggest.queries`): words against the papers' words, author
    names against the author index."""
    names = names_for(parts.speller, parts.lookups.authors)
    return suggest_query(parts.speller, query, terms, phrases, names)

"""A query's plan (`SearchEngine.plan`): its text parsed, analysed as the documents were,
its filters merged and checked, and widened by feedback from its best first-pass hits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.search.query.feedback import expand
from bot.search.query.parser import merge_filters, parse_query
from bot.search.results import BadFilter, EmptyQuery, Filters, Plan

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
    phrases = [tuple(t) for t in (parts.analyzer(p) for p in parsed.phrases) if t]
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
        suggestion=parts.speller.suggest_query(query, terms, phrases) if suggest else None,
    )

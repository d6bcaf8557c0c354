"""Property-based tests: arbitrary input never escapes as an exception from the search core."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.papers.corpus import load_file
from bot.search.analysis.analyzer import Analyzer
from bot.search.analysis.snippets import make_snippet
from bot.search.query.parser import parse_query
from bot.search.results import SearchError

A = Analyzer()
NASTY = st.text(alphabet=st.characters(codec="utf-8"), max_size=300) | st.sampled_from(
    [
        '- " author:',
        '"""',
        "-",
        "author:",
        "venue:",
        "year:",
        "$\\frac{",
        "\\textit{",
        "$$",
        "\x00\x00",
        "🚀🔥 transformers",
        "a" * 6000,
        " ".join(["-x"] * 500),
        "\\" * 50,
        "$\\ell_1$-regression",
        "**A**ttribution",
        "((((",
        "year:99999",
        "venue:\x00",
    ]
)


@given(NASTY)
def test_analyzer_never_fails_and_returns_terms(text):
    terms = A(text)
    assert all(isinstance(t, str) for t in terms)
    assert all(terms)
    assert all(" " not in t for t in terms)
    assert all(0 <= s < e <= len(text) for s, e, _t in A.token_spans(text))


@given(NASTY)
def test_parser_never_fails(text):
    parsed = parse_query(text)
    assert "\x00" not in parsed.text


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=150)
@given(query=NASTY, limit=st.integers(-5, 500), offset=st.integers(-5, 10_000))
def test_search_answers_or_says_why(icml_engine, query, limit, offset):
    try:
        result = icml_engine.search(query, limit=limit, offset=offset)
    except SearchError as exc:
        result, why = None, str(exc)
    if result is None:
        assert why  # refused with a reason for the user
        return
    assert len(result.hits) <= 100
    assert all(hit.score > 0 for hit in result.hits)
    assert result.total >= len(result.hits)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=80)
@given(NASTY)
def test_lookups_answer_or_say_why(icml_engine, ref):
    try:
        icml_engine.paper(ref)
        why = ""
    except SearchError as exc:
        why = str(exc)
    assert why == "" or "No such paper" in why
    assert len(icml_engine.complete(ref)) <= 25


@given(st.text(max_size=2000), st.sets(st.text(min_size=1, max_size=8), max_size=5))
def test_snippets_never_fail(abstract, terms):
    snippet = make_snippet(abstract, terms, A, lambda t: 1.0)
    assert snippet.count("**") % 2 == 0


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
RECORDS = st.fixed_dictionaries(
    {},
    optional={
        "id": JSON_VALUES,
        "title": JSON_VALUES,
        "abstract": JSON_VALUES,
        "authors": JSON_VALUES,
        "year": JSON_VALUES,
        "links": JSON_VALUES,
        "venue": JSON_VALUES,
        "status": JSON_VALUES,
        "keywords": JSON_VALUES,
        "author": JSON_VALUES,
        "_id": JSON_VALUES,
        "text": JSON_VALUES,
    },
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(
    records=st.lists(RECORDS | JSON_VALUES, max_size=6),
    junk=st.binary(max_size=60),
    name=st.sampled_from(["c.jsonl", "colm2025.json", "corpus.jsonl"]),
)
def test_loaders_report_bad_records_and_never_crash(tmp_path_factory, records, junk, name):
    path = tmp_path_factory.mktemp("corpus") / name
    if name.endswith(".json"):
        body = ("[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]").encode() + junk
    else:
        body = b"\n".join(json.dumps(r).encode() for r in records) + b"\n" + junk
    path.write_bytes(body)
    report = load_file(path)
    for paper in report.papers:
        assert paper.id
        assert paper.title or paper.abstract
    assert all(p.startswith(str(path)) for p in map(str, report.problems))

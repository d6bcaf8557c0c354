from bot.search.query.parser import merge_filters, parse_query
from bot.search.results import Filters


def test_plain_words():
    q = parse_query("optimal transport")
    assert q.words == "optimal transport"
    assert q.phrases == ()
    assert q.filters.is_empty()


def test_phrases_excludes_and_filters():
    q = parse_query('"world model" robot -diffusion author:"Le Cun" venue:colm year:2025')
    assert q.phrases == ("world model",)
    assert q.words == "robot"
    assert q.excludes == ("diffusion",)
    assert q.filters == Filters(venue="colm", year=2025, authors=("Le Cun",))
    assert q.text == "robot world model"


def test_broken_syntax_reads_as_words():
    q = parse_query('unbalanced "quote here')
    assert q.phrases == ()
    assert "quote" in q.words
    q = parse_query("- author: year:soon k-means")
    assert q.words == "k-means"
    assert any("author:" in note for note in q.notes)
    assert any("year:soon" in problem for problem in q.problems)
    assert parse_query("").text == ""
    assert parse_query("a\x00b").words == "a b"


def test_excluded_phrase_and_curly_quotes():
    q = parse_query('“flow matching” -"audio generation"')
    assert q.phrases == ("flow matching",)
    assert q.excludes == ("audio generation",)


def test_explicit_filters_win():
    parsed = parse_query("x venue:colm").filters
    merged = merge_filters(parsed, Filters(venue="icml", year=2026))
    assert merged.venue == "icml"
    assert merged.year == 2026
    assert merge_filters(parsed, None) is parsed


def test_sort_takes_its_names_and_their_spellings():
    assert parse_query("diffusion").sort == "relevance"
    assert parse_query("diffusion sort:new").sort == "new"
    assert parse_query("sort:Newest diffusion").words == "diffusion"
    assert parse_query("diffusion sort:oldest").sort == "old"
    assert parse_query("diffusion sort:venue").sort == "venue"
    assert parse_query("diffusion sort:new sort:relevance").sort == "relevance"  # the last wins


def test_an_unknown_sort_is_a_problem_that_names_the_orders():
    problems = parse_query("diffusion sort:size").problems
    assert len(problems) == 1
    assert "`sort:size` is not an order" in problems[0]
    for order in ("sort:new", "sort:old", "sort:venue", "sort:relevance"):
        assert order in problems[0]
    assert any("sort:" in note for note in parse_query("diffusion sort:").notes)

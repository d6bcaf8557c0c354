"""Did you mean offers a suggestion only when it is better (issue 27): never for a name the
author index knows or a word papers use often, author values corrected against the author index
only, the written word rather than a stem's neighbour, and no guess between two words."""

import pytest

from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from bot.search.suggest.names import NameSpeller
from tests.search import querycorpus


@pytest.fixture(scope="module")
def engine() -> SearchEngine:
    return querycorpus.engine()


@pytest.mark.parametrize(
    "query",
    [
        'author:"Sergey Levine"',  # picked from the author autocomplete: was "series levie"
        "Sergey Levine",
        "Yoshua",
        "Bengio",  # was "engin"
        "Yoshua Bengio",
        "Percy Liang",
        'author:"Y. Bengio"',
        'author:"Yoshua Bengío"',
        "author:bengio",
        "transformer language",  # words many papers use
        "agents",
    ],
)
def test_known_names_and_words_get_no_suggestion(engine, query) -> None:
    assert engine.search(query).suggestion is None


@pytest.mark.parametrize(
    ("query", "meant"),
    [
        ('author:"Sergey Levnie"', 'author:"Sergey Levine"'),
        ('author:"Srgey Levine"', 'author:"Sergey Levine"'),
        ('author:"per laing"', 'author:"Percy Liang"'),  # a first name's start and a swap
        ('author:"Y. Bengoi"', 'author:"Y. Bengio"'),  # initials stay as typed
        ("author:levnie", 'author:"Levine"'),  # a surname alone stays a surname: both Levines
        ('diffusion author:"Sergey Levnie"', 'diffusion author:"Sergey Levine"'),
    ],
)
def test_author_values_are_corrected_against_the_author_index(engine, query, meant) -> None:
    assert engine.search(query).suggestion == meant


def test_author_values_are_never_corrected_into_words(engine) -> None:
    # "transformer" is a word of many papers and no author's name: nothing to offer.
    assert engine.search('author:"transformer"').suggestion is None
    assert engine.search('author:"tranformer"').suggestion is None


def test_two_names_as_close_are_no_correction() -> None:
    papers = [
        Paper(id=f"p{i}", title="t", abstract="a", venue="V", authors=(name,))
        for i, name in enumerate(("Yang Zhang", "Yan Zhang"))
    ]
    names = NameSpeller(SearchEngine(papers).lookups.authors)
    assert names.correct("Yanq Zhang") is None  # Yang or Yan?
    assert names.correct("Yanng Zhang") == "Yang Zhang"


def test_the_written_word_not_a_frequent_stems_neighbour(engine) -> None:
    # `agention` stems to "agent", in every paper; papers write "agent", four edits away.
    assert engine.search("atention").suggestion == "attention"
    assert engine.search("Atention").suggestion == "Attention"  # the case typed


def test_a_rare_word_beside_a_frequent_one_is_a_typo_papers_made(engine) -> None:
    # One paper writes "tranformer" and "langauge": known, but twenty papers write the words.
    assert engine.index.doc_freq("tranform") == 1
    assert engine.search("tranformer langauge").suggestion == "transformer language"


def test_acronyms_and_short_rare_words_are_left_alone() -> None:
    papers = [
        Paper(id=f"p{i}", title="Vision transformers", abstract="Real images.", venue="V")
        for i in range(30)
    ]
    papers.append(Paper(id="x", title="SEAL: steering", abstract="Void tests.", venue="V"))
    engine = SearchEngine(papers)
    assert engine.search("SEAL").suggestion is None  # not "REAL"
    assert engine.search("void").suggestion is None  # short: a name as often as a typo

import pytest

from bot.search.suggest.authors import AuthorIndex, name_matches, name_words

AUTHORS = [
    ("Michael I. Jordan", "Ada Lovelace"),
    ("Bernhard Schölkopf",),
    ("Jordan, Michael",),
    ("M. Jordan", "Jordan Smith"),
    ("Alan Turing",),
]


@pytest.mark.parametrize(
    ("typed", "listed", "matches"),
    [
        ("jordan", "Michael I. Jordan", True),
        ("Michael Jordan", "Michael I. Jordan", True),
        ("michael jordan", "Jordan, Michael I.", True),
        ("Jordan, Michael", "Michael I. Jordan", True),
        ("M Jordan", "Michael I. Jordan", True),
        ("Michael Jordan", "M. I. Jordan", True),
        ("MICHAEL JORDAN", "Michael I. Jordan", True),
        ("scholkopf", "Bernhard Schölkopf", True),
        ("Bernhard Schölkopf", "bernhard scholkopf", True),
        ("Jordan Michael", "Michael I. Jordan", False),
        ("michael jordan", "Jordan Smith", False),
        ("jord", "Michael I. Jordan", False),
    ],
)
def test_name_matching(typed, listed, matches):
    assert name_matches(name_words(typed), name_words(listed)) is matches


def test_last_first_is_turned_around():
    assert name_words("Jordan, Michael I.") == ("michael", "i", "jordan")
    assert name_words("  Schölkopf ") == ("scholkopf",)


def test_index_finds_papers_by_any_spelling():
    index = AuthorIndex.build(AUTHORS)
    assert index.docs("jordan").tolist() == [0, 2, 3]
    assert index.docs("Michael Jordan").tolist() == [0, 2, 3]
    assert index.docs("Jordan, Michael").tolist() == [0, 2, 3]
    assert index.docs("scholkopf").tolist() == [1]
    assert index.docs("Grace Hopper").tolist() == []


def test_one_name_per_spelling_with_its_papers():
    index = AuthorIndex.build([("A. B",), ("A.  B",), ("a b",)])
    assert index.names == ["A. B"]
    assert index.papers == [[0, 1, 2]]


def test_complete_offers_names_most_prolific_first():
    index = AuthorIndex.build([*AUTHORS, ("Michael I. Jordan",)])
    names = [name for name, _count in index.complete("jor")]
    assert names[0] == "Michael I. Jordan"
    assert set(names) == {"Michael I. Jordan", "Michael Jordan", "M. Jordan", "Jordan Smith"}
    offered = [n for n, _c in index.complete("michael jo")]
    assert offered == ["Michael I. Jordan", "M. Jordan", "Michael Jordan"]
    assert index.complete("", limit=1) == [("Michael I. Jordan", 2)]
    assert index.complete("zzz") == []

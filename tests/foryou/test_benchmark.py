"""`benchmarks/foryou.py` runs end to end on lists it makes itself (no ../shared needed): the
members are found, every system is scored, and For you finds a member's later papers."""

from __future__ import annotations

import pytest

from benchmarks.foryou import evaluate, members
from bot.config import SearchSettings
from bot.papers.records import Paper
from bot.search import SearchEngine


def paper(n: int, venue: str, authors: tuple[str, ...], text: str) -> Paper:
    return Paper(
        id=f"{venue}/{n}", title=text, abstract=text, venue=venue, year=2020, authors=authors
    )


TOPICS = ["hyperbolic trees embedding", "protein folding structure", "rainfall weather radar"]


def test_members_and_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    lists: dict[str, list[Paper]] = {"old": [], "new": []}
    for a, topic in enumerate(TOPICS):
        for i in range(3):
            lists["old"].append(paper(10 * a + i, "old", (f"author{a}",), f"{topic} part {i}"))
        for i in range(2):
            lists["new"].append(paper(10 * a + i, "new", (f"author{a}",), f"{topic} sequel {i}"))
    engine = SearchEngine([*lists["old"], *lists["new"]], settings=SearchSettings())
    found = members(lists, ("old",), ("new",))
    assert [sorted(wanted) for _library, wanted in found] == [
        ["new/0", "new/1"],
        ["new/10", "new/11"],
        ["new/20", "new/21"],
    ]
    evaluate(engine, lists, {"tiny": (("old",), ("new",))})
    rows = [line.split(" | ") for line in capsys.readouterr().out.splitlines()[2:]]
    systems = {row[2]: float(row[3]) for row in rows}
    assert set(systems) == {"follow (best)", "follow (hindsight)", "more like this", "for you"}
    assert systems["for you"] == 1.0  # each member's later papers rank first

"""Every way a chat message names a paper (`bot.papers.mentions`)."""

from __future__ import annotations

import pytest

from bot.papers.mentions import ARXIV, DOI, OPENREVIEW, TITLE, Mention, find_mentions


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://arxiv.org/abs/2401.01234v2", [Mention(ARXIV, "2401.01234", 2)]),
        ("arxiv.org/pdf/2401.01234.pdf", [Mention(ARXIV, "2401.01234")]),
        ("https://arxiv.org/html/2401.01234v1", [Mention(ARXIV, "2401.01234", 1)]),
        ("https://export.arxiv.org/abs/1605.08386", [Mention(ARXIV, "1605.08386")]),
        ("read arXiv:2105.12345 today", [Mention(ARXIV, "2105.12345")]),
        ("see 2401.01234v3.", [Mention(ARXIV, "2401.01234", 3)]),
        ("old hep-th/9901001 paper", [Mention(ARXIV, "hep-th/9901001")]),
        ("https://arxiv.org/abs/math.GT/0309136v1", [Mention(ARXIV, "math.GT/0309136", 1)]),
        ("https://arxiv.org/abs/astro-ph/0601001", [Mention(ARXIV, "astro-ph/0601001")]),
        (
            "https://openreview.net/forum?id=AbC_12-xy&noteId=zz",
            [Mention(OPENREVIEW, "AbC_12-xy")],
        ),
        ("openreview.net/pdf?id=Hk9Xc_lR-", [Mention(OPENREVIEW, "Hk9Xc_lR-")]),
        ("doi:10.1145/3292500.3330701.", [Mention(DOI, "10.1145/3292500.3330701")]),
        (
            "https://doi.org/10.1038/S41586-021-03819-2)",
            [Mention(DOI, "10.1038/s41586-021-03819-2")],
        ),
        ("https://doi.org/10.48550/arXiv.2402.00002", [Mention(ARXIV, "2402.00002")]),
        ('the "Attention Is All You Need" paper', [Mention(TITLE, "Attention Is All You Need")]),
        (
            "“Deep Residual Learning for Image Recognition”",
            [Mention(TITLE, "Deep Residual Learning for Image Recognition")],
        ),
    ],
)
def test_each_form(text: str, expected: list[Mention]) -> None:
    assert find_mentions(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "pi is 3.14159 and 2023.12345 is no month",
        "version 1.2.3, v2401.01234x, 12401.01234",
        'he said "ok then" twice',  # a quote of two words is no title
        "https://example.org/abs/2401.01234",  # another site's path
        "",
    ],
)
def test_nothing_where_there_is_no_paper(text: str) -> None:
    assert find_mentions(text) == []


def test_order_once_each_and_limit() -> None:
    text = (
        "2401.01234 then https://arxiv.org/abs/2401.01234v2 and hep-th/9901001, "
        "doi 10.1145/1.2 and openreview.net/forum?id=XyZ98765ab"
    )
    found = find_mentions(text)
    assert [m.kind for m in found] == [ARXIV, ARXIV, DOI, OPENREVIEW]
    assert found[0] == Mention(ARXIV, "2401.01234")
    many = " ".join(f"2401.{i:05d}" for i in range(20))
    assert len(find_mentions(many)) == 10
    assert found[0].url == "https://arxiv.org/abs/2401.01234"
    assert Mention(ARXIV, "2401.01234", 2).label == "arXiv 2401.01234v2"

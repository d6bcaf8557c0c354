"""Discord's limits: every cut fits, lands on a word boundary, and keeps markdown whole."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.app import limits

words = st.lists(st.text(alphabet="abcdefghij*[]()é", min_size=1, max_size=12), max_size=60)


def test_short_text_is_untouched() -> None:
    assert limits.truncate("optimal transport", 100) == "optimal transport"
    assert limits.truncate(None, 10) == ""


def test_cut_at_word_boundary_with_ellipsis() -> None:
    text = "Sinkhorn parameterized variational inference for optimal transport"
    out = limits.truncate(text, 30)
    assert out == "Sinkhorn parameterized…"
    assert len(out) <= 30


def test_one_long_word_is_cut_inside() -> None:
    assert limits.truncate("x" * 300, 100) == "x" * 99 + "…"
    assert limits.truncate("abc", 1) == "…"
    assert limits.truncate("abc", 0) == ""


@given(st.text(max_size=400), st.integers(min_value=1, max_value=300))
def test_truncate_never_exceeds_and_keeps_a_prefix(text: str, limit: int) -> None:
    out = limits.truncate(text, limit)
    assert len(out) <= limit
    if len(text.strip()) <= limit:
        assert out == text.strip()
    else:
        assert out.endswith("…")
        assert text.strip().startswith(out[:-1].rstrip())


@given(words, st.integers(min_value=5, max_value=200))
def test_markdown_cut_never_leaves_bold_open(parts: list[str], limit: int) -> None:
    text = " ".join(f"**{w}**" if i % 3 == 0 else w for i, w in enumerate(parts))
    out = limits.truncate(text, limit, markdown=True)
    assert len(out) <= limit
    if out != text.strip():
        assert out[:-1].count("**") % 2 == 0


def test_markdown_cut_drops_a_half_link() -> None:
    text = "See [the code](https://github.com/example/a-very-long-repository-name) for more"
    out = limits.truncate(text, 40, markdown=True)
    assert out == "See…"


def test_join_limited_says_how_many_more() -> None:
    authors = [f"Author Number{i}" for i in range(500)]
    out = limits.join_limited(authors, limits.FIELD_VALUE)
    assert len(out) <= limits.FIELD_VALUE
    assert out.startswith("Author Number0, Author Number1")
    assert out.endswith("more")
    shown = out.count("Author Number")
    assert f"and {500 - shown} more" in out
    assert limits.join_limited(["a", "b"], 100) == "a, b"
    assert limits.join_limited(["x" * 50], 10) == "x" * 9 + "…"


def test_custom_id_joins_parts_and_refuses_what_would_not_come_back_whole() -> None:
    assert limits.custom_id("pb", "s", 1) == "pb:s:1"
    assert limits.custom_id("pb", "s", 1, "", "a:b c") == "pb:s:1::a:b c"  # last part: any text
    assert limits.custom_id_room("pb", "more") == limits.CUSTOM_ID - len("pb:more:")
    with pytest.raises(ValueError, match="1-100"):
        limits.custom_id("pb", "x" * 98)
    with pytest.raises(ValueError, match="':'"):
        limits.custom_id("pb", "venue:x", "query")
    with pytest.raises(ValueError, match="custom_id of 0"):
        limits.custom_id("")


def test_fit_embed_respects_every_part_and_the_total() -> None:
    embed = {
        "title": "T" * 1000,
        "description": ("word " * 2000) + "**bold end**",
        "fields": [{"name": "n" * 300, "value": "v " * 1000} for _ in range(30)],
        "footer": {"text": "f" * 3000},
        "author": {"name": "a" * 300},
    }
    out = limits.fit_embed(embed)
    assert len(out["title"]) <= limits.EMBED_TITLE
    assert len(out["description"]) <= limits.EMBED_DESCRIPTION
    assert len(out["fields"]) <= limits.EMBED_FIELDS
    assert all(len(f["name"]) <= 256 for f in out["fields"])
    assert all(len(f["value"]) <= 1024 for f in out["fields"])
    assert len(out["footer"]["text"]) <= limits.EMBED_FOOTER
    assert limits.embed_length(out) <= limits.EMBED_TOTAL
    assert embed["title"] == "T" * 1000  # the input is not modified


def test_fit_embeds_share_the_message_budget() -> None:
    embeds = [{"description": "word " * 900} for _ in range(12)]
    out = limits.fit_embeds(embeds)
    assert len(out) == limits.EMBEDS_PER_MESSAGE
    assert sum(limits.embed_length(e) for e in out) <= limits.EMBED_TOTAL


def test_empty_field_values_become_a_placeholder() -> None:
    out = limits.fit_embed({"fields": [{"name": "", "value": ""}]})
    assert out["fields"][0]["value"]
    assert out["fields"][0]["name"]

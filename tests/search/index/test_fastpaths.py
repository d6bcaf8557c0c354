"""The build's fast paths give what the plain forms they replace give, character for
character: the saved index's bytes depend on it (the digests pinned in test_buildtext)."""

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from bot.papers.formats import tidy
from bot.search.analysis.analyzer import ASCII_WORD, MARKDOWN, SUBSCRIPT_IN_WORD, ascii_words
from bot.search.files.paperstore import one_shot

# Characters where the patterns decide: word characters, hyphens, spaces of every kind,
# markup and a few non-ASCII letters.
TRICKY = st.text(alphabet=st.sampled_from(list("ab9Z-- \t\n\r\x0b\x1c*_`~^é\u00a0\u2028.")))


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_words_are_the_pattern_s_words(text: str) -> None:
    assert ascii_words(text) == ASCII_WORD.findall(text)


@given(TRICKY.filter(str.isascii))
def test_ascii_words_around_hyphens_and_spaces(text: str) -> None:
    assert ascii_words(text) == ASCII_WORD.findall(text)


@given(TRICKY)
def test_markdown_and_subscripts_match_where_they_did(text: str) -> None:
    assert MARKDOWN.sub("", text) == re.sub(r"(?<!\w)[*_`~]+|[*_`~]+(?!\w)|\*\*|__", "", text)
    assert SUBSCRIPT_IN_WORD.sub("", text) == re.sub(r"(?<=\w)[_^](?=\w)", "", text)


@given(TRICKY)
def test_tidy_collapses_spaces_as_the_pattern_did(text: str) -> None:
    assert tidy(text) == re.sub(r"\s+", " ", re.sub(r"-\n\s*", "-", text)).strip()


@given(
    st.lists(
        st.one_of(
            st.text(), st.integers(), st.floats(), st.none(), st.booleans(), st.lists(st.text())
        ),
        max_size=8,
    )
)
def test_one_shot_encoding_is_the_encoder_s(values: list[object]) -> None:
    for encoder in (
        json.JSONEncoder(ensure_ascii=False, separators=(",", ":")),
        json.JSONEncoder(ensure_ascii=False),
        json.JSONEncoder(),
    ):
        assert one_shot(encoder)(values) == encoder.encode(values)

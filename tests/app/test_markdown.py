"""Paper text is inert markdown: what a corpus says is shown, never rendered as markup."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.app.markdown import escape, escape_snippet, masked_link
from bot.console.text import markdown_text
from tests.app.helpers import markup_in

_BOLD = re.compile(r"(?<!\\)(?:\\\\)*\*\*")  # the one mark only the snippet may add
PAYLOADS = [
    "[click here](https://evil.example/login) to claim",
    "# BIG HEADER\n## smaller\n-# subtext",
    "```python\nprint('x')\n```",
    "see <t:0:R> and <@123456789012345678> and <@&42> and <#1> and </help:1> and <:e:1>",
    "@everyone @here look",
    "> quoted\n>>> all quoted",
    "**bold** __under__ ~~strike~~ ||spoiler|| *it*",
    "\\*already escaped\\*",
]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_escape_defuses_every_construct(payload: str) -> None:
    out = escape(payload)
    assert markup_in(out) == [], out
    assert not _BOLD.search(out), out


@pytest.mark.parametrize("payload", PAYLOADS)
def test_escaped_text_reads_as_written(payload: str) -> None:
    """The console shows what Discord would: the escapes vanish, the text is unchanged."""
    assert markdown_text(escape(payload)).replace("\u200b", "") == payload


def test_bare_urls_stay_links() -> None:
    assert escape("code: https://github.com/a_b/c*d") == "code: https://github.com/a_b/c*d"


def test_snippet_keeps_only_its_own_bold() -> None:
    snippet = "the **optimal** [x](https://evil.example) <@1> **transport**"
    out = escape_snippet(snippet)
    assert out == "the **optimal** \\[x\\](https://evil.example) \\<@1> **transport**"


def test_masked_link_escapes_the_label_and_cleans_the_url() -> None:
    assert masked_link("a [b] c", "https://x.org/a b") == "[a \\[b\\] c](https://x.org/a%20b)"
    assert masked_link("label", "https://.") == "label"
    assert masked_link("label", None) == "label"


PIECES = [*"ab [](<@#>*_`|~\\\n-:t&", "@everyone", "@here", "https://x.org/"]


@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_escape_never_lets_a_construct_through(pieces: list[str]) -> None:
    text = "".join(pieces)
    out = escape(text)
    assert markup_in(out) == [], (text, out)
    assert not _BOLD.search(re.sub(r"https?://[^\s<>]+", "url", out)), (text, out)

"""One URL normaliser and one code-host classifier for every surface (renderer, seed converter)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.papers.links import (
    MAX_URL,
    abstract_links,
    clean_url,
    link_kind,
    paper_links,
    urls_in,
)
from bot.papers.records import Link, Paper
from bot.sources.seed import links_in


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("https://github.com/foo/bar", "https://github.com/foo/bar"),
        ("https://github.com/foo/bar}", "https://github.com/foo/bar"),  # \url{...} leftover
        ("https://x.org/a).", "https://x.org/a"),  # prose: "(see https://x.org/a)."
        ("https://x.org/a,", "https://x.org/a"),
        ("<https://x.org/a>", "https://x.org/a"),
        ("www.x.org/p", "https://www.x.org/p"),
        ("https://en.wikipedia.org/wiki/Foo_(bar)", "https://en.wikipedia.org/wiki/Foo_%28bar%29"),
        ("https://x.org/a b?q=c d#e f", "https://x.org/a%20b?q=c%20d#e%20f"),  # spaces encoded
        ("https://x.org/%20a", "https://x.org/%20a"),  # already encoded: not twice
        ("HTTPS://x.org/A", "https://x.org/A"),
        ("https://bücher.de/x", "https://xn--bcher-kva.de/x"),
        ("https://127.0.0.1:8080/x", "https://127.0.0.1:8080/x"),
        ("https://.", None),
        ("https://", None),
        ("https://x..org", None),
        ("https://-x.org", None),
        ("https://localhost/x", None),
        ("https://x.org:99999/", None),
        ("https://user@evil.example", None),  # credentials disguise the real host
        ("http://exa mple.com", None),
        ("javascript:alert(1)", None),
        ("ftp://x.org/file", None),
        ("", None),
        (None, None),
        ("https://x.org/" + "a" * MAX_URL, None),
    ],
)
def test_clean_url(raw: str | None, expected: str | None) -> None:
    assert clean_url(raw) == expected


@given(st.text(max_size=200))
def test_clean_url_output_is_always_well_formed(raw: str) -> None:
    url = clean_url(raw)
    if url is None:
        return
    parts = urlsplit(url)
    assert parts.scheme in ("http", "https")
    assert parts.hostname
    assert "." in parts.hostname
    assert re.fullmatch(r"[!-~]+", url), url  # printable ASCII: no space, no control char
    assert len(url) <= MAX_URL
    assert clean_url(url) == url  # idempotent


def test_urls_in_prose_and_latex() -> None:
    text = (
        r"Code at \url{https://github.com/foo/bar}. Data (see https://x.org/a). "
        "[https://DuRP.github.io/](https://yangzhenshuo.github.io/DuRP.github.io/) "
        r"\href{https://y.org/p}{page}; broken: https://. and http://exa mple.com; "
        "again https://github.com/foo/bar.git and www.z.com."
    )
    assert urls_in(text) == [
        "https://github.com/foo/bar",
        "https://x.org/a",
        "https://DuRP.github.io/",
        "https://yangzhenshuo.github.io/DuRP.github.io/",
        "https://y.org/p",
        "https://www.z.com",
    ]


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("https://github.com/a/b", "code"),
        ("https://www.github.com/a/b", "code"),
        ("https://gitlab.com/a/b", "code"),
        ("https://gitlab.inria.fr/a/b", "code"),
        ("https://bitbucket.org/a/b", "code"),
        ("https://codeberg.org/a/b", "code"),
        ("https://huggingface.co/a/b", "code"),
        ("https://anonymous.4open.science/r/x", "code"),
        ("https://a.github.io/b", "project"),
        ("https://notgithub.com/a", "project"),
        ("https://example.org/", "project"),
    ],
)
def test_one_code_host_classifier(url: str, kind: str) -> None:
    assert link_kind(url) == kind


def test_seed_converter_and_renderer_classify_alike() -> None:
    abstract = (
        "Code: https://codeberg.org/a/b, https://bitbucket.org/c/d and https://github.com/e/f. "
        "Page: https://e.github.io/f/."
    )
    paper = Paper(id="p", title="t", abstract=abstract, venue="v")
    seeded = [Link(x["kind"], x["url"]) for x in links_in(abstract)]
    assert seeded == abstract_links(abstract) == paper_links(paper)
    assert [link.kind for link in seeded] == ["code", "code", "code", "project"]


def test_paper_links_clean_own_links_and_drop_malformed_ones() -> None:
    paper = Paper(
        id="p",
        title="t",
        venue="v",
        abstract="Also at https://openreview.net/forum?id=x/ and https://.",
        links=(
            Link("page", "https://openreview.net/forum?id=x"),
            Link("pdf", "https://."),
            Link("code", "https://github.com/a b/c"),
        ),
    )
    assert paper_links(paper) == [
        Link("page", "https://openreview.net/forum?id=x"),
        Link("code", "https://github.com/a%20b/c"),
    ]

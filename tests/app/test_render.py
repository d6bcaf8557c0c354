"""Embeds for Discord: content, and Discord's limits with very long titles, abstracts, authors."""

from __future__ import annotations

import discord

from bot.app import limits, refs, render
from bot.app.results.embeds import hit_block, page_texts, results_embed
from bot.app.results.pages import LIMIT_MAX, PAGE_MAX, QUERY_MAX, VENUE_MAX, PageState
from bot.app.results.views import PageButton, paper_view, results_layout
from bot.papers.records import Link, Paper
from bot.search.engine import SearchEngine
from bot.search.results import Hit, SearchResult
from tests.app.helpers import assert_within_limits


def huge_paper(i: int = 0, *, id_len: int = 20) -> Paper:
    return Paper(
        id=f"{i:0{id_len}d}",
        title=("An extremely long title about optimal transport [and] brackets_ " * 30).strip(),
        abstract=(
            "We study $\\ell_1$ optimal **transport** with code at https://github.com/a/b. " * 200
        ),
        venue="ICML 2026",
        year=2026,
        status="Oral",
        authors=tuple(f"Author With A Long Name {n}" for n in range(400)),
        links=(
            Link("page", "https://openreview.net/forum?id=x"),
            Link("pdf", "https://openreview.net/pdf?id=x"),
        ),
        keywords=tuple(f"keyword{n}" for n in range(300)),
    )


def message(embed: discord.Embed, view: discord.ui.View | None = None) -> dict:
    body: dict = {"embeds": [embed.to_dict()]}
    if view is not None:
        body["components"] = view.to_components()
    return body


def test_paper_embed_within_limits_for_huge_paper() -> None:
    paper = huge_paper()
    embed = render.paper_embed(paper)
    assert_within_limits(
        message(embed, paper_view(paper.id, render.found_links(paper), share=True))
    )
    assert embed.title
    assert embed.title.endswith("…")
    assert len(embed.title) <= 256
    assert "$" not in (embed.description or "")
    assert "ℓ₁" in (embed.description or "")  # LaTeX rendered (a subscript), then escaped
    assert "\\*\\*transport\\*\\*" in (embed.description or "")  # corpus markdown is inert
    fields = {f.name: f.value for f in embed.fields}
    assert fields["Authors"].endswith("more")
    assert fields["Venue"] == "ICML 2026 · Oral"
    assert "[Paper page](https://openreview.net/forum?id=x)" in fields["Links"]
    assert "[Code](https://github.com/a/b)" in fields["Links"]


def test_results_embed_within_limits_with_ten_huge_hits() -> None:
    hits = [
        Hit(huge_paper(i), 10.0 - i, "**optimal** " + "transport words " * 100, i + 1)
        for i in range(LIMIT_MAX)
    ]
    result = SearchResult("optimal transport " * 20, hits, total=10_000, offset=0, limit=LIMIT_MAX)
    embed = results_embed(result, venue="ICML 2026")
    state = PageState("s", ("q" * QUERY_MAX), 1, LIMIT_MAX, "v" * VENUE_MAX)
    assert_within_limits(message(embed))
    view = results_layout(result, state, page_texts(result, venue="ICML 2026"), share=True)
    assert_within_limits({"components": view.to_components(), "flags": 1 << 15})
    assert embed.description
    assert embed.description.count("**") % 2 == 0
    assert embed.footer.text
    assert embed.footer.text.startswith("page 1/1000 · 10000 matches for")
    assert embed.description.count("\n\n") == LIMIT_MAX - 1  # every hit kept, each shortened


def test_hit_block_links_title_and_escapes_brackets() -> None:
    paper = Paper(
        id="p1",
        title="A [bracketed] title_with_underscores",
        abstract="x",
        venue="COLM 2025",
        status="Poster",
        authors=("A", "B", "C", "D"),
        links=(Link("page", "https://example.org/p1"),),
    )
    block = hit_block(Hit(paper, 1.0, "the **snippet**", 3), 500)
    first, meta, snippet = block.split("\n")
    assert first == (
        "**3. [A \\[bracketed\\] title\\_with\\_underscores](https://example.org/p1)**"
    )
    assert meta == "COLM 2025 · Poster · A, B, C et al."
    assert snippet == "the **snippet**"


def test_worst_case_page_custom_id_fits() -> None:
    state = PageState("s", "q" * QUERY_MAX, PAGE_MAX, LIMIT_MAX, "v" * VENUE_MAX)
    cid = state.custom_id(PAGE_MAX)
    assert cid is not None
    assert len(cid) <= limits.CUSTOM_ID
    assert cid.endswith(":^")  # the query itself is read back from the message's title
    short = PageState("s", "optimal transport", 2, 5, "colm").custom_id(2)
    assert short == "pb:s:2:5:colm:optimal transport"
    assert PageButton.__discord_ui_compiled_template__.fullmatch(cid)
    assert cid.startswith(f"pb:s:{PAGE_MAX}:{LIMIT_MAX}:~")  # a 100-character venue: its key
    long_id = PageState("l", "x" * 200).custom_id(1)  # too long: its key, never cut
    assert long_id == "pb:l:1:5:" + refs.key_of("x" * 200)


def test_page_custom_id_round_trips() -> None:
    pattern = PageButton.__discord_ui_compiled_template__
    match = pattern.fullmatch('pb:s:2:5:ICML 2026:author:smith "a b"')
    assert match
    assert match["venue"] == "ICML 2026"
    assert match["ref"] == 'author:smith "a b"'
    match = pattern.fullmatch("pb:s:1:5::venue:icml x")
    assert match
    assert match["venue"] == ""
    assert match["ref"] == "venue:icml x"
    match = pattern.fullmatch("pb:l:3:5:icml2026/001-e0a0ceac")
    assert match
    assert match["venue"] is None
    assert match["ref"] == "icml2026/001-e0a0ceac"


def test_long_ids_travel_as_keys_in_components() -> None:
    paper = huge_paper(id_len=120)
    key = refs.key_of(paper.id)
    view = paper_view(paper.id, [], share=False)
    ids = [c.custom_id for c in view.children if hasattr(c, "custom_id")]
    assert ids == [
        f"pb:more:{key}",
        f"pb:save:{key}",
        f"pb:cite:{key}",
        f"pb:up:{key}",
        f"pb:down:{key}",
    ]
    result = SearchResult("q", [Hit(paper, 1.0, "", 1)], total=1)
    view = results_layout(result, PageState("s", "q"), page_texts(result), share=False)
    [menu] = [c for c in view.walk_children() if isinstance(c, discord.ui.DynamicItem)][:1]
    assert menu.item.custom_id == "pb:open"  # type: ignore[attr-defined]
    assert [o.value for o in menu.item.options] == [key]  # type: ignore[attr-defined]


def test_found_links_reads_markdown_links_in_abstracts() -> None:
    paper = Paper(
        id="p",
        title="t",
        venue="v",
        abstract=(
            "Project: [https://DuRP.github.io/](https://yangzhenshuo.github.io/DuRP.github.io/). "
            "Code: https://github.com/WillDreamer/ARL-Arena.git."
        ),
    )
    assert render.found_links(paper) == [
        ("Project page", "https://DuRP.github.io/"),
        ("Project page", "https://yangzhenshuo.github.io/DuRP.github.io/"),
        ("Code", "https://github.com/WillDreamer/ARL-Arena.git"),
    ]


def test_empty_results_and_help(icml_engine: SearchEngine) -> None:
    empty = results_embed(SearchResult("nothing here", [], total=0))
    assert "No paper matches" in (empty.description or "")
    assert empty.footer.text == "page 1/1 · 0 matches for “nothing here”"
    venues = {f"Venue {i}": i * 1000 for i in range(200)}
    help_embed = render.help_embed(venues)
    assert_within_limits(message(help_embed))
    assert help_embed.fields[-1].value.endswith("more venues")
    real = render.help_embed(icml_engine.venues())
    assert real.fields[-1].value == "ICML 2026: 19 papers"


def test_derived_titles_are_marked(icml_engine: SearchEngine) -> None:
    paper = icml_engine.papers[0]
    assert paper.title_derived
    assert "headline derived" in (render.paper_embed(paper).footer.text or "")


def test_rendering_cost_is_bounded_by_what_is_shown(monkeypatch) -> None:
    """Only the LaTeX source a field can show is converted: a 170 KB abstract or a
    3,000-character title costs what a short one does."""
    converted: list[int] = []
    real = render.latex_to_unicode

    def spy(text: str) -> str:
        converted.append(len(text))
        return real(text)

    monkeypatch.setattr(render, "latex_to_unicode", spy)
    paper = Paper(
        id="p",
        title="$x_{1}$ title " * 300,
        abstract="$\\alpha_{1}$ word " * 10_000,
        venue="v",
    )
    embed = render.paper_embed(paper)
    assert converted
    assert max(converted) <= render.LATEX_SOURCE_PER_CHAR * limits.EMBED_DESCRIPTION
    assert (embed.description or "").endswith("…")
    converted.clear()
    render.paper_embed(paper, excerpt=700)
    assert max(converted) <= render.LATEX_SOURCE_PER_CHAR * 700  # the daily excerpt

"""The Atom parser over arXiv's real recorded responses; the stand-in parses to the same shape."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest

from bot.config import PROJECT_ROOT
from bot.sources import arxiv
from tests.fakesources import FakeArxiv, arxiv_entry

RECORDED = PROJECT_ROOT.parent / "shared" / "sources" / "arxiv"


def recorded() -> list[Path]:
    if not RECORDED.is_dir():
        pytest.skip(f"needs {RECORDED} (recorded arXiv responses beside the repo; present in CI)")
    files = sorted(RECORDED.glob("*.json"))
    assert len(files) >= 20
    return files


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def shape(page: arxiv.Page) -> list[tuple[str, ...]]:
    """Which keys each record has a value for, and their types: what "parses the same" means."""
    return [
        tuple(sorted(f"{k}:{type(v).__name__}" for k, v in r.items() if v not in (None, [])))
        for r in page.records
    ]


def test_every_recorded_response_parses():
    seen_ids: set[str] = set()
    for path in recorded():
        data = load(path)
        body = data["body"]
        if data["status_code"] == 400:
            with pytest.raises(arxiv.ArxivError, match="incorrect id format for abc"):
                arxiv.parse_feed(body)
            continue
        page = arxiv.parse_feed(body)
        assert page.total == int(re.search(r"totalResults>(\d+)<", body)[1]), path.name
        assert page.start == int(re.search(r"startIndex>(\d+)<", body)[1]), path.name
        assert page.entries == body.count("<entry>"), path.name
        assert not page.problems, (path.name, page.problems)
        assert len(page.records) == page.entries
        for record in page.records:
            assert record["id"].startswith("arxiv:")
            assert record["title"]
            assert record["abstract"]
            assert record["authors"]
            assert record["version"] >= 1
            assert record["links"][0]["url"] == "https://arxiv.org/abs/" + record["id"][6:]
            assert record["status"] in record["categories"]
            seen_ids.add(record["id"])
    assert "arxiv:2104.12255" in seen_ids  # new style, asked for with its version
    assert "arxiv:astro-ph/0601001" in seen_ids  # old style
    assert "arxiv:quant-ph/0201082" in seen_ids


def test_recorded_paging_totals_and_overlaps():
    pages = {}
    for path in recorded():
        match = re.match(r"q_testing_s(\d+)_m(\d+)_", path.name)
        if match:
            pages[(int(match[1]), int(match[2]))] = arxiv.parse_feed(load(path)["body"])
    assert {p.total for p in pages.values()} == {214881}
    ids = {key: [r["id"] for r in page.records] for key, page in pages.items()}
    assert ids[(0, 10)] + ids[(10, 10)] == ids[(0, 100)][:20]
    assert ids[(5, 10)] == ids[(0, 15)][5:15]


def test_recorded_fields_of_one_paper():
    path = next(p for p in recorded() if p.name.startswith("q_testing_s0_m10_"))
    first = arxiv.parse_feed(load(path)["body"]).records[0]
    assert first["id"] == "arxiv:2202.12139"
    assert first["version"] == 1
    assert first["doi"] == "10.1109/ICSTW55395.2022.00035"
    assert first["journal_ref"].startswith("Artificial Intelligence in Software Testing")
    assert first["comment"].startswith("Artificial Intelligence in Software Testing 2022")
    assert first["categories"] == ["cs.SE", "cs.LG"]
    assert first["status"] == "cs.SE"
    assert first["authors"][:2] == ["Mohit Kumar Ahuja", "Arnaud Gotlieb"]
    assert {"kind": "doi", "url": "https://doi.org/10.1109/ICSTW55395.2022.00035"} in first["links"]
    assert first["published"] == "2022-02-24T15:05:19Z"


async def test_the_stand_in_parses_to_the_same_shape_as_arxiv():
    real = arxiv.parse_feed(
        load(next(p for p in recorded() if p.name.startswith("q_testing_s0_m10_")))["body"]
    )
    fake = FakeArxiv(
        [
            arxiv_entry(
                "2611.00001",
                categories=("cs.SE", "cs.LG"),
                comment="10 pages",
                journal_ref="Proc. X",
                doi="10.1/abc",
                authors=("A B", "C D", "E F"),
            ),
            arxiv_entry("2611.00002", version=3),
        ]
    )
    await fake.start()
    try:
        import aiohttp

        async with aiohttp.ClientSession() as session:
            params = {"search_query": "cat:cs.LG", "start": "0", "max_results": "10"}
            async with session.get(fake.base_url, params=params) as resp:
                body = await resp.read()
            async with session.get(fake.base_url, params={"id_list": "abc"}) as resp:
                assert resp.status == 400
                error_body = await resp.read()
    finally:
        await fake.stop()
    page = arxiv.parse_feed(body)
    assert page.total == 2
    assert shape(page)[0] == shape(real)[0]  # both carry comment, journal_ref and doi
    assert page.records[1]["version"] == 3
    real_error = load(next(p for p in recorded() if p.name.startswith("id_abc_")))["body"]
    for feed in (error_body, real_error):
        with pytest.raises(arxiv.ArxivError, match="incorrect id format for abc"):
            arxiv.parse_feed(feed)


def test_a_malformed_entry_is_reported_and_skipped():
    body = (
        "<feed xmlns='http://www.w3.org/2005/Atom' "
        "xmlns:opensearch='http://a9.com/-/spec/opensearch/1.1/'>"
        "<opensearch:totalResults>2</opensearch:totalResults>"
        "<entry><id>http://arxiv.org/abs/2611.00009v2</id><title>T</title><summary>S</summary>"
        "<published>2026-11-02T00:00:00Z</published></entry>"
        "<entry><id>http://example.org/x</id><title>No</title></entry></feed>"
    )
    page = arxiv.parse_feed(body)
    assert [r["id"] for r in page.records] == ["arxiv:2611.00009"]
    assert page.records[0]["version"] == 2
    assert page.problems == [
        "arXiv result 2: entry id 'http://example.org/x' is not an arXiv abs URL"
    ]
    with pytest.raises(arxiv.ArxivError, match="not an Atom feed"):
        arxiv.parse_feed("<html>busy</html>")
    with pytest.raises(arxiv.ArxivError, match="not an Atom feed"):
        arxiv.parse_feed("<feed")


def test_search_query_checks_its_input():
    assert (
        arxiv.search_query(["cs.LG", "cs.CL"], date(2026, 11, 1), date(2026, 11, 30))
        == "(cat:cs.LG OR cat:cs.CL) AND submittedDate:[202611010000 TO 202611302359]"
    )
    with pytest.raises(ValueError, match="not an arXiv category"):
        arxiv.search_query(["cs LG"], date(2026, 11, 1), date(2026, 11, 2))
    with pytest.raises(ValueError, match="before --since"):
        arxiv.search_query(["cs.LG"], date(2026, 11, 2), date(2026, 11, 1))

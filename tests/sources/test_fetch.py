"""Both fetchers through the real client against the loopback stand-ins: paging, retries,
malformed entries, version updates, empty results, resuming, seed matching."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from bot.config import SourcesSettings
from bot.sources import fetch
from bot.sources.http import FetchError, PoliteClient
from bot.sources.store import Resume
from tests.fakesources import FakeArxiv, FakeOpenReview, Fault, arxiv_entry, note

SETTINGS = SourcesSettings(user_agent="paperbot-tests/1.0 (loopback)", retry_base_seconds=0.5)
NOW = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
VENUE = "ICML.cc/2026/Conference"


class Sleeps:
    """Records the pauses the client asks for instead of spending them."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
async def openreview():
    server = FakeOpenReview(
        [note(f"f{i:03d}", title=f"Accepted {i}") for i in range(7)]
        + [note("rej", "ICML.cc/2026/Conference/Rejected_Submission")]
        + [note("sub", "ICML.cc/2026/Conference/Submission")]
    )
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def arxiv_server():
    papers = [
        arxiv_entry(f"2611.{i:05d}", published=f"2026-11-{1 + i:02d}T12:00:00Z") for i in range(9)
    ]
    papers.append(arxiv_entry("2611.09999", categories=("math.AG",)))
    server = FakeArxiv(papers)
    await server.start()
    yield server
    await server.stop()


async def run_openreview(server, out, sleeps=None, limit=3, now=NOW):
    async with PoliteClient(SETTINGS, sleep=sleeps or Sleeps()) as client:
        run = fetch.FetchRun(client, out, now=now)
        return await fetch.fetch_openreview(run, server.url, VENUE, limit=limit)


async def run_arxiv(server, out, sleeps=None, page_size=4, interval=0.0, now=NOW):
    async with PoliteClient(SETTINGS, interval=interval, sleep=sleeps or Sleeps()) as client:
        return await fetch.fetch_arxiv(
            fetch.FetchRun(client, out, now=now),
            server.base_url,
            ["cs.LG", "cs.CL"],
            date(2026, 11, 1),
            date(2026, 11, 30),
            page_size=page_size,
        )


async def test_openreview_pages_until_count_and_keeps_only_accepted(openreview, tmp_path):
    out = tmp_path / "icml.jsonl"
    report = await run_openreview(openreview, out)
    assert report.complete
    assert [r.query["offset"] for r in openreview.requests] == ["0", "3", "6"]
    assert {r.query["content.venueid"] for r in openreview.requests} == {VENUE}
    records = lines(out)
    assert [r["id"] for r in records] == [f"openreview:f{i:03d}" for i in range(7)]
    first = records[0]
    assert first["title"] == "Accepted 0"
    assert first["venue"] == "ICML 2026"
    assert first["status"] == "Poster"
    assert first["year"] == 2026
    assert first["added"] == "2026-12-01T06:00:00Z"
    assert first["bibtex"].startswith("@inproceedings")
    assert {"kind": "pdf", "url": "https://openreview.net/pdf?id=f000"} in first["links"]
    assert report.counts.added == 7
    assert not Resume.path_for(out).exists()


async def test_openreview_filters_by_venueid_even_if_the_server_does_not(tmp_path):
    server = FakeOpenReview([note("a"), note("b", "ICML.cc/2026/Conference/Rejected_Submission")])
    await server.start()
    try:
        async with PoliteClient(SETTINGS, sleep=Sleeps()) as client:
            # Ask for a venue id the server ignores: the note's own venueid must still decide.
            page = await client.get(server.url + "/notes", {"offset": 0, "limit": 10})
    finally:
        await server.stop()
    from bot.sources.openreview import parse_notes

    parsed = parse_notes(json.loads(page.body), VENUE, 0)
    assert [r["id"] for r in parsed.records] == ["openreview:a"]
    assert parsed.other_venue == 1


async def test_openreview_refresh_is_incremental(openreview, tmp_path):
    out = tmp_path / "icml.jsonl"
    await run_openreview(openreview, out)
    openreview.notes[0] = note(
        "f000", title="Accepted 0, camera-ready title", mdate=1_790_000_000_000
    )
    openreview.notes.append(note("late", title="Late decision"))
    later = datetime(2026, 12, 2, 6, 0, tzinfo=UTC)
    report = await run_openreview(openreview, out, now=later)
    records = {r["id"]: r for r in lines(out)}
    assert len(records) == 8
    assert records["openreview:f000"]["title"] == "Accepted 0, camera-ready title"
    assert records["openreview:f000"]["added"] == "2026-12-01T06:00:00Z"  # first seen stays
    assert records["openreview:late"]["added"] == "2026-12-02T06:00:00Z"
    assert (report.counts.added, report.counts.updated, report.counts.unchanged) == (1, 1, 6)
    assert report.counts.added_ids == ["openreview:late"]


async def test_429_with_retry_after_and_a_503_burst_are_retried(openreview, tmp_path):
    openreview.fail(Fault(429, {"Retry-After": "7"}), Fault(503), Fault(503), Fault(503))
    sleeps = Sleeps()
    report = await run_openreview(openreview, tmp_path / "o.jsonl", sleeps)
    assert report.complete
    assert [r.status for r in openreview.requests][:5] == [429, 503, 503, 503, 200]
    # Retry-After 7 s beats the 0.5 s backoff; then 1, 2, 4 s doubling.
    assert sleeps.calls == [7.0, 1.0, 2.0, 4.0]


async def test_a_burst_longer_than_the_retries_fails_and_resumes(openreview, tmp_path):
    out = tmp_path / "o.jsonl"
    openreview.fail_from(2, *[Fault(503)] * 3)  # the first page works, then 503 x 3
    settings = SourcesSettings(max_retries=2, retry_base_seconds=0.1)
    async with PoliteClient(settings, sleep=Sleeps()) as client:
        run = fetch.FetchRun(client, out, now=NOW)
        with pytest.raises(FetchError, match="HTTP 503 after 3 attempts"):
            await fetch.fetch_openreview(run, openreview.url, VENUE, limit=3)
    assert len(lines(out)) == 3  # the first page was saved
    assert Resume.load(out, f"openreview {VENUE}").next == 3
    report = await run_openreview(openreview, out)
    assert report.resumed_at == 3
    assert report.complete
    assert [r.query["offset"] for r in openreview.requests[-2:]] == ["3", "6"]
    assert [r["id"] for r in lines(out)] == [f"openreview:f{i:03d}" for i in range(7)]
    assert not Resume.path_for(out).exists()


async def test_a_malformed_note_is_reported_and_skipped(openreview, tmp_path):
    openreview.notes.insert(2, {"id": "bad", "content": {"venueid": {"value": VENUE}}})
    openreview.notes.insert(3, "not a note")
    report = await run_openreview(openreview, tmp_path / "o.jsonl")
    assert report.complete
    assert len(lines(tmp_path / "o.jsonl")) == 7
    assert any("note bad: missing title or abstract" in p for p in report.problems)
    assert any("expected a note object" in p for p in report.problems)


async def test_a_non_retryable_error_is_a_clear_failure(openreview, tmp_path):
    async with PoliteClient(SETTINGS, sleep=Sleeps()) as client:
        run = fetch.FetchRun(client, tmp_path / "o")
        with pytest.raises(FetchError, match="HTTP 400"):
            await fetch.fetch_openreview(run, openreview.url, VENUE, limit=5000)


async def test_arxiv_pages_politely_with_one_connection(arxiv_server, tmp_path):
    out = tmp_path / "arxiv.jsonl"
    sleeps = Sleeps()
    report = await run_arxiv(arxiv_server, out, sleeps, interval=0.2)
    assert report.complete
    assert report.total == 9
    assert [r.query["start"] for r in arxiv_server.requests] == ["0", "4", "8"]
    assert {r.headers["User-Agent"] for r in arxiv_server.requests} == {SETTINGS.user_agent}
    assert len(arxiv_server.peers) == 1  # one connection, kept alive
    # The client asked to wait before every call but the first (the fake sleep returns at once).
    assert len(sleeps.calls) == 2
    assert all(0 < s <= 0.2 for s in sleeps.calls)
    query = arxiv_server.requests[0].query
    assert query["search_query"] == (
        "(cat:cs.LG OR cat:cs.CL) AND submittedDate:[202611010000 TO 202611302359]"
    )
    assert query["sortBy"] == "submittedDate"
    records = lines(out)
    assert [r["id"] for r in records] == [f"arxiv:2611.{i:05d}" for i in range(9)]
    assert records[0]["venue"] == "arXiv"
    assert records[0]["added"] == "2026-12-01T06:00:00Z"


async def test_the_interval_is_really_waited_between_calls(arxiv_server, tmp_path):
    async with PoliteClient(SETTINGS, interval=0.15) as client:  # real asyncio.sleep
        await fetch.fetch_arxiv(
            fetch.FetchRun(client, tmp_path / "a.jsonl"),
            arxiv_server.base_url,
            ["cs.LG"],
            date(2026, 11, 1),
            date(2026, 11, 30),
            page_size=4,
        )
    arrivals = [r.at for r in arxiv_server.requests]
    assert len(arrivals) == 3
    assert min(b - a for a, b in itertools.pairwise(arrivals)) >= 0.14


async def test_a_new_arxiv_version_updates_the_paper(arxiv_server, tmp_path):
    out = tmp_path / "arxiv.jsonl"
    await run_arxiv(arxiv_server, out)
    arxiv_server.papers[1] = arxiv_entry(
        "2611.00001", version=2, title="Revised title", published="2026-11-02T12:00:00Z"
    )
    report = await run_arxiv(arxiv_server, out)
    records = {r["id"]: r for r in lines(out)}
    assert len(records) == 9
    assert records["arxiv:2611.00001"]["version"] == 2
    assert records["arxiv:2611.00001"]["title"] == "Revised title"
    assert (report.counts.added, report.counts.updated) == (0, 1)
    # An older version served later (a stale mirror) never replaces the newer one.
    arxiv_server.papers[1] = arxiv_entry("2611.00001", version=1, published="2026-11-02T12:00:00Z")
    await run_arxiv(arxiv_server, out)
    assert {r["id"]: r for r in lines(out)}["arxiv:2611.00001"]["title"] == "Revised title"


async def test_malformed_arxiv_entry_and_429(arxiv_server, tmp_path):
    arxiv_server.papers.insert(0, {"raw": "  <entry><id>http://arxiv.org/abs/broken</id></entry>"})
    arxiv_server.fail(Fault(429, {"Retry-After": "3"}))
    sleeps = Sleeps()
    report = await run_arxiv(arxiv_server, tmp_path / "a.jsonl", sleeps)
    assert report.complete
    assert len(lines(tmp_path / "a.jsonl")) == 9
    assert report.problems == [
        "arXiv result 1: entry id 'http://arxiv.org/abs/broken' is not an arXiv abs URL"
    ]
    assert sleeps.calls[0] == 3.0


async def test_empty_results_write_no_file(arxiv_server, tmp_path):
    arxiv_server.papers.clear()
    out = tmp_path / "a.jsonl"
    report = await run_arxiv(arxiv_server, out)
    assert report.complete
    assert report.total == 0
    assert not out.exists()
    assert "0 of 0 fetched" in report.summary()


async def test_arxiv_error_feed_is_a_clear_failure(arxiv_server, tmp_path):
    arxiv_server.fail(Fault(400, {}, "not xml"))
    with pytest.raises(FetchError, match="not an Atom feed"):
        await run_arxiv(arxiv_server, tmp_path / "a.jsonl")


async def test_a_seed_paper_meets_its_real_record(openreview, tmp_path):
    out = tmp_path / "icml2026.jsonl"
    abstract = "We propose  dWorldEval, an action-centric world model.\nIt works."
    seed = {
        "id": "icml2026/001-abcd",
        "venue": "ICML 2026",
        "year": 2026,
        "title": "dWorldEval: an action-centric world model",
        "title_derived": True,
        "authors": [],
        "abstract": abstract,
        "links": [{"kind": "code", "url": "https://github.com/x/dworldeval"}],
    }
    out.write_text(json.dumps(seed) + "\n", encoding="utf-8")
    openreview.notes.append(
        note(
            "real1",
            title="dWorldEval: Evaluating Robot Policies with World Models",
            abstract="We propose dWorldEval, an action-centric world model. It works.",
            authors=("Ada Lovelace", "Alan Turing"),
        )
    )
    report = await run_openreview(openreview, out)
    assert report.counts.seed_matched == 1
    records = {r["id"]: r for r in lines(out)}
    assert len(records) == 8
    paper = records["icml2026/001-abcd"]
    assert paper["title"] == "dWorldEval: Evaluating Robot Policies with World Models"
    assert paper["authors"] == ["Ada Lovelace", "Alan Turing"]
    assert "title_derived" not in paper
    assert paper["source_id"] == "openreview:real1"
    assert {"kind": "code", "url": "https://github.com/x/dworldeval"} in paper["links"]
    assert {"kind": "page", "url": "https://openreview.net/forum?id=real1"} in paper["links"]
    # The next refresh updates the same paper through its source id, never adding a copy.
    await run_openreview(openreview, out)
    assert len(lines(out)) == 8
    from bot.papers.corpus import load_file

    loaded = load_file(out)
    assert not loaded.problems
    adopted = next(p for p in loaded.papers if p.id == "icml2026/001-abcd")
    assert not adopted.title_derived
    assert adopted.added is None  # it was in the corpus before: not a new paper

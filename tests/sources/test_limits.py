"""What a fetch refuses: a response body past `[sources] max_response_mb` (read in chunks, so a
huge answer never sits in memory whole), a record of absurd size, JSON nested past the
parser's stack, and a source that pages forever (stopped at a bound, resumable)."""

from __future__ import annotations

import io
import json
import os
import stat
import tracemalloc

import pytest

from bot.config import SourcesSettings
from bot.console.cli import main
from bot.papers.formats import MAX_ABSTRACT, MAX_TITLE
from bot.sources import fetch
from bot.sources.http import FetchError, PoliteClient
from bot.sources.store import Resume
from tests.fakesources import EndlessOpenReview, FakeOpenReview, FakePaperLists, Fault, note
from tests.sources.test_fetch import NOW, VENUE, Sleeps, lines

CAPPED = SourcesSettings(user_agent="paperbot-tests/1.0 (loopback)", max_response_mb=2)
HUGE = 64 << 20  # a 64 MB answer, made as it is sent
# One OpenReview note whose title is the filler: the giant record of the issue.
GIANT_NOTE = (
    '{"count": 1, "notes": [{"id": "big", "forum": "big", "content": {'
    f'"venueid": {{"value": "{VENUE}"}}, "abstract": {{"value": "x"}}, "title": {{"value": "'
)


@pytest.fixture
async def openreview():
    server = FakeOpenReview([note(f"f{i}") for i in range(5)])
    await server.start()
    yield server
    await server.stop()


async def run_openreview(server, out, settings=CAPPED, **kwargs):
    async with PoliteClient(settings, sleep=Sleeps()) as client:
        run = fetch.FetchRun(client, out, now=NOW)
        return await fetch.fetch_openreview(run, server.url, VENUE, **kwargs)


@pytest.mark.parametrize("declared", [False, True], ids=["chunked", "content-length"])
async def test_a_huge_response_is_refused_at_the_cap(openreview, tmp_path, declared):
    """64 MB streamed (or announced by Content-Length) against a 2 MB cap: a FetchError naming
    the URL and the limit, after reading about 2 MB; nothing is written."""
    openreview.fail(Fault(200, body=GIANT_NOTE, fill=HUGE, tail='"}}}]}', declare_length=declared))
    out = tmp_path / "icml.jsonl"
    tracemalloc.start()
    try:
        with pytest.raises(FetchError) as caught:
            await run_openreview(openreview, out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20  # the cap and a few chunks, never the 64 MB answer
    message = str(caught.value)
    assert f"{openreview.url}/notes" in message
    assert "2 MB" in message
    assert "max_response_mb" in message
    assert not out.exists()
    assert not out.with_name("icml.jsonl.fetch.json").exists()
    assert [p for p in os.listdir(tmp_path) if ".tmp-" in p] == []


async def test_a_body_under_the_cap_is_read_whole(openreview, tmp_path):
    openreview.fail(Fault(200, body=GIANT_NOTE, fill=1 << 20, tail='"}}}]}'))
    report = await run_openreview(openreview, tmp_path / "icml.jsonl")
    assert report.complete  # a 1 MB title fits the body cap; the record cap refuses it
    assert any("openreview:big" in p and "title" in p for p in report.problems)


async def test_records_of_absurd_size_are_refused_and_the_rest_kept(openreview, tmp_path):
    openreview.notes += [
        note("longabstract", abstract="w" * (MAX_ABSTRACT + 5)),
        note("longtitle", title="T" * (MAX_TITLE + 1)),
        note("manyauthors", authors=tuple(f"Author {'x' * 600} {i}" for i in range(1000))),
    ]
    out = tmp_path / "icml.jsonl"
    report = await run_openreview(openreview, out, limit=3)
    assert report.complete
    assert [r["id"] for r in lines(out)] == [f"openreview:f{i}" for i in range(5)]
    assert report.counts.added == 5
    problems = "\n".join(report.problems)
    assert f"openreview:longabstract: abstract of {MAX_ABSTRACT + 5:,} characters" in problems
    assert f"more than {MAX_ABSTRACT:,}" in problems
    assert f"openreview:longtitle: title of {MAX_TITLE + 1:,} characters" in problems
    assert "openreview:manyauthors: record of " in problems
    assert "not written" in problems


async def test_deeply_nested_json_is_a_clear_fetch_error(openreview, tmp_path):
    openreview.fail(Fault(200, body='{"notes": ' + "[" * 200_000 + "]" * 200_000 + "}"))
    with pytest.raises(FetchError, match=r"not an OpenReview notes response .*too deeply nested"):
        await run_openreview(openreview, tmp_path / "icml.jsonl")


def test_the_cli_reports_deep_json_without_a_traceback(tmp_path, monkeypatch):
    server = FakeOpenReview([note("a")])
    server.fail(Fault(200, body="[" * 100_000 + "]" * 100_000))
    with server.in_thread() as url:
        monkeypatch.setenv("PAPERBOT_OPENREVIEW_URL", url)
        stdout, stderr = io.StringIO(), io.StringIO()
        out = tmp_path / "o.jsonl"
        code = main(["fetch", "openreview", VENUE, "--out", str(out)], out=stdout, err=stderr)
    assert code == 1
    assert "error: " in stderr.getvalue()
    assert "OpenReview" in stderr.getvalue()
    assert "too deeply nested" in stderr.getvalue()
    assert "Traceback" not in stderr.getvalue()


async def test_an_endless_venue_stops_at_the_bound_and_resumes(tmp_path):
    """`count` 10^9 and full pages at every offset: a run stops after `max_records`, says so,
    and keeps what it fetched, saved and resumable; the next run goes on from there."""
    server = EndlessOpenReview(guard=60)
    await server.start()
    out = tmp_path / "endless.jsonl"
    try:
        first = await run_openreview(server, out, limit=10, max_records=100)
        second = await run_openreview(server, out, limit=10, max_records=100)
    finally:
        await server.stop()
    assert not first.complete
    assert first.counts.added == 100
    summary = first.summary()
    assert "stopped after 100 papers in one run" in summary
    assert "the source reports 1,000,000,000" in summary
    assert "run again to resume" in summary
    assert second.resumed_at == 100
    assert not second.complete
    assert second.counts.added == 100
    assert [r.query["offset"] for r in server.requests][10:12] == ["100", "110"]
    assert len(server.requests) == 20
    ids = [r["id"] for r in lines(out)]
    assert ids == [f"openreview:e{i:09d}" for i in range(200)]
    assert Resume.load(out, f"openreview {VENUE}").next == 200


def test_the_cli_exits_1_when_a_fetch_stops_at_the_bound(tmp_path, monkeypatch):
    server = EndlessOpenReview(guard=5)
    monkeypatch.setattr(fetch, "MAX_RECORDS", 2000)  # two pages of 1,000 (the CLI's page)
    with server.in_thread() as url:
        monkeypatch.setenv("PAPERBOT_OPENREVIEW_URL", url)
        stdout, stderr = io.StringIO(), io.StringIO()
        out = tmp_path / "o.jsonl"
        code = main(["fetch", "openreview", VENUE, "--out", str(out)], out=stdout, err=stderr)
    assert code == 1
    assert "stopped after 2,000 papers in one run" in stdout.getvalue()
    assert len(lines(out)) == 2000


async def test_a_huge_paper_list_is_refused_and_the_old_list_kept(tmp_path):
    lists = FakePaperLists()
    path = "papercopilot/paperlists/main/colm/colm2025.json"
    lists.files[path] = json.dumps(
        [{"id": "abc", "title": "A paper", "abstract": "Words.", "status": "Poster"}]
    )
    await lists.start()
    out = tmp_path / "colm2025.json"
    try:
        async with PoliteClient(CAPPED, sleep=Sleeps()) as client:
            run = fetch.FetchRun(client, out, now=NOW)
            first = await fetch.fetch_paperlist(run, lists.url_of(path))
            again = await fetch.fetch_paperlist(run, lists.url_of(path))
            before = out.read_bytes()
            body = '[{"id": "big", "status": "Poster", "abstract": "x", "title": "'
            lists.fail(Fault(200, body=body, fill=HUGE, tail='"}]'))
            with pytest.raises(FetchError) as caught:
                await fetch.fetch_paperlist(run, lists.url_of(path))
    finally:
        await lists.stop()
    assert first.counts.added_ids == ["colm2025/abc"]
    assert (again.counts.added, again.counts.unchanged) == (0, 1)  # the same list: nothing new
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask  # as any file the user makes
    assert lists.url_of(path) in str(caught.value)
    assert "2 MB" in str(caught.value)
    assert out.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["colm2025.json", "colm2025.json.lock"]  # no temp


async def test_a_paper_list_with_an_absurd_record_is_refused(tmp_path):
    lists = FakePaperLists()
    path = "papercopilot/paperlists/main/colm/colm2025.json"
    good = {"id": "abc", "title": "A paper", "abstract": "Words.", "status": "Poster"}
    lists.files[path] = json.dumps([good, {**good, "id": "big", "author": "A" * 1_200_000}])
    await lists.start()
    out = tmp_path / "colm2025.json"
    try:
        async with PoliteClient(CAPPED, sleep=Sleeps()) as client:
            with pytest.raises(FetchError, match=r"big.*record of .* bytes.*not written"):
                await fetch.fetch_paperlist(fetch.FetchRun(client, out), lists.url_of(path))
    finally:
        await lists.stop()
    assert not out.exists()

"""Two fetches into one corpus file at once (a CLI fetch beside the bot's scheduled refresh, or
two CLI fetches): neither loses the other's papers, and each counts only what it added."""

from __future__ import annotations

import asyncio
import io
import threading
from datetime import date

import pytest

from bot.config import FetchJob, SourcesSettings
from bot.console.cli import main
from bot.sources import fetch
from bot.sources.http import FetchError, PoliteClient
from bot.sources.store import Resume
from tests.fakesources import FakeArxiv, FakeOpenReview, Fault, arxiv_entry, note
from tests.sources.test_fetch import NOW, SETTINGS, VENUE, Sleeps, lines

ARXIV_QUERY = "(cat:cs.LG) AND submittedDate:[202611010000 TO 202611302359]"


def openreview_notes(count: int) -> list[dict]:
    return [note(f"or{i:03d}", title=f"OpenReview paper {i}") for i in range(count)]


def arxiv_papers(count: int) -> list[dict]:
    return [
        arxiv_entry(f"2611.{i:05d}", published=f"2026-11-{1 + i % 28:02d}T12:00:00Z")
        for i in range(count)
    ]


def test_a_refresh_and_a_cli_fetch_into_one_file_keep_both(tmp_path, monkeypatch):
    """The scheduled refresh (`run_job`, OpenReview) and `python -m bot fetch arxiv` run at
    once in two threads, each with its own event loop, into one `--out` file. Both servers
    answer their first page only once both fetches have asked: each has read the file before
    either writes it. Every paper of both is in the file and each reports its own count."""
    out = tmp_path / "mixed.jsonl"
    openreview = FakeOpenReview(openreview_notes(30))
    arxiv = FakeArxiv(arxiv_papers(26))
    openreview.meet = arxiv.meet = threading.Barrier(2)
    config = tmp_path / "settings.toml"
    config.write_text("[sources]\narxiv_interval_seconds = 0\n", encoding="utf-8")
    results: dict[str, object] = {}

    def refresh(url: str) -> None:
        settings = SourcesSettings(openreview_url=url, retry_base_seconds=0.01)
        job = FetchJob(kind="openreview", out=out, venue=VENUE)
        results["refresh"] = asyncio.run(fetch.run_job(job, settings, now=NOW, sleep=Sleeps()))

    def cli() -> None:
        stdout, stderr = io.StringIO(), io.StringIO()
        argv = ["--config", str(config), "fetch", "arxiv", "cs.LG", "--since", "2026-11-01"]
        code = main([*argv, "--until", "2026-11-30", "--out", str(out)], out=stdout, err=stderr)
        results["cli"] = (code, stdout.getvalue(), stderr.getvalue())

    with openreview.in_thread() as or_url, arxiv.in_thread() as ax_url:
        monkeypatch.setenv("PAPERBOT_ARXIV_URL", ax_url + "/api/query")
        threads = [threading.Thread(target=refresh, args=(or_url,)), threading.Thread(target=cli)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    ids = [r["id"] for r in lines(out)]
    assert len(ids) == len(set(ids)) == 56
    expected = {f"openreview:or{i:03d}" for i in range(30)}
    assert {i for i in ids if i.startswith("openreview:")} == expected
    assert sum(i.startswith("arxiv:") for i in ids) == 26
    report = results["refresh"]
    assert isinstance(report, fetch.FetchReport)
    assert report.complete
    assert report.counts.added == 30
    code, stdout, stderr = results["cli"]  # type: ignore[misc]
    assert code == 0, stderr
    assert "26 new" in stdout


async def test_the_same_venue_fetched_twice_at_once_counts_each_paper_once(tmp_path):
    """Two fetches of one venue into one file, page by page interleaved: the papers are in the
    file once, and "N new" over both runs adds up to the papers there are, not twice that."""
    server = FakeOpenReview(openreview_notes(7))
    await server.start()
    out = tmp_path / "icml.jsonl"
    try:

        async def one() -> fetch.FetchReport:
            async with PoliteClient(SETTINGS, sleep=Sleeps()) as client:
                run = fetch.FetchRun(client, out, now=NOW)
                return await fetch.fetch_openreview(run, server.url, VENUE, limit=3)

        first, second = await asyncio.gather(one(), one())
    finally:
        await server.stop()
    assert [r["id"] for r in lines(out)] == [f"openreview:or{i:03d}" for i in range(7)]
    assert first.complete
    assert second.complete
    assert first.counts.added + second.counts.added == 7
    assert sorted(first.counts.added_ids + second.counts.added_ids) == [
        f"openreview:or{i:03d}" for i in range(7)
    ]
    assert first.counts.added + first.counts.unchanged == 7
    assert second.counts.added + second.counts.unchanged == 7


async def test_an_interrupted_fetch_stays_resumable_when_another_completes(tmp_path):
    """An OpenReview fetch stopped by a 503 burst after its first page keeps its resume point
    while an arXiv fetch into the same file completes; run again, it goes on from there."""
    openreview = FakeOpenReview(openreview_notes(7))
    arxiv = FakeArxiv(arxiv_papers(5))
    await openreview.start()
    await arxiv.start()
    out = tmp_path / "mixed.jsonl"
    query = f"openreview {VENUE}"
    try:
        openreview.fail_from(2, Fault(503))
        stingy = SourcesSettings(max_retries=0)
        async with PoliteClient(stingy, sleep=Sleeps()) as client:
            with pytest.raises(FetchError, match="HTTP 503"):
                await fetch.fetch_openreview(
                    fetch.FetchRun(client, out, now=NOW), openreview.url, VENUE, limit=3
                )
        assert Resume.load(out, query).next == 3
        async with PoliteClient(SETTINGS, sleep=Sleeps()) as client:
            done = await fetch.fetch_arxiv(
                fetch.FetchRun(client, out, now=NOW),
                arxiv.base_url,
                ["cs.LG"],
                date(2026, 11, 1),
                date(2026, 11, 30),
                page_size=2,
            )
        assert done.complete
        assert Resume.load(out, f"arxiv {ARXIV_QUERY}") is None  # its own point is cleared
        assert Resume.load(out, query).next == 3  # the other one's is not
        async with PoliteClient(SETTINGS, sleep=Sleeps()) as client:
            report = await fetch.fetch_openreview(
                fetch.FetchRun(client, out, now=NOW), openreview.url, VENUE, limit=3
            )
    finally:
        await openreview.stop()
        await arxiv.stop()
    assert report.resumed_at == 3
    assert report.complete
    ids = {r["id"] for r in lines(out)}
    assert len(ids) == 12
    assert not Resume.path_for(out).exists()

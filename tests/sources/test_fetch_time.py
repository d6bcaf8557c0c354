"""A fetch job's total time is bounded (`[sources] max_fetch_seconds`, issue 26.11).

A 429 with Retry-After of up to 600 s used to be honoured on every retry, so one source could
keep a refresh busy for about an hour. Now a wait that would end past the bound is not taken:
the job ends with an error naming the source and the bound, and what it saved is resumed by
the next run. The clock moves only when the fetch sleeps, so the test costs no real waiting.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bot.config import FetchJob, SourcesSettings
from bot.sources import fetch
from bot.sources.http import FetchError
from bot.sources.store import Resume
from tests.fakesources import FakeOpenReview, Fault, note
from tests.sources.test_fetch import NOW, VENUE, lines

BOUND = 60.0
NOTES = 1003  # OpenReview answers 1,000 notes a page: a first page saved, then the faults


class FakeTime:
    """A monotonic clock that moves only by the waits the fetch takes (none is spent)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
async def openreview():
    server = FakeOpenReview([note(f"n{i:04d}") for i in range(NOTES)])
    await server.start()
    yield server
    await server.stop()


def settings_for(server: FakeOpenReview) -> SourcesSettings:
    return replace(
        SourcesSettings(user_agent="paperbot-tests/1.0 (loopback)", retry_base_seconds=0.5),
        openreview_url=server.url,
        max_fetch_seconds=BOUND,
    )


@pytest.mark.parametrize(
    ("retry_after", "slept"),
    [(("600",), []), (("40", "40"), [40.0])],
    ids=["one-retry-after-past-the-bound", "retry-afters-adding-up-past-it"],
)
async def test_a_wait_past_the_bound_ends_the_fetch_and_the_next_run_resumes(
    openreview: FakeOpenReview, tmp_path: Path, retry_after: tuple[str, ...], slept: list[float]
) -> None:
    openreview.fail_from(2, *[Fault(429, {"Retry-After": s}) for s in retry_after])
    out = tmp_path / "icml.jsonl"
    job = FetchJob(kind="openreview", out=out, venue=VENUE)
    settings = settings_for(openreview)
    time = FakeTime()
    with pytest.raises(FetchError) as caught:
        await fetch.run_job(job, settings, now=NOW, sleep=time.sleep, clock=time.monotonic)
    message = str(caught.value)
    assert message.startswith(f"openreview {VENUE}: ")  # names the source...
    assert "60 s" in message
    assert "[sources] max_fetch_seconds" in message
    assert "resume" in message
    assert time.slept == slept  # no wait that would cross the bound was taken
    assert len(openreview.requests) == 1 + len(retry_after)
    # The first page stays saved, with its resume point.
    assert len(lines(out)) == 1000
    resume = Resume.load(out, f"openreview {VENUE}")
    assert resume is not None
    assert resume.next == 1000

    again = FakeTime()
    report = await fetch.run_job(job, settings, now=NOW, sleep=again.sleep, clock=again.monotonic)
    assert report.complete
    assert report.resumed_at == 1000
    assert report.counts.added == NOTES - 1000
    assert len(lines(out)) == NOTES
    assert again.slept == []


async def test_a_fetch_within_the_bound_waits_as_asked(
    openreview: FakeOpenReview, tmp_path: Path
) -> None:
    """The bound only ends waits past it: a Retry-After that fits is honoured as before."""
    openreview.fail(Fault(429, {"Retry-After": "30"}), Fault(503, {"Retry-After": "29"}))
    out = tmp_path / "icml.jsonl"
    time = FakeTime()
    job = FetchJob(kind="openreview", out=out, venue=VENUE)
    report = await fetch.run_job(
        job, settings_for(openreview), now=NOW, sleep=time.sleep, clock=time.monotonic
    )
    assert report.complete
    assert report.counts.added == NOTES
    assert time.slept == [30.0, 29.0]


async def test_no_request_starts_once_the_time_is_up(
    openreview: FakeOpenReview, tmp_path: Path
) -> None:
    """Time spent answering counts too: past the bound, the next page is not asked for."""
    out = tmp_path / "icml.jsonl"
    time = FakeTime()
    job = FetchJob(kind="openreview", out=out, venue=VENUE)

    class Slow:
        """Progress that sees page one saved, then lets the clock pass the bound."""

        def total(self, count: int) -> None:
            return None

        def advance(self, count: int) -> None:
            if count:
                time.now += BOUND + 1

    with pytest.raises(FetchError, match=r"max_fetch_seconds") as caught:
        await fetch.run_job(
            job,
            settings_for(openreview),
            now=NOW,
            progress=Slow(),
            sleep=time.sleep,
            clock=time.monotonic,
        )
    assert f"openreview {VENUE}" in str(caught.value)
    assert len(openreview.requests) == 1
    assert len(lines(out)) == 1000

"""Fetch a source into a corpus file: page by page, merged, saved after every page, resumable.

Shared by `python -m bot fetch` and the bot's background refresh (bot/app/refresh.py). Each page
is merged and written atomically together with a resume file, so an interruption (Ctrl-C, a
crash, a 503 burst that outlasts the retries) loses at most the page in flight, and the next
run of the same query starts from the saved offset. Pages are committed under the corpus
file's lock (`store.commit`), so fetches into one file at once keep each other's papers.

What a run refuses: a record of absurd size (`store.oversize`, reported and skipped), a
response past `[sources] max_response_mb` (`http.read_capped`), JSON nested past the
parser's stack; and it stops, resumable, after MAX_RECORDS entries of a source that pages on
without end. A configured job (`run_job`) also ends, resumable, at `[sources] max_fetch_seconds`
(`Deadline`): a 429's Retry-After of up to 10 min on every retry once kept a refresh busy for
about an hour.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from bot.config import FetchJob, SourcesSettings
from bot.papers.corpus import TOO_DEEP, LoadReport, load_file
from bot.papers.files import atomic_path, file_lock
from bot.papers.records import Paper
from bot.sources import arxiv, openreview
from bot.sources.http import FetchError, PoliteClient, Response
from bot.sources.store import CorpusFile, MergeCounts, Resume, commit, oversize

log = logging.getLogger(__name__)

ARXIV_PAGE = 200  # results per call; arXiv allows up to 2,000 but is slow on large pages
EMPTY_PAGE_RETRIES = 2  # arXiv sometimes answers an empty page mid-query; ask again this often
# Entries one run reads at most. The largest venues have ~5,000 accepted papers and a month of
# arXiv ML ~15,000: a source still paging past this (`count` 10^9, pages without end) is
# broken, and the run stops there, saved and resumable, instead of fetching forever.
MAX_RECORDS = 100_000


class Progress(Protocol):
    """What a fetch reports to: a tqdm bar on a terminal, plain lines otherwise, or nothing."""

    def total(self, count: int) -> None: ...

    def advance(self, count: int) -> None: ...


class NoProgress:
    def total(self, count: int) -> None:
        return None

    def advance(self, count: int) -> None:
        return None


@dataclass(frozen=True, slots=True)
class FetchRun:
    """One fetch into one corpus file, whatever the source: the client that asks, the file it
    writes, what it reports progress to, and the time stamped on new papers (None: now)."""

    client: PoliteClient
    out: Path
    progress: Progress = field(default_factory=NoProgress)
    now: datetime | None = None


@dataclass(slots=True)
class FetchReport:
    label: str
    out: Path
    counts: MergeCounts = field(default_factory=MergeCounts)
    total: int = 0
    seen: int = 0
    pages: int = 0
    resumed_at: int | None = None
    problems: list[str] = field(default_factory=list)
    complete: bool = False
    stopped: str = ""  # why a run ended before the source's end (a bound), for the summary

    @property
    def changed(self) -> bool:
        return bool(self.counts.added or self.counts.updated)

    def summary(self) -> str:
        resumed = f" (resumed at {self.resumed_at})" if self.resumed_at else ""
        skipped = f", {len(self.problems)} entries skipped" if self.problems else ""
        why = f"{self.stopped}; " if self.stopped else "incomplete: "
        state = "" if self.complete else f" ({why}run again to resume)"
        return (
            f"{self.label}: {self.seen} of {self.total} fetched{resumed}: "
            f"{self.counts.text()}{skipped} -> {self.out}{state}"
        )


def now_stamp(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def _pages(
    report: FetchReport,
    query: str,
    run: FetchRun,
    get_page: Callable[[int], Awaitable[tuple[int, int, list[dict[str, Any]], list[str]]]],
    max_records: int | None = None,
) -> None:
    """The paging loop both APIs share: fetch at `offset`, check, commit, until `total` (or
    `max_records` entries in this run, MAX_RECORDS by default: then stopped, the resume
    point saved)."""
    out, progress, now = report.out, run.progress, now_stamp(run.now)
    bound = MAX_RECORDS if max_records is None else max_records
    store = await asyncio.to_thread(CorpusFile, out)
    report.problems.extend(store.problems)
    resume = Resume.load(out, query)
    offset = 0
    if resume is not None:
        offset, now = resume.next, resume.started
        report.resumed_at = offset or None
    start = offset
    empty = 0
    while True:
        total, count, records, problems = await get_page(offset)
        report.total = max(total, 0)
        if report.pages == 0:
            progress.total(report.total)
            progress.advance(min(offset, report.total))
        report.pages += 1
        if count == 0:
            if offset < total and empty < EMPTY_PAGE_RETRIES:
                empty += 1
                log.warning("%s: empty page at %d of %d; asking again", report.label, offset, total)
                continue
            break
        empty = 0
        kept = []
        for record in records:
            why = oversize(record)
            if why is None:
                kept.append(record)
            else:
                problems.append(f"{record.get('id')}: {why}; not written")
        for problem in problems:
            log.warning("%s", problem)
        report.problems.extend(problems)
        offset += count
        report.seen = offset
        progress.advance(count)
        done = offset >= total
        point = None if done else Resume(query, offset, now)
        await asyncio.to_thread(commit, store, kept, now, report.counts, query, point)
        if done:
            break
        if offset - start >= bound:
            report.stopped = (
                f"stopped after {offset - start:,} papers in one run, the most a fetch takes "
                f"(the source reports {total:,}); what was fetched is saved"
            )
            log.warning("%s: %s", report.label, report.stopped)
            break
    report.seen = max(report.seen, offset)
    report.complete = offset >= report.total
    if report.complete:  # drops the resume point; writes only if the file has news
        await asyncio.to_thread(commit, store, [], now, report.counts, query, None)


async def fetch_openreview(
    run: FetchRun,
    base_url: str,
    venue_id: str,
    *,
    limit: int = openreview.PAGE_LIMIT,
    max_records: int | None = None,
) -> FetchReport:
    """A venue's accepted papers (venueid equals `venue_id`) into `run.out`."""
    report = FetchReport(f"openreview {venue_id}", run.out)
    url = base_url.rstrip("/") + "/notes"

    async def get_page(offset: int) -> tuple[int, int, list[dict[str, Any]], list[str]]:
        params: dict[str, str | int] = {
            "content.venueid": venue_id,
            "offset": offset,
            "limit": limit,
        }
        response = await run.client.get(url, params)
        try:
            data = json.loads(response.body)
            page = openreview.parse_notes(data, venue_id, offset)
        except (ValueError, RecursionError, openreview.MalformedNote) as exc:
            why = TOO_DEEP if isinstance(exc, RecursionError) else str(exc)
            raise FetchError(f"{response.url}: not an OpenReview notes response ({why})") from exc
        return page.total, page.notes, page.records, page.problems

    await _pages(report, f"openreview {venue_id}", run, get_page, max_records)
    return report


async def fetch_arxiv(
    run: FetchRun,
    base_url: str,
    categories: list[str] | tuple[str, ...],
    since: date,
    until: date,
    *,
    page_size: int = ARXIV_PAGE,
    max_records: int | None = None,
) -> FetchReport:
    """arXiv papers of `categories` submitted between `since` and `until` (inclusive) into
    `run.out`."""
    query = arxiv.search_query(categories, since, until)
    report = FetchReport(f"arxiv {' '.join(categories)} {since}..{until}", run.out)

    async def get_page(offset: int) -> tuple[int, int, list[dict[str, Any]], list[str]]:
        params: dict[str, str | int] = {
            "search_query": query,
            "start": offset,
            "max_results": page_size,
            "sortBy": "submittedDate",
            "sortOrder": "ascending",  # papers arriving meanwhile land after the cursor
        }
        response = await run.client.get(base_url, params, ok=(400,))
        try:
            page = arxiv.parse_feed(response.body)
        except arxiv.ArxivError as exc:
            raise FetchError(f"arXiv refused the query: {exc}") from exc
        if response.status != 200:
            raise FetchError(f"{response.url}: HTTP {response.status}")
        return page.total, page.entries, page.records, page.problems

    await _pages(report, f"arxiv {query}", run, get_page, max_records)
    return report


async def fetch_paperlist(run: FetchRun, source: str) -> FetchReport:
    """A Paper Copilot list (URL or file) checked as a corpus file, then put at `run.out`
    atomically, under the file's lock. A list with a record of absurd size is refused whole
    (it is written as the source gives it, so one record cannot be left out)."""
    out = run.out
    report = FetchReport(f"paperlist {source}", out)
    body = None
    if source.startswith(("http://", "https://")):
        body = (await run.client.get(source)).body  # capped at [sources] max_response_mb

    def work() -> None:
        with file_lock(out), atomic_path(out, suffix=out.suffix or ".json") as tmp:
            if body is None:
                shutil.copyfile(Path(source).expanduser(), tmp)
            else:
                tmp.write_bytes(body)
            loaded: LoadReport = load_file(tmp)
            problems = [str(p).replace(str(tmp), source) for p in loaded.problems]
            report.problems.extend(problems)
            if not loaded.papers:
                first = "; ".join(problems[:2]) or "no paper records"
                raise FetchError(f"{source} is not a usable Paper Copilot list: {first}")
            for paper in loaded.papers:
                why = oversize(paper.to_json())
                if why is not None:
                    raise FetchError(
                        f"{source}: paper {_as_out(paper, tmp, out)}: {why}; "
                        "the list is not written"
                    )
            old = _ids_in(out)
            ids = [_as_out(p, tmp, out) for p in loaded.papers]
            new = [i for i in ids if i not in old]
            report.counts.added = len(new)
            report.counts.added_ids.extend(new)
            report.counts.unchanged = len(ids) - len(new)
            report.total = report.seen = len(ids)
        report.complete = True

    await asyncio.to_thread(work)
    return report


def _as_out(paper: Paper, tmp: Path, out: Path) -> str:
    """The id `paper` has once its list is at `out`: a Paper Copilot id is `<file stem>/<id>`,
    and the list was read from its temporary file."""
    read_as, kept_as = tmp.stem.lower() + "/", out.stem.lower() + "/"
    return kept_as + paper.id[len(read_as) :] if paper.id.startswith(read_as) else paper.id


def _ids_in(path: Path) -> set[str]:
    return {p.id for p in load_file(path).papers} if path.is_file() else set()


class TooLong(FetchError):
    """A fetch job that would pass `[sources] max_fetch_seconds`: ended, its saved pages kept."""


class Deadline:
    """One fetch job's time bound, across every request and every wait of its retries.

    A wait that would end past the bound is not taken (there is no use in waiting 10 min to be
    stopped), and no request starts once the time is up: the job ends with TooLong naming the
    source and the bound, and the pages already saved resume at the next run. So a job lasts
    at most the bound plus one request (`[sources] timeout_seconds`). `clock` is monotonic
    seconds, injectable with `sleep` so tests spend none of the waits.
    """

    def __init__(
        self,
        label: str,
        seconds: float,
        sleep: Callable[[float], Awaitable[Any]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label, self.seconds, self.clock, self._sleep = label, seconds, clock, sleep
        self.ends = clock() + seconds

    def _over(self, why: str) -> TooLong:
        return TooLong(
            f"{self.label}: {why}; stopped: what was fetched is saved, and the next fetch "
            "resumes from there"
        )

    async def sleep(self, seconds: float) -> None:
        """The client's pauses (its gap between calls, a retry's backoff or Retry-After)."""
        left = self.ends - self.clock()
        if seconds > left:
            raise self._over(
                f"a wait of {seconds:.0f} s (Retry-After or backoff) would end past the "
                f"{self.seconds:g} s one fetch may take ([sources] max_fetch_seconds; "
                f"{max(left, 0.0):.0f} s were left)"
            )
        await self._sleep(seconds)

    def check(self) -> None:
        """TooLong once the time is up: called before every request."""
        if self.clock() >= self.ends:
            raise self._over(
                f"the {self.seconds:g} s one fetch may take ([sources] max_fetch_seconds) are over"
            )


class BoundedClient(PoliteClient):
    """The polite client within one `Deadline`: its waits go through it, and no request
    starts after it."""

    def __init__(self, settings: SourcesSettings, deadline: Deadline, *, interval: float) -> None:
        super().__init__(settings, interval=interval, sleep=deadline.sleep)
        self.deadline = deadline

    async def get(
        self, url: str, params: Mapping[str, str | int] | None = None, *, ok: tuple[int, ...] = ()
    ) -> Response:
        self.deadline.check()
        return await super().get(url, params, ok=ok)


async def run_job(
    job: FetchJob,
    settings: SourcesSettings,
    *,
    progress: Progress | None = None,
    now: datetime | None = None,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> FetchReport:
    """One configured [[sources.fetch]] job, as the bot's refresh runs it, ended (TooLong) at
    `[sources] max_fetch_seconds` as measured by `clock`."""
    now = now or datetime.now(UTC)
    interval = settings.arxiv_interval_seconds if job.kind == "arxiv" else 0.0
    deadline = Deadline(job.label, settings.max_fetch_seconds, sleep, clock)
    async with BoundedClient(settings, deadline, interval=interval) as client:
        run = FetchRun(client, job.out, progress or NoProgress(), now)
        if job.kind == "openreview":
            return await fetch_openreview(run, settings.openreview_url, job.venue)
        if job.kind == "arxiv":
            until = now.date()
            since = until - timedelta(days=job.days)
            return await fetch_arxiv(run, settings.arxiv_url, job.categories, since, until)
        return await fetch_paperlist(run, job.url)

"""Fetch a source into a corpus file: page by page, merged, saved after every page, resumable.

Shared by `python -m bot fetch` and the bot's background refresh (bot/app/refresh.py). Each page
is merged and written atomically together with a resume file, so an interruption (Ctrl-C, a
crash, a 503 burst that outlasts the retries) loses at most the page in flight, and the next
run of the same query starts from the saved offset.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from bot.config import FetchJob, SourcesSettings
from bot.papers.corpus import LoadReport, load_file
from bot.sources import arxiv, openreview
from bot.sources.http import FetchError, PoliteClient
from bot.sources.store import CorpusFile, MergeCounts, Resume

log = logging.getLogger(__name__)

ARXIV_PAGE = 200  # results per call; arXiv allows up to 2,000 but is slow on large pages
EMPTY_PAGE_RETRIES = 2  # arXiv sometimes answers an empty page mid-query; ask again this often


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

    @property
    def changed(self) -> bool:
        return bool(self.counts.added or self.counts.updated)

    def summary(self) -> str:
        resumed = f" (resumed at {self.resumed_at})" if self.resumed_at else ""
        skipped = f", {len(self.problems)} entries skipped" if self.problems else ""
        state = "" if self.complete else " (incomplete: run again to resume)"
        return (
            f"{self.label}: {self.seen} of {self.total} fetched{resumed}: "
            f"{self.counts.text()}{skipped} -> {self.out}{state}"
        )


def now_stamp(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def _write(store: CorpusFile, resume: Resume | None, out: Path) -> None:
    """Save the merged records, then the resume point (or drop it when done), off the loop."""

    def work() -> None:
        store.save()
        if resume is None:
            Resume.clear(out)
        else:
            resume.save(out)

    await asyncio.to_thread(work)


async def _pages(
    report: FetchReport,
    query: str,
    run: FetchRun,
    get_page: Callable[[int], Awaitable[tuple[int, int, list[dict[str, Any]], list[str]]]],
) -> None:
    """The paging loop both APIs share: fetch at `offset`, merge, save, until `total`."""
    out, progress, now = report.out, run.progress, now_stamp(run.now)
    store = await asyncio.to_thread(CorpusFile, out)
    report.problems.extend(store.problems)
    resume = Resume.load(out, query)
    offset = 0
    if resume is not None:
        offset, now = resume.next, resume.started
        report.resumed_at = offset or None
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
        for problem in problems:
            log.warning("%s", problem)
        report.problems.extend(problems)
        for record in records:
            store.merge(record, now, report.counts)
        offset += count
        report.seen = offset
        progress.advance(count)
        done = offset >= total
        await _write(store, None if done else Resume(query, offset, now), out)
        if done:
            break
    report.seen = max(report.seen, offset)
    report.complete = offset >= report.total
    if report.complete and (store.records or out.exists()):
        await _write(store, None, out)
    elif report.complete:
        Resume.clear(out)  # an empty result: nothing to write, no empty corpus file


async def fetch_openreview(
    run: FetchRun, base_url: str, venue_id: str, *, limit: int = openreview.PAGE_LIMIT
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
        except (ValueError, openreview.MalformedNote) as exc:
            raise FetchError(f"{response.url}: not an OpenReview notes response ({exc})") from exc
        return page.total, page.notes, page.records, page.problems

    await _pages(report, f"openreview {venue_id}", run, get_page)
    return report


async def fetch_arxiv(
    run: FetchRun,
    base_url: str,
    categories: list[str] | tuple[str, ...],
    since: date,
    until: date,
    *,
    page_size: int = ARXIV_PAGE,
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

    await _pages(report, f"arxiv {query}", run, get_page)
    return report


async def fetch_paperlist(run: FetchRun, source: str) -> FetchReport:
    """A Paper Copilot list (URL or file) checked as a corpus file, then put at `run.out`
    atomically."""
    out = run.out
    report = FetchReport(f"paperlist {source}", out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=out.stem, suffix=out.suffix or ".json", dir=out.parent)
    tmp = Path(name)
    try:
        if source.startswith(("http://", "https://")):
            body = (await run.client.get(source)).body
            with os.fdopen(fd, "wb") as handle:
                handle.write(body)
        else:
            os.close(fd)
            await asyncio.to_thread(lambda: shutil.copyfile(Path(source).expanduser(), tmp))
        loaded: LoadReport = await asyncio.to_thread(load_file, tmp)
        problems = [str(p).replace(str(tmp), source) for p in loaded.problems]
        report.problems.extend(problems)
        if not loaded.papers:
            first = "; ".join(problems[:2]) or "no paper records"
            raise FetchError(f"{source} is not a usable Paper Copilot list: {first}")
        old = await asyncio.to_thread(_ids_in, out)  # a whole corpus file: not on the loop
        new = [p.id for p in loaded.papers if p.id not in old]
        report.counts.added = len(new)
        report.counts.added_ids.extend(new)
        report.counts.unchanged = len(loaded.papers) - len(new)
        report.total = report.seen = len(loaded.papers)
        os.replace(tmp, out)
        report.complete = True
    finally:
        tmp.unlink(missing_ok=True)  # noqa: ASYNC240 - one unlink of our own temporary file
    return report


def _ids_in(path: Path) -> set[str]:
    return {p.id for p in load_file(path).papers} if path.is_file() else set()


async def run_job(
    job: FetchJob,
    settings: SourcesSettings,
    *,
    progress: Progress | None = None,
    now: datetime | None = None,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> FetchReport:
    """One configured [[sources.fetch]] job, as the bot's refresh runs it."""
    now = now or datetime.now(UTC)
    interval = settings.arxiv_interval_seconds if job.kind == "arxiv" else 0.0
    async with PoliteClient(settings, interval=interval, sleep=sleep) as client:
        run = FetchRun(client, job.out, progress or NoProgress(), now)
        if job.kind == "openreview":
            return await fetch_openreview(run, settings.openreview_url, job.venue)
        if job.kind == "arxiv":
            until = now.date()
            since = until - timedelta(days=job.days)
            return await fetch_arxiv(run, settings.arxiv_url, job.categories, since, until)
        return await fetch_paperlist(run, job.url)

"""The bot's background refresh: fetch every [[sources.fetch]] at `[sources] refresh_at` (UTC),
then swap the new corpus in through the live reload (bot/app/reload.py).

Why through the reload and not a separate path: the reload already builds the new engine in a
thread, validates it and swaps it in one assignment while the old engine serves, and rejects a
broken corpus with its reasons. A source that fails (network down, arXiv 503s beyond the retries,
a venue id that does not exist, `[sources] max_fetch_seconds` reached) changes no file beyond
the pages it saved, and is recorded in `sources` for `/admin status` and logged as a warning;
the old corpus keeps serving. Pages of a fetch that failed part-way are valid merged records
already written atomically, and the next refresh resumes after them.

The refresh's reload waits its turn behind a reload running (`Reloader.reload_in_turn`): one
that started before the fetch wrote its files would not serve the new papers.

A refresh can take long (a Retry-After of 10 min is honoured while the bound allows), so
`/admin refresh` starts it in the background (`begin`) and answers at once, and `current`
says where it is for `/admin status`: each source fetching page k, waiting until a time, or
queued, then the reload (bot/app/refreshstate.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from bot.app.refreshstate import RELOAD, JobProgress, RefreshRun, SourceStatus
from bot.background import Background
from bot.config import FetchJob, Settings, SourcesSettings
from bot.sources.fetch import FetchReport, Progress, run_job
from bot.sources.http import FetchError
from bot.sources.shared import SharedSources
from bot.timing import Clock, SystemClock

if TYPE_CHECKING:
    from bot.app.reload import Reloader, ReloadOutcome

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[Any]]


class RunJob(Protocol):
    """`bot.sources.fetch.run_job`, or a stand-in for it."""

    def __call__(
        self,
        job: FetchJob,
        settings: SourcesSettings,
        *,
        progress: Progress,
        sleep: Sleep,
        clock: Callable[[], float],
    ) -> Awaitable[FetchReport]: ...


class RefreshHost(Protocol):
    settings: Settings
    reloader: Reloader


def next_refresh(times: tuple[str, ...], now: datetime) -> datetime | None:
    """The first of the UTC `HH:MM` times after `now` (today or tomorrow); None without times."""
    found = []
    for text in times:
        hour, minute = (int(part) for part in text.split(":"))
        at = now.astimezone(UTC).replace(hour=hour, minute=minute, second=0, microsecond=0)
        found.append(at if at > now else at + timedelta(days=1))
    return min(found, default=None)


class Refresher:
    """Runs the configured fetches (one refresh at a time) and reloads when papers changed.

    `sleep` and `monotonic` are what a fetch waits with and measures its time bound by; tests
    replace them so a 10-minute Retry-After costs nothing. `clock` is the wall clock of the
    schedule and of the times `/admin status` shows.
    """

    def __init__(
        self, host: RefreshHost, *, clock: Clock | None = None, run: RunJob | None = None
    ) -> None:
        self.host = host
        self.clock: Clock = clock or SystemClock()
        self.run: RunJob = run or run_job
        self.sleep: Sleep = asyncio.sleep
        self.monotonic: Callable[[], float] = time.monotonic
        self.sources: dict[str, SourceStatus] = {}
        self.last_reload: ReloadOutcome | None = None
        self.next_at: datetime | None = None
        self.current: RefreshRun | None = None  # the refresh running now
        self.task: asyncio.Task[ReloadOutcome | None] | None = None  # the last one `begin` ran
        self._lock = asyncio.Lock()
        self.loop = Background("sources-refresh", self._loop)
        self.shared: SharedSources | None = None  # several processes on one PostgreSQL

    @property
    def jobs(self) -> tuple[FetchJob, ...]:
        return self.host.settings.sources.fetch

    @property
    def busy(self) -> bool:
        """A refresh runs (scheduled or asked for), or `begin` has just started one."""
        return self._lock.locked() or (self.task is not None and not self.task.done())

    def begin(self, source: str) -> asyncio.Task[ReloadOutcome | None] | None:
        """Start a refresh in the background and return at once; None when one already runs
        (the caller says so rather than queue a second fetch of the same sources)."""
        if self.busy:
            return None
        self.task = asyncio.get_running_loop().create_task(
            self.refresh(source), name="sources-refresh-now"
        )
        return self.task

    def stage(self) -> str | None:
        """Where the refresh running now is, in a few words; None when none runs."""
        run = self.current
        if run is None:
            return None
        if run.stage != RELOAD:
            return run.stage
        running = self.host.reloader.current
        if running is not None and running != run.reload_source:
            return f"waiting for the reload by {running} to finish"
        return "reloading the corpus"

    async def refresh(self, source: str = "schedule") -> ReloadOutcome | None:
        """Fetch every source; reload when any added or updated a paper. Never raises for a
        source's failure: that is recorded and logged, and the current corpus stays."""
        async with self._lock:
            run = RefreshRun(source, self.clock.now(), [job.label for job in self.jobs])
            self.current = run
            try:
                return await self._refresh(run)
            finally:
                self.current = None

    async def _refresh(self, run: RefreshRun) -> ReloadOutcome | None:
        changed = False
        for job in self.jobs:
            progress = run.start(job.label)
            status, job_changed = await self._fetch_shared(job, progress, run)
            self.sources[job.label] = status
            run.finish(job.label)
            changed = changed or job_changed
        if not changed:
            log.info("refresh (%s): no source changed; the corpus stays as it is", run.source)
            return None
        run.stage = RELOAD
        outcome = await self.host.reloader.reload_in_turn(run.reload_source)
        self.last_reload = outcome
        return outcome

    async def _fetch(self, job: FetchJob, progress: JobProgress) -> tuple[SourceStatus, bool]:
        """One source: its status for `/admin status`, and whether it changed the corpus."""
        now = self.clock.now()
        settings = self.host.settings.sources
        try:
            report = await self.run(
                job,
                settings,
                progress=progress,
                sleep=self._sleep_for(progress, job, settings),
                clock=self.monotonic,
            )
        except (FetchError, OSError, ValueError) as exc:
            log.warning("refresh of %s failed; keeping the current corpus: %s", job.label, exc)
            return SourceStatus(job.label, now, False, str(exc)), False
        except Exception as exc:  # a bug in one source must not stop the others
            log.exception("refresh of %s failed unexpectedly", job.label)
            return SourceStatus(job.label, now, False, f"unexpected {type(exc).__name__}"), False
        ok = report.complete
        status = SourceStatus(job.label, now, ok, report.summary(), report.counts.added)
        log.log(logging.INFO if ok else logging.WARNING, "refresh: %s", status.text)
        return status, report.changed

    async def _fetch_shared(
        self, job: FetchJob, progress: JobProgress, run: RefreshRun
    ) -> tuple[SourceStatus, bool]:
        """One source, fetched here or by the process elected for it (bot/sources/shared.py)."""
        if self.shared is None:
            return await self._fetch(job, progress)
        at = self.next_at if run.source == "schedule" and self.next_at else run.started
        slot = f"{run.source} {at:%Y-%m-%dT%H:%M}"  # every process has the same schedule

        def waiting(holder: str | None) -> None:
            progress.fetched_by = holder

        got = await self.shared.fetch(job, slot, lambda: self._fetch(job, progress), waiting)
        if got.result is not None:
            status, changed = got.result
            return status, changed or got.pulled.changed
        status = SourceStatus(job.label, self.clock.now(), got.ok, got.text, len(got.pulled.added))
        return status, got.pulled.changed

    def _sleep_for(self, progress: JobProgress, job: FetchJob, settings: SourcesSettings) -> Sleep:
        """The fetch's waits, shown in `/admin status` while they last: a retry's backoff or
        the source's Retry-After (not arXiv's few seconds between calls, which are the pace)."""
        polite = settings.arxiv_interval_seconds if job.kind == "arxiv" else 0.0

        async def sleep(seconds: float) -> None:
            if seconds > polite:
                progress.waiting_until = self.clock.now() + timedelta(seconds=seconds)
            try:
                await self.sleep(seconds)
            finally:
                progress.waiting_until = None

        return sleep

    # -- the schedule ---------------------------------------------------------------------

    def start(self) -> None:
        """Start the timer loop when the settings ask for refreshes (idempotent)."""
        if not self.jobs or not self.host.settings.sources.refresh_at:
            return
        self.loop.start()

    async def stop(self) -> None:
        """Stop the timer and a refresh `begin` started (the bot is closing: the pages saved
        so far are kept, and the next refresh resumes them)."""
        await self.loop.stop()
        task, self.task = self.task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _loop(self) -> None:
        if self.shared is not None and await self.shared.catch_up(self.jobs):
            await self.host.reloader.reload_in_turn("catch-up")  # papers fetched while down
        if any(not job.out.is_file() for job in self.jobs):
            # A source never fetched yet: fetch it now rather than serve without it until the
            # first refresh time (a new bot would otherwise show nothing new for up to a day).
            await self._refresh_logged("start")
        while True:
            self.next_at = next_refresh(self.host.settings.sources.refresh_at, self.clock.now())
            if self.next_at is None:
                return
            log.info("next corpus refresh at %s", self.next_at.isoformat())
            await self.clock.sleep_until(self.next_at)
            await self._refresh_logged("schedule")

    async def _refresh_logged(self, source: str) -> None:
        try:
            await self.refresh(source)
        except Exception:  # the loop must survive to try again at the next time
            log.exception("corpus refresh (%s) failed", source)

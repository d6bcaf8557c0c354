"""The bot's background refresh: fetch every [[sources.fetch]] at `[sources] refresh_at` (UTC),
then swap the new corpus in through the live reload (bot/app/reload.py).

Why through the reload and not a separate path: the reload already builds the new engine in a
thread, validates it and swaps it in one assignment while the old engine serves, and rejects a
broken corpus with its reasons. A source that fails (network down, arXiv 503s beyond the retries,
a venue id that does not exist) changes no file, triggers no reload, and is recorded in
`sources` for `/admin status` and logged as a warning; the old corpus keeps serving. Pages of a
fetch that failed part-way are valid merged records already written atomically, and join the
corpus at the next successful reload.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from bot.background import Background
from bot.config import FetchJob, Settings, SourcesSettings
from bot.sources.fetch import FetchReport, run_job
from bot.sources.http import FetchError
from bot.timing import Clock, SystemClock

if TYPE_CHECKING:
    from bot.app.reload import Reloader, ReloadOutcome

log = logging.getLogger(__name__)

RunJob = Callable[[FetchJob, SourcesSettings], Awaitable[FetchReport]]


class RefreshHost(Protocol):
    settings: Settings
    reloader: Reloader


@dataclass(frozen=True, slots=True)
class SourceStatus:
    """The last refresh of one source, for `/admin status`."""

    label: str
    at: datetime
    ok: bool
    text: str  # the fetch summary, or why it failed
    added: int = 0


def next_refresh(times: tuple[str, ...], now: datetime) -> datetime | None:
    """The first of the UTC `HH:MM` times after `now` (today or tomorrow); None without times."""
    found = []
    for text in times:
        hour, minute = (int(part) for part in text.split(":"))
        at = now.astimezone(UTC).replace(hour=hour, minute=minute, second=0, microsecond=0)
        found.append(at if at > now else at + timedelta(days=1))
    return min(found, default=None)


class Refresher:
    """Runs the configured fetches (one refresh at a time) and reloads when papers changed."""

    def __init__(
        self, host: RefreshHost, *, clock: Clock | None = None, run: RunJob | None = None
    ) -> None:
        self.host = host
        self.clock: Clock = clock or SystemClock()
        self.run: RunJob = run or run_job
        self.sources: dict[str, SourceStatus] = {}
        self.last_reload: ReloadOutcome | None = None
        self.next_at: datetime | None = None
        self._lock = asyncio.Lock()
        self.loop = Background("sources-refresh", self._loop)

    @property
    def jobs(self) -> tuple[FetchJob, ...]:
        return self.host.settings.sources.fetch

    async def refresh(self, source: str = "schedule") -> ReloadOutcome | None:
        """Fetch every source; reload when any added or updated a paper. Never raises for a
        source's failure: that is recorded and logged, and the current corpus stays."""
        async with self._lock:
            changed = False
            for job in self.jobs:
                now = self.clock.now()
                try:
                    report = await self.run(job, self.host.settings.sources)
                except (FetchError, OSError, ValueError) as exc:
                    status = SourceStatus(job.label, now, False, str(exc))
                    log.warning(
                        "refresh of %s failed; keeping the current corpus: %s", job.label, exc
                    )
                except Exception as exc:  # a bug in one source must not stop the others
                    log.exception("refresh of %s failed unexpectedly", job.label)
                    status = SourceStatus(job.label, now, False, f"unexpected {type(exc).__name__}")
                else:
                    ok = report.complete
                    status = SourceStatus(job.label, now, ok, report.summary(), report.counts.added)
                    changed = changed or report.changed
                    log.log(logging.INFO if ok else logging.WARNING, "refresh: %s", status.text)
                self.sources[job.label] = status
            if not changed:
                log.info("refresh (%s): no source changed; the corpus stays as it is", source)
                return None
            outcome = await self.host.reloader.reload(f"refresh ({source})")
            self.last_reload = outcome
            return outcome

    # -- the schedule ---------------------------------------------------------------------

    def start(self) -> None:
        """Start the timer loop when the settings ask for refreshes (idempotent)."""
        if not self.jobs or not self.host.settings.sources.refresh_at:
            return
        self.loop.start()

    async def stop(self) -> None:
        await self.loop.stop()

    async def _loop(self) -> None:
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

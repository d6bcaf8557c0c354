"""What a source refresh reports while it runs and after it, for `/admin status`.

Why a state of its own: a refresh can take many minutes (a source's Retry-After, arXiv's pace),
and the owner must see where it is without waiting on it: which source is fetching which page,
which waits and until when, which are queued, then the reload; and per source the last result,
done with what it brought or failed with why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

RELOAD = "reload"  # `RefreshRun.stage` once every source is fetched


@dataclass(frozen=True, slots=True)
class SourceStatus:
    """The last refresh of one source, for `/admin status`."""

    label: str
    at: datetime
    ok: bool
    text: str  # the fetch summary, or why it failed
    added: int = 0


class JobProgress:
    """One source's fetch while it runs: the fetch's `Progress`, plus the wait it is in.

    The fetch reports `total` once its first page answered, then `advance` once with the
    offset it resumed at and once per page saved: so the page in flight is one more than the
    pages saved.
    """

    def __init__(self) -> None:
        self.page = 1
        self.seen = 0
        self.of: int | None = None
        self.waiting_until: datetime | None = None  # set by the refresher while it waits
        self.fetched_by: str | None = None  # another process of the fleet fetches it now
        self._resumed = False

    def total(self, count: int) -> None:
        self.of = count

    def advance(self, count: int) -> None:
        if self._resumed:
            self.page += 1
        self._resumed = True
        self.seen += count

    def text(self) -> str:
        if self.fetched_by is not None:
            return f"fetched by another process ({self.fetched_by}); waiting for it"
        if self.waiting_until is not None:
            until = self.waiting_until.astimezone(UTC).strftime("%H:%M:%S")
            return f"page {self.page}: waiting (retry or Retry-After) until {until} UTC"
        of = f" ({self.seen:,} of {self.of:,} papers)" if self.of is not None else ""
        return f"fetching page {self.page}{of}"


@dataclass(slots=True)
class RefreshRun:
    """The refresh running now: who started it and when, and each source still to finish."""

    source: str
    started: datetime
    queued: list[str]  # labels not started yet, in order
    stage: str = "fetching"  # or RELOAD
    fetching: dict[str, JobProgress] = field(default_factory=dict)

    @property
    def reload_source(self) -> str:
        """How its reload is named (in the log, `on_papers_added`, `/admin status`)."""
        return f"refresh ({self.source})"

    def start(self, label: str) -> JobProgress:
        if label in self.queued:
            self.queued.remove(label)
        progress = self.fetching[label] = JobProgress()
        return progress

    def finish(self, label: str) -> None:
        self.fetching.pop(label, None)

    def state(self, label: str) -> str | None:
        """What source `label` is doing in this refresh; None once it is done (its
        `SourceStatus` says how) or when it is not one of this refresh's sources."""
        if label in self.fetching:
            return self.fetching[label].text()
        return "queued" if label in self.queued else None

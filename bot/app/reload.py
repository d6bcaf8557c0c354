"""Live corpus reload: build the new engine aside, validate it, then swap it in one assignment.

Why this shape: loading a corpus takes seconds to minutes, and the bot must keep answering
meanwhile. The new `SearchEngine` is built in a worker thread (`bot.app.workers.off_loop`) from
freshly re-read settings; the old engine keeps serving every command until the new one is
complete and valid. The swap is `holder.engine = new`, a single attribute store on the event
loop, so a command sees either the old engine or the new one, never a mix. Commands read
`bot.engine` at call time, so nothing else needs telling (the daily pools included).

A broken new corpus is rejected with its reasons and the old engine stays (what is refused,
and `force`: bot/app/reloadcheck.py, which builds and judges the new engine).

One reload runs at a time. `/admin reload` during one is refused at once with a clear answer;
a SIGHUP meanwhile is not lost: one more reload runs after the current one (any number of
signals meanwhile coalesce into that one, `_pending`), and the log says so. A source refresh
(bot/app/refresh.py) waits its turn (`reload_in_turn`): it has just written new files, so a
reload that started before them would not serve its papers.

Used by `/admin reload` (bot/app/exts/admin), SIGHUP (bot/app/runner.py), the source refresh
and the console.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from bot.app.reloadcheck import MAX_REASONS, ReloadRejected, added_ids, build, restart_notes
from bot.app.workers import off_loop
from bot.config import Settings
from bot.search.index.workers import WorkersStopped

if TYPE_CHECKING:
    from bot.search.engine import SearchEngine

log = logging.getLogger(__name__)


class EngineHolder(Protocol):
    """What a reload swaps the engine of: the bot, or the console."""

    settings: Settings
    engine: SearchEngine


@dataclass(frozen=True, slots=True)
class ReloadOutcome:
    ok: bool
    source: str
    papers: int  # papers now served (the old count when rejected)
    previous: int
    seconds: float
    reasons: tuple[str, ...] = ()  # why it was rejected
    problems: int = 0  # record-level problems skipped in an accepted corpus
    notes: tuple[str, ...] = field(default=())  # e.g. settings that need a restart
    forced: tuple[str, ...] = ()  # what would have been rejected without force
    # Ids served now that were not before, in corpus order: what a refresh brought (the bot
    # dispatches them as `on_papers_added(paper_ids, source)` for listeners such as feeds).
    added: tuple[str, ...] = ()

    @classmethod
    def kept(
        cls, source: str, papers: int, seconds: float, reasons: Sequence[str]
    ) -> ReloadOutcome:
        """A reload that did not swap: the `papers` already served go on, for `reasons`."""
        return cls(False, source, papers, papers, seconds, tuple(reasons))

    def summary(self) -> str:
        """One paragraph for the owner (Discord reply, console line, log)."""
        if not self.ok:
            why = "\n".join(f"• {r}" for r in self.reasons)
            return (
                f"Reload rejected; still serving the previous corpus ({self.previous:,} "
                f"papers).\n{why}"
            )
        text = f"Reloaded in {self.seconds:.1f} s: {self.papers:,} papers (was {self.previous:,})."
        if self.added:
            text += f" {len(self.added):,} new paper(s)."
        if self.problems:
            text += f" {self.problems:,} bad record(s) skipped (see the log)."
        if self.forced:
            text += "\nAccepted because forced, despite:\n" + "\n".join(
                f"• {r}" for r in self.forced
            )
        for note in self.notes:
            text += f"\n{note}"
        return text


class Reloader:
    """Runs one reload at a time for `holder`, in the background, and swaps atomically."""

    def __init__(
        self,
        holder: EngineHolder,
        *,
        corpus_files: Sequence[Path] | None = None,
        load: Callable[[Settings], SearchEngine] | None = None,
    ) -> None:
        self.holder = holder
        self.corpus_files = tuple(corpus_files or ())
        self.load = load
        self.last: ReloadOutcome | None = None
        self._running: str | None = None
        self._pending: tuple[str, bool | None] | None = None  # requested during a reload
        self._turn = asyncio.Lock()  # held by the reload running; FIFO for those waiting
        self._tasks: set[asyncio.Task[ReloadOutcome]] = set()
        self.on_swap: list[Callable[[ReloadOutcome], None]] = []

    @property
    def running(self) -> bool:
        return self._running is not None

    @property
    def current(self) -> str | None:
        """Who asked for the reload running now (None when none runs)."""
        return self._running

    async def reload(self, source: str, *, force: bool | None = None) -> ReloadOutcome:
        """Build the new engine in a thread; swap on success. Never raises for a bad corpus.

        A reload asked for while one runs is refused here (the owner gets an answer at once);
        `request` (signals) queues it instead, and `reload_in_turn` waits for it.
        """
        if self._running is not None:
            old = self.holder.engine
            return ReloadOutcome.kept(
                source,
                len(old.papers) if old is not None else 0,
                0.0,
                (f"a reload ({self._running}) is already running; try again when it has finished",),
            )
        return await self.reload_in_turn(source, force=force)

    async def reload_in_turn(self, source: str, *, force: bool | None = None) -> ReloadOutcome:
        """A reload that starts once the one running now (and any queued before) has ended:
        for a caller that has just changed the files, which that one may not have read."""
        try:
            async with self._turn:
                return await self._reload_once(source, force)
        finally:
            if self._pending is not None and self._running is None:
                queued, queued_force = self._pending
                self._pending = None
                log.info("running the corpus reload %s asked for during the previous one", queued)
                self.request(queued, force=queued_force)

    async def _reload_once(self, source: str, force: bool | None) -> ReloadOutcome:
        old = self.holder.engine
        previous = len(old.papers) if old is not None else 0
        self._running = source
        started = time.perf_counter()
        log.info("corpus reload requested by %s", source)
        try:
            settings, engine, forced = await off_loop(
                functools.partial(
                    build,
                    self.holder.settings,
                    self.corpus_files or None,
                    self.load,
                    previous=previous,
                    force=force,
                )
            )
        except ReloadRejected as exc:
            outcome = ReloadOutcome.kept(
                source, previous, time.perf_counter() - started, tuple(exc.reasons[:MAX_REASONS])
            )
            log.warning(
                "corpus reload (%s) rejected, keeping %d papers: %s",
                source,
                previous,
                "; ".join(outcome.reasons),
            )
            self.last = outcome
            return outcome
        except WorkersStopped:  # SIGTERM during the build: the process is stopping
            log.info("corpus reload (%s) stopped: the bot is stopping", source)
            self.last = ReloadOutcome.kept(
                source, previous, time.perf_counter() - started, ("the bot is stopping",)
            )
            return self.last
        except Exception as exc:  # a bug in loading must not stop serving
            log.exception("corpus reload (%s) failed; keeping the previous corpus", source)
            outcome = ReloadOutcome.kept(
                source,
                previous,
                time.perf_counter() - started,
                (f"unexpected error: {type(exc).__name__}",),
            )
            self.last = outcome
            return outcome
        finally:
            self._running = None
        report = engine.load_report
        problems = len(report.problems) if report is not None else 0
        notes = await off_loop(restart_notes, self.holder.settings)
        added = await off_loop(added_ids, old, engine)
        # The swap: two plain attribute stores with no await between them.
        self.holder.settings = settings
        self.holder.engine = engine
        outcome = ReloadOutcome(
            True,
            source,
            len(engine.papers),
            previous,
            time.perf_counter() - started,
            problems=problems,
            notes=notes,
            forced=forced,
            added=added,
        )
        self.last = outcome
        log.info(
            "corpus reloaded (%s): %d papers, was %d, %.2fs",
            source,
            outcome.papers,
            previous,
            outcome.seconds,
        )
        for callback in self.on_swap:
            try:
                callback(outcome)
            except Exception:  # a listener must not undo a good swap
                log.exception("reload listener %r failed", callback)
        return outcome

    def request(
        self, source: str, *, force: bool | None = None
    ) -> asyncio.Task[ReloadOutcome] | None:
        """Start a reload without waiting (signal handlers); the task is kept until done.

        During a reload, the request is queued instead: one more reload runs when the current
        one ends (several requests meanwhile make one), and None is returned.
        """
        if self._running is not None:
            if self._pending is None:
                log.info(
                    "corpus reload requested by %s while %s runs: one more will follow it",
                    source,
                    self._running,
                )
            else:
                log.info(
                    "corpus reload requested by %s: already queued after %s",
                    source,
                    self._running,
                )
            self._pending = (source, force)
            return None
        task = asyncio.get_running_loop().create_task(
            self.reload_in_turn(source, force=force), name=f"corpus-reload-{source}"
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


def reload_now(
    holder: EngineHolder,
    source: str = "console",
    corpus_files: Sequence[Path] | None = None,
    load: Callable[[Settings], SearchEngine] | None = None,
    *,
    force: bool | None = None,
) -> ReloadOutcome:
    """The blocking form for the console (no event loop): same checks, same swap."""
    old = holder.engine
    previous = len(old.papers) if old is not None else 0
    started = time.perf_counter()
    try:
        settings, engine, forced = build(
            holder.settings, corpus_files, load, previous=previous, force=force
        )
    except ReloadRejected as exc:
        return ReloadOutcome.kept(
            source, previous, time.perf_counter() - started, tuple(exc.reasons[:MAX_REASONS])
        )
    report = engine.load_report
    holder.settings, holder.engine = settings, engine
    return ReloadOutcome(
        True,
        source,
        len(engine.papers),
        previous,
        time.perf_counter() - started,
        problems=len(getattr(report, "problems", []) or []),
        notes=restart_notes(settings),
        forced=forced,
    )

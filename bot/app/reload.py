"""Live corpus reload: build the new engine aside, validate it, then swap it in one assignment.

Why this shape: loading a corpus takes seconds to minutes, and the bot must keep answering
meanwhile. The new `SearchEngine` is built in a worker thread (`bot.app.workers.off_loop`) from
freshly re-read settings; the old engine keeps serving every command until the new one is
complete and valid. The swap is `holder.engine = new`, a single attribute store on the event
loop, so a command sees either the old engine or the new one, never a mix. Commands read
`bot.engine` at call time, so nothing else needs telling (the daily pools included).

A broken new corpus is rejected with its reasons and the old engine stays. Besides what makes
startup fail (`ConfigError`, `CorpusError`: a file missing, nothing usable), a reload also
refuses damage the loader reports by kind (`LoadProblem.damage`: a malformed line, a JSON
array cut short) and a corpus that lost more than `[corpus] reload_max_loss` of the papers
served: a file cut at a third, or garbled, must not be swapped in as if it were an edit.
`force` (`/admin reload force:True`, or `[corpus] reload_force` for SIGHUP) accepts it anyway.
Records that are valid JSON but not usable papers are accepted and counted, as at startup.

A SIGHUP that arrives during a reload is not lost: one more reload runs after the current one
(any number of signals meanwhile coalesce into that one), and the log says so.

Used by `/admin reload` (bot/cogs/admin.py), SIGHUP (bot/runner.py) and the console.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from bot.app.workers import off_loop
from bot.config import ConfigError, Settings, load_settings
from bot.papers.corpus import FILE_LEVEL, CorpusError, LoadReport
from bot.search.index.workers import WorkersStopped

if TYPE_CHECKING:
    from bot.search.engine import SearchEngine

log = logging.getLogger(__name__)

MAX_REASONS = 5


class ReloadRejected(Exception):
    """The new corpus or settings cannot be served; `reasons` say why (shown to the owner)."""

    def __init__(self, reasons: Sequence[str]) -> None:
        self.reasons = list(reasons) or ["unknown reason"]
        super().__init__("; ".join(self.reasons))


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


def fresh_settings(current: Settings, corpus_files: Sequence[Path] | None = None) -> Settings:
    """`current` with its [corpus] and [search] re-read from the file it came from.

    Secrets and the other sections stay as they are (they need a restart: the token, the
    database, the shard count). Settings built in code (`source` None) have no file to re-read:
    then only the corpus files are read again. `corpus_files` (the CLI's --corpus) wins.
    """
    settings = current
    if current.source is not None:
        reread = load_settings(current.source, env={}, dotenv=False)
        settings = replace(current, corpus=reread.corpus, search=reread.search)
    if corpus_files:
        settings = settings.with_corpus(list(corpus_files))
    return settings


def restart_notes(current: Settings) -> tuple[str, ...]:
    """Sections of the settings file that changed but only apply after a restart."""
    if current.source is None:
        return ()
    try:
        reread = load_settings(current.source, env={}, dotenv=False)
    except ConfigError:
        return ()
    changed = [
        name
        for name in ("discord", "storage", "daily")
        if getattr(reread, name) != getattr(current, name)
    ]
    if not changed:
        return ()
    return (f"Changed settings in [{'], ['.join(changed)}] apply after a restart.",)


def objections(report: LoadReport | None, papers: int, previous: int, max_loss: float) -> list[str]:
    """Why a new corpus should not replace the one served: damaged files, lost papers."""
    reasons: list[str] = []
    if not papers:
        reasons.append("the new corpus has no papers")
    damage = [p for p in (report.problems if report else []) if p.damage]
    damage.sort(key=lambda p: p.kind not in FILE_LEVEL)  # a cut file first, then its lines
    if damage:
        files = len({p.path for p in damage})
        reasons.append(f"{len(damage):,} malformed or cut line(s) in {files} file(s)")
        reasons += [str(p) for p in damage[: MAX_REASONS - 2]]
    if previous and papers < previous * (1.0 - max_loss):
        lost = 1.0 - papers / previous
        reasons.insert(
            0,
            f"the new corpus has {papers:,} papers, {lost:.0%} fewer than the {previous:,} "
            f"served (more than the {max_loss:.0%} allowed by [corpus] reload_max_loss)",
        )
    return reasons


def added_ids(old: SearchEngine | None, new: SearchEngine) -> tuple[str, ...]:
    """Ids of `new` that `old` did not serve (all of them when there was no old engine)."""
    before = set(old.ids) if old is not None else set()
    return tuple(pid for pid in new.ids if pid not in before)


def build(
    current: Settings,
    corpus_files: Sequence[Path] | None = None,
    load: Callable[[Settings], SearchEngine] | None = None,
    *,
    previous: int = 0,
    force: bool | None = None,
) -> tuple[Settings, SearchEngine, tuple[str, ...]]:
    """Re-read settings, load and validate the corpus: (settings, engine, what force let
    through) or ReloadRejected. `force` None means the `[corpus] reload_force` setting.

    Blocking (file reads, index build): run it in a thread. Never touches the serving engine.
    """
    if load is None:
        from bot.search.engine import SearchEngine

        load = SearchEngine.load
    try:
        settings = fresh_settings(current, corpus_files)
    except ConfigError as exc:
        raise ReloadRejected([f"settings: {exc}"]) from exc
    try:
        engine = load(settings)
    except (CorpusError, ConfigError) as exc:
        raise ReloadRejected([str(exc)]) from exc
    except (OSError, ValueError) as exc:
        raise ReloadRejected([f"could not load the corpus: {exc}"]) from exc
    report = engine.load_report
    reasons = objections(report, len(engine.papers), previous, settings.corpus.reload_max_loss)
    if not reasons:
        return settings, engine, ()
    if not len(engine.papers):
        raise ReloadRejected(reasons)
    if force is None:
        force = settings.corpus.reload_force
    if not force:
        hint = "to accept it anyway: /admin reload force:True (or [corpus] reload_force for SIGHUP)"
        raise ReloadRejected([*reasons[: MAX_REASONS - 1], hint])
    log.warning("reload forced despite: %s", "; ".join(reasons))
    return settings, engine, tuple(reasons[:MAX_REASONS])


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
        self._tasks: set[asyncio.Task[ReloadOutcome]] = set()
        self.on_swap: list[Callable[[ReloadOutcome], None]] = []

    @property
    def running(self) -> bool:
        return self._running is not None

    async def reload(self, source: str, *, force: bool | None = None) -> ReloadOutcome:
        """Build the new engine in a thread; swap on success. Never raises for a bad corpus.

        A reload asked for while one runs is refused here (the owner gets an answer at once);
        `request` (signals) queues it instead.
        """
        try:
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
        if self._running is not None:
            return ReloadOutcome.kept(
                source,
                previous,
                0.0,
                (f"a reload ({self._running}) is already running; try again when it has finished",),
            )
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
            self.reload(source, force=force), name=f"corpus-reload-{source}"
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

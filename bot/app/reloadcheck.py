"""A reload's new engine, built aside and checked before it may replace the one served.

Why apart from bot/app/reload.py: this is the blocking part (settings re-read, corpus loaded,
index built) that runs in a worker thread, and the judgement on what it built; the reloader
there only schedules it and swaps. A broken new corpus is rejected with its reasons. Besides
what makes startup fail (`ConfigError`, `CorpusError`: a file missing, nothing usable), a
reload also refuses damage the loader reports by kind (`LoadProblem.damage`: a malformed line,
a JSON array cut short) and a corpus that lost more than `[corpus] reload_max_loss` of the
papers served: a file cut at a third, or garbled, must not be swapped in as if it were an
edit. `force` accepts it anyway. Records that are valid JSON but not usable papers are
accepted and counted, as at startup.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from bot.config import ConfigError, Settings, load_settings
from bot.papers.corpus import FILE_LEVEL, CorpusError, LoadReport

if TYPE_CHECKING:
    from bot.search.engine import SearchEngine

log = logging.getLogger(__name__)

MAX_REASONS = 5


class ReloadRejected(Exception):
    """The new corpus or settings cannot be served; `reasons` say why (shown to the owner)."""

    def __init__(self, reasons: Sequence[str]) -> None:
        self.reasons = list(reasons) or ["unknown reason"]
        super().__init__("; ".join(self.reasons))


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

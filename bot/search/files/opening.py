"""`SearchEngine.load`: the saved index and paper store when their key still matches the
configured corpus, else the corpus read, indexed and saved.

The key covers the corpus files' bytes, the loader version, the analyzer and the BM25
parameters, so a changed input never reuses a stale index. A reused index and store are
checked by size here, the store's id files by digest and a sample of its records too
(`PaperStore.check`: no first answer comes from a store that fails them), and every file by
digest right after start-up (`bot.search.files.integrity`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.config import Settings
from bot.papers import versions
from bot.papers.corpus import LoadProblem, LoadReport, load_corpus
from bot.papers.files import atomic_file, build_lock, remove_stale
from bot.search.analysis.analyzer import Analyzer
from bot.search.files.integrity import IntegrityCheck
from bot.search.files.paperstore import PaperStore, StoreError, digests
from bot.search.files.storewriter import NotStorable, save_store, storable
from bot.search.index.postings import BM25Index, BM25Params, IndexCacheError, saved_digests
from bot.search.index.streamed import build_saved
from bot.search.parts import doc_text

if TYPE_CHECKING:
    from bot.search.engine import SearchEngine

log = logging.getLogger(__name__)

LOADER_VERSION = "4"  # 2: problems as structured records; 3: absurd records cut; 4: keywords


def corpus_digest(files: Sequence[Path], exclude_status: Sequence[str]) -> str:
    digest = hashlib.sha256(f"loader{LOADER_VERSION}|{sorted(exclude_status)}".encode())
    for path in files:
        digest.update(str(path.name).encode() + b"\0")
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()


def corpus_stamp(files: Sequence[Path], exclude_status: Sequence[str]) -> list[Any]:
    """What identifies the corpus files without reading them: path, size, mtime (ns), inode."""
    stamp: list[Any] = [LOADER_VERSION, sorted(exclude_status)]
    for path in files:
        st = Path(path).stat()
        stamp.append([str(Path(path).resolve()), st.st_size, st.st_mtime_ns, st.st_ino])
    return stamp


def known_digest(index_dir: Path, stamp: list[Any]) -> str | None:
    """The corpus digest a saved index recorded for files with exactly this `stamp`.

    Why: hashing the corpus at every start cost seconds at a million papers (~1.4 GB of JSON
    Lines). Like make and git, unchanged size, mtime and inode are taken to mean unchanged
    content; any change to them hashes the files again, and the digest keys the index.
    """
    for meta_path in sorted(index_dir.glob("*/meta.json")):
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(meta, dict) and meta.get("corpus_stamp") == stamp:
            digest = meta.get("corpus")
            if isinstance(digest, str):
                return digest
    return None


def remember_stamp(folder: Path, stamp: list[Any]) -> None:
    """Record `stamp` in a reused index's meta.json, so the next start skips the hash."""
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        with atomic_file(folder / "meta.json") as handle:
            handle.write(json.dumps(dict(meta, corpus_stamp=stamp), indent=1))
    except (OSError, ValueError) as exc:
        log.debug("could not record the corpus stamp in %s: %s", folder, exc)


def load_engine(cls: type[SearchEngine], settings: Settings) -> SearchEngine:
    """`SearchEngine.load` (see there)."""
    started = time.perf_counter()
    files = list(settings.corpus.files)
    analyzer = Analyzer()
    if not all(Path(f).is_file() for f in files):
        # A missing file is fatal there (CorpusError), before any index is keyed or saved.
        load_corpus(files, exclude_status=settings.corpus.exclude_status)
    s = settings.search
    params = BM25Params(s.k1, s.b, s.epsilon, s.idf)
    stamp = corpus_stamp(files, settings.corpus.exclude_status)
    digest = known_digest(settings.corpus.index_dir, stamp)
    expect = {
        "corpus": digest or corpus_digest(files, settings.corpus.exclude_status),
        "analyzer": analyzer.signature,
        "versions": versions.RULES_VERSION,  # merging rules: a change rebuilds
        "title_weight": s.title_weight,
        "params": params.saved(),
    }
    key = hashlib.sha256(repr(sorted(expect.items())).encode()).hexdigest()[:16]
    folder = settings.corpus.index_dir / key
    remove_stale(settings.corpus.index_dir)
    keyed = Keyed(folder, expect, stamp, digest, params)
    with ExitStack() as held:
        saved = Saved.open(folder, expect, quiet=True)
        if saved.index is None or saved.store is None:
            # To be built, here or by whoever holds the lock now: look again once it is ours.
            held.enter_context(build_lock(folder.parent))
            saved = Saved.open(folder, expect, quiet=False)
        return _serve(cls, settings, analyzer, keyed, saved, started)


@dataclass(frozen=True)
class Keyed:
    """Where the configured corpus's index lives and what its meta must say."""

    folder: Path
    expect: dict[str, Any]
    stamp: list[Any]
    digest: str | None  # the corpus digest a saved meta knew for these files' stamp
    params: BM25Params


@dataclass
class Saved:
    """The saved index and store of a folder, each None when absent, stale or damaged."""

    index: BM25Index | None = None
    store: PaperStore | None = None
    problems: list[LoadProblem] = field(default_factory=list)

    @classmethod
    def open(cls, folder: Path, expect: dict[str, Any], *, quiet: bool) -> Saved:
        """Why `quiet`: a first look that fails is looked at again under the build lock
        (another process may have built the folder meanwhile); only that one is reported."""
        saved = cls()
        say = log.debug if quiet else log.warning
        if not folder.exists():
            return saved
        try:
            # Memory-mapped: postings pages are read (and count as resident) when touched.
            saved.index = BM25Index.load(folder, expect, mmap=True)
            saved.store = PaperStore(folder / "papers", expect)
            if saved.index.n_docs != len(saved.store):
                raise StoreError(
                    f"{folder}: index holds {saved.index.n_docs} documents, "
                    f"the paper store {len(saved.store)}"
                )
            saved.store.check()
            saved.problems = _saved_problems(folder, saved.store.meta)
        except IndexCacheError as exc:
            say("rebuilding the index: %s", exc)
            saved.index = None
        except StoreError as exc:
            say("re-reading the corpus: %s", exc)
            saved.store = None
        return saved


def _serve(
    cls: type[SearchEngine],
    settings: Settings,
    analyzer: Analyzer,
    keyed: Keyed,
    saved: Saved,
    started: float,
) -> SearchEngine:
    """The engine over `saved`, building and saving (streamed when it can) what is missing."""
    files = list(settings.corpus.files)
    s = settings.search
    folder, expect, stamp, digest, params = (
        keyed.folder,
        keyed.expect,
        keyed.stamp,
        keyed.digest,
        keyed.params,
    )
    index, store, saved_problems = saved.index, saved.store, saved.problems
    report: LoadReport | None = None
    streamed = False
    if index is None and store is None:
        built = _build_streamed(settings, analyzer, params, folder, expect, stamp)
        if built is not None:
            # Opened as a reused one is: memory-mapped, nothing parsed.
            index = BM25Index.load(folder, expect, mmap=True)
            store = PaperStore(folder / "papers", expect)
            built.papers = store
            report, streamed = built, True
    if report is None and store is not None:  # a saved store: its papers are not parsed
        report = LoadReport(
            papers=store,
            files=[Path(f) for f in files],
            skipped=store.meta.get("skipped", 0),
            problems=saved_problems,
        )
        for problem in report.problems:
            log.warning("%s", problem)
    elif report is None:  # neither streamed nor a saved store: the corpus read into memory
        report = load_corpus(files, exclude_status=settings.corpus.exclude_status)
        if index is not None and index.n_docs != len(report.papers):
            log.warning(
                "rebuilding the index: %s holds %d documents, corpus has %d",
                folder,
                index.n_docs,
                len(report.papers),
            )
            index = None
    assert report is not None
    engine = cls(
        store if store is not None else report.papers,
        analyzer=analyzer,
        settings=s,
        index=index,
    )
    if index is None:
        try:
            engine.index.save(folder, dict(expect, corpus_stamp=stamp))
        except OSError as exc:
            log.warning("could not save the index to %s: %s", folder, exc)
    if store is None and folder.exists() and storable(report.papers):
        try:
            save_store(
                folder / "papers",
                report.papers,
                dict(
                    expect,
                    skipped=report.skipped,
                    problems=[p.to_json() for p in report.problems[:1000]],
                ),
            )
        except OSError as exc:
            log.warning("could not save the paper store to %s: %s", folder, exc)
    log.info(
        "search engine ready: %d papers, %d terms, %.2fs (%s index)",
        len(engine.papers),
        len(engine.index.vocab),
        time.perf_counter() - started,
        "saved" if index is not None and not streamed else "new",
    )
    engine.load_report = report
    engine.rebuild_with = settings
    if streamed:  # files written just now: their stamp is saved, nothing to verify
        return engine
    if index is not None and digest is None:
        remember_stamp(folder, stamp)
    checks = [(folder, saved_digests(folder))] if index is not None else []
    if store is not None:
        checks.append((store.folder, digests(store.meta)))
    if checks:
        engine.integrity = IntegrityCheck(
            checks, lambda problem: engine._rebuild(settings, problem)
        ).start()
    return engine


def _build_streamed(
    settings: Settings,
    analyzer: Analyzer,
    params: BM25Params,
    folder: Path,
    expect: dict[str, Any],
    stamp: list[Any],
) -> LoadReport | None:
    """The index and store built from text into `folder` without holding the corpus
    (`bot.search.index.streamed`); None when they cannot be written there (the caller then reads
    the corpus into memory and serves from it, as it always could)."""
    weight = settings.search.title_weight
    try:
        return build_saved(
            list(settings.corpus.files),
            settings.corpus.exclude_status,
            lambda paper: doc_text(paper, weight),
            analyzer,
            params,
            folder,
            dict(expect, corpus_stamp=stamp),
            expect,
        )
    except (OSError, NotStorable) as exc:
        log.warning("building the index in memory instead of streaming it: %s", exc)
        return None


def _saved_problems(folder: Path, meta: dict[str, Any]) -> list[LoadProblem]:
    """The load problems saved with a store. They are a function of the files' content, which
    the store's key covers, so they are reported again on every start, exactly as first found;
    a missing file is never among them (it stops the load before anything is saved)."""
    try:
        return [LoadProblem.from_json(p) for p in meta.get("problems", [])]
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(f"{folder}: unreadable load problems ({exc})") from exc

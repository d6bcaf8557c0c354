"""Fetching across machines: one process fetches a source per refresh, every process gets it.

Where one bot runs as several processes that share a PostgreSQL and nothing else (no disk),
each process keeps its own corpus files. For each source and refresh slot (the scheduled
time), the processes elect one fetcher (`bot.sources.election`, a lease row); the others wait
for it and then pull. The fetcher renews its lease while it fetches, then publishes the
records the fetch changed in its `--out` file to `source_papers`, in the transaction that
marks the slot done. Every process pulls the records after the last sequence number it
applied (kept beside its corpus file, `<out>.shared.json`) into its own `--out` file, by id,
written atomically, and the caller reloads the index as for any corpus change.

A killed fetcher's lease runs out and a waiting process takes the source over (it fetches
from the start: the resume file was on the dead machine's disk). A fetcher that cannot renew
(the database went away) stops fetching once its lease has run out, so two never fetch at once,
and retries. A process that was down pulls everything it missed at start (`catch_up`). A
database outage is a warning and a retry with backoff, never a traceback.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from secrets import token_hex
from typing import Any, Generic, TypeVar

from bot.config import FetchJob, SourcesSettings
from bot.papers.files import atomic_file, file_lock
from bot.sources.election import Done, Election, Fenced, Held, Lease
from bot.sources.store import CorpusFile
from bot.storage.outages import database_unreachable
from bot.storage.schema import StorageError
from bot.storage.store import Storage
from bot.timing import backoff

log = logging.getLogger(__name__)
T = TypeVar("T")
PULL_PAGE = 1000  # records read per query when pulling
POLL_MAX = 1.0  # seconds between a waiting process's looks at the lease, at most
APPLY_BATCH = 20_000  # records pulled into the corpus file per write of it
OUTAGE_BASE, OUTAGE_MAX = 0.5, 30.0  # seconds between retries while the database is away


def outage(exc: BaseException) -> bool:
    """A database that cannot be reached, or busy past the storage's timeout: wait it out."""
    return isinstance(exc, StorageError) or database_unreachable(exc)


def one_line(exc: BaseException) -> str:
    """The error's first line (a driver's message goes on over several)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def holder_name() -> str:
    """This process among the fleet: host, pid and a random tag (a restarted pid is new)."""
    return f"{socket.gethostname()}:{os.getpid()}:{token_hex(3)}"


@dataclass(frozen=True, slots=True)
class Pulled:
    """What a pull wrote into a local corpus file."""

    added: tuple[str, ...] = ()
    updated: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated)

    def __add__(self, other: Pulled) -> Pulled:
        return Pulled(self.added + other.added, self.updated + other.updated)


@dataclass(frozen=True, slots=True)
class Shared(Generic[T]):
    """One source's part in a refresh: `result` of the fetch when this process fetched it
    (None when another did, or none could), and what was pulled from the others."""

    result: T | None
    pulled: Pulled
    text: str  # what happened, for /admin status and the log
    ok: bool = True


class Applied:
    """The last sequence number of a source applied to a local corpus file, kept beside it
    (`<out>.shared.json`): local, because it says what that file holds."""

    @staticmethod
    def path_for(out: Path) -> Path:
        return out.with_name(out.name + ".shared.json")

    @classmethod
    def load(cls, out: Path) -> int:
        try:
            seq = json.loads(cls.path_for(out).read_text(encoding="utf-8")).get("seq")
        except (OSError, ValueError, AttributeError):
            return 0
        return seq if isinstance(seq, int) and seq >= 0 else 0

    @classmethod
    def save(cls, out: Path, seq: int) -> None:
        with atomic_file(cls.path_for(out)) as handle:
            json.dump({"seq": seq}, handle)


def digest(record: dict[str, Any]) -> str:
    return hashlib.blake2b(json.dumps(record, sort_keys=True).encode(), digest_size=8).hexdigest()


def snapshot(out: Path) -> dict[str, str]:
    """Each record of a corpus file as a digest, by id: what a fetch changed is the diff."""
    if not out.is_file():
        return {}
    return {pid: digest(r) for pid, r in CorpusFile(out).records.items()}


class Baseline:
    """The file as the fleet knows it, taken before a fetch and kept (`<out>.shared.base.json`)
    until that fetch is published: a fetch stopped before publishing (lease lost, database
    away, process killed) leaves pages in the file that only this disk has, and the next fetch
    here publishes them too instead of finding them unchanged."""

    @staticmethod
    def path_for(out: Path) -> Path:
        return out.with_name(out.name + ".shared.base.json")

    @classmethod
    def take(cls, out: Path) -> dict[str, str]:
        """The kept baseline of an unpublished fetch, else the file now (then kept)."""
        try:
            kept = json.loads(cls.path_for(out).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            kept = None
        if isinstance(kept, dict):
            return kept
        now = snapshot(out)
        with atomic_file(cls.path_for(out)) as handle:
            json.dump(now, handle)
        return now

    @classmethod
    def drop(cls, out: Path) -> None:
        cls.path_for(out).unlink(missing_ok=True)


def changed_records(before: dict[str, str], out: Path) -> list[dict[str, Any]]:
    """The records of `out` that are new or differ from `before`, in file order."""
    after = CorpusFile(out).records if out.is_file() else {}
    return [r for pid, r in after.items() if before.get(pid) != digest(r)]


def apply(out: Path, records: Iterable[dict[str, Any]]) -> Pulled:
    """Put `records` into the corpus file `out` by id (replacing a record of the same id,
    else appending), under the file's lock, written atomically when anything changed."""
    added: list[str] = []
    updated = 0
    with file_lock(out):
        store = CorpusFile(out)
        for record in records:
            old = store.records.get(record["id"])
            if old == record:
                continue
            store.records[record["id"]] = record
            if old is None:
                added.append(record["id"])
            else:
                updated += 1
        if added or updated or not out.is_file():
            store.save()
    return Pulled(tuple(added), updated)


class SharedSources:
    """The fleet side of a refresh, over the shared `storage` (PostgreSQL)."""

    def __init__(
        self,
        storage: Storage,
        settings: SourcesSettings,
        *,
        holder: str | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.lease_seconds = settings.lease_seconds
        # How often a waiting process looks again: a done slot is noticed within a second
        # (a look is a primary-key read or two), however long the lease.
        self.poll_seconds = min(settings.lease_seconds / 4, POLL_MAX)
        self.give_up_seconds = settings.max_fetch_seconds + 2 * settings.lease_seconds
        self.election = Election(storage, holder or holder_name(), settings.lease_seconds)
        self.sleep, self.monotonic = sleep, monotonic

    @property
    def holder(self) -> str:
        return self.election.holder

    async def pull(self, job: FetchJob) -> Pulled:
        """Every record of `job`'s source published after what `job.out` holds, applied."""
        source, out = job.label, job.out
        applied = await asyncio.to_thread(Applied.load, out)
        if applied > await self.election.last_seq(source):
            applied = 0  # another database than the one this file followed: read it all
        total, more = Pulled(), True
        while more:
            # Read in pages, write the file once per APPLY_BATCH records: a rewrite per page
            # would make pulling a large source quadratic in its size.
            records: list[dict[str, Any]] = []
            while len(records) < APPLY_BATCH:
                page = await self.election.published(source, applied, PULL_PAGE)
                records.extend(p.record for p in page)
                if page:
                    applied = page[-1].seq
                if len(page) < PULL_PAGE:
                    more = False
                    break
            if records:
                total += await asyncio.to_thread(apply, out, records)
                await asyncio.to_thread(Applied.save, out, applied)
        if total.changed:
            log.info(
                "%s: pulled %d new, %d updated paper(s) fetched by another process",
                source,
                len(total.added),
                total.updated,
            )
        return total

    async def catch_up(self, jobs: Iterable[FetchJob]) -> bool:
        """At start: pull what every source published while this process was down. True when
        a corpus file changed. Never raises: a database away is a warning (the next refresh
        pulls again)."""
        changed = False
        for job in jobs:
            try:
                changed = (await self.pull(job)).changed or changed
            except Exception as exc:
                if not outage(exc):
                    raise
                log.warning(
                    "catching up on %s: the database cannot be reached (%s)",
                    job.label,
                    one_line(exc),
                )
        return changed

    async def fetch(
        self,
        job: FetchJob,
        slot: str,
        fetch: Callable[[], Awaitable[T]],
        waiting: Callable[[str | None], None] = lambda holder: None,
    ) -> Shared[T]:
        """`job`'s part in the refresh `slot`: fetch it (`fetch`) if elected, else wait for the
        process that is and pull. A database outage is retried, with backoff, until the bound
        (`[sources] max_fetch_seconds` and two leases), then reported as a failure.
        `waiting` hears the holder waited for, and None once this process stops waiting."""
        ends = self.monotonic() + self.give_up_seconds
        pulled, outages, told = Pulled(), 0, None
        while True:
            try:
                pulled += await self.pull(job)
                claim = await self.election.claim(job.label, slot)
                waiting(claim.holder if isinstance(claim, Held) else None)
                if isinstance(claim, Done):
                    pulled += await self.pull(job)
                    return Shared(None, pulled, f"{job.label}: fetched by another process")
                if isinstance(claim, Lease):
                    return await self._fetch_held(job, claim, fetch, pulled)
                if claim.holder != told:  # once per holder, not once per look
                    log.info("%s: fetched by %s; waiting for it", job.label, claim.holder)
                    told = claim.holder
                outages = 0
                wait = self.poll_seconds
            except Fenced as exc:
                log.warning("%s", exc)
                wait = self.poll_seconds
            except Exception as exc:
                if not outage(exc):
                    raise
                outages += 1
                wait = backoff(outages, OUTAGE_BASE, OUTAGE_MAX)
                log.warning(
                    "%s: the database cannot be reached (%s); trying again in %.1f s",
                    job.label,
                    one_line(exc),
                    wait,
                )
            if self.monotonic() + wait > ends:
                why = f"{job.label}: gave up waiting for the shared database or its fetcher"
                log.warning("%s", why)
                return Shared(None, pulled, why, ok=False)
            await self.sleep(wait)

    async def _fetch_held(
        self, job: FetchJob, lease: Lease, fetch: Callable[[], Awaitable[T]], pulled: Pulled
    ) -> Shared[T]:
        """Fetch under `lease`, renewing it; then publish what changed, or raise Fenced."""
        pulled += await self.pull(job)  # what was published between the pull and the claim
        before = await asyncio.to_thread(Baseline.take, job.out)
        log.info("%s: this process fetches it for %s", job.label, lease.slot)
        work = asyncio.ensure_future(fetch())
        keeper = asyncio.ensure_future(self._keep(lease))
        try:
            await asyncio.wait({work, keeper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            keeper.cancel()
            if not work.done():
                work.cancel()
            await asyncio.gather(work, keeper, return_exceptions=True)
        if not keeper.cancelled() and (bug := keeper.exception()) is not None:
            raise bug  # renewing failed otherwise than by an outage
        if work.cancelled():
            raise Fenced(f"{job.label}: the lease ran out during the fetch; stopped")
        result = work.result()
        records = await asyncio.to_thread(changed_records, before, job.out)
        last = await self._publish(lease, records)
        # Everything before ours was applied here already: it was pulled under the lease.
        await asyncio.to_thread(Applied.save, job.out, last)
        await asyncio.to_thread(Baseline.drop, job.out)
        log.info("%s: published %d record(s) up to sequence %d", job.label, len(records), last)
        return Shared(result, pulled, f"{job.label}: fetched here")

    async def _publish(self, lease: Lease, records: list[dict[str, Any]]) -> int:
        """`Election.publish`, retried while the database is away and the lease could still
        be ours; past that, Fenced (the slot is fetched again, by whoever claims it)."""
        ends = self.monotonic() + self.lease_seconds
        outages = 0
        while True:
            try:
                return await self.election.publish(lease, records)
            except Exception as exc:
                if not outage(exc):
                    raise
                outages += 1
                wait = backoff(outages, OUTAGE_BASE, OUTAGE_MAX)
                if self.monotonic() + wait > ends:
                    why = f"{lease.source}: could not publish before the lease ran out"
                    raise Fenced(why) from exc
                log.warning(
                    "%s: cannot publish yet (%s); trying again", lease.source, one_line(exc)
                )
                await self.sleep(wait)

    async def _keep(self, lease: Lease) -> None:
        """Renew `lease` every quarter of its length; return (ending the fetch) once it is
        lost, or once it has run out without a renewal (the database was away)."""
        confirmed = self.monotonic() + self.lease_seconds
        while True:
            await self.sleep(self.lease_seconds / 4)
            try:
                if not await self.election.renew(lease):
                    log.warning("%s: lease taken over; stopping the fetch", lease.source)
                    return
                confirmed = self.monotonic() + self.lease_seconds
            except Exception as exc:
                if not outage(exc):
                    raise
                log.warning("%s: cannot renew the fetch lease (%s)", lease.source, one_line(exc))
                if self.monotonic() >= confirmed:
                    log.warning("%s: lease ran out unrenewed; stopping the fetch", lease.source)
                    return


def shared_sources(storage: Storage | None, settings: SourcesSettings) -> SharedSources | None:
    """The fleet side for a bot on PostgreSQL; None on SQLite (one machine: as before)."""
    if storage is None or storage.dialect != "postgresql" or not settings.fetch:
        return None
    return SharedSources(storage, settings)

"""Which follows hear about which new papers, and getting each notice to them exactly once,
discord-free (the console prints the same notices).

`plan` is the rule for who is told:

1. record the corpus now served; the ids never served before are the new papers (nothing on
   the very first run, so installing the bot notifies nobody);
2. for each active follow, the new papers matching its query (search syntax, corpus order);
3. claim them for the follow's target (`dm:user` or `ch:channel`), skipping any that target
   already got, and queue one notice per follow and refresh: never the same paper twice to a
   follower.

`deliver` gets the queued notices out as the daily post does (`bot.daily.delivery`): claim
(a conditional, durable write with a lease), send, confirm. A transient failure (a 503, a
timeout) puts the notice back with a backoff (`bot.timing.backoff`), to be retried by the next
round (the retry loop, a reload, a refresh, a restart) and counted in `/follow list` meanwhile.
A send whose confirmation never came (the process died) is looked for at its destination before
it is sent again. A destination refusing for good stops the follow.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from bot.follows.feeds import Feeds, FeedSettings, next_delivery
from bot.follows.outbox import NoticeRecord
from bot.follows.store import FOR_YOU, Follow, Follows
from bot.foryou import Ratings, Signals, positions_of, query_strength, recommend, signals_of
from bot.library import Library, find
from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from bot.search.results import SearchError
from bot.storage.store import Storage
from bot.timing import backoff

log = logging.getLogger(__name__)

RETRY_BASE = 60.0  # seconds before the first retry of a failed notice; doubling from there
RETRY_MAX = 3600.0  # at most an hour between retries of one notice
LEASE = timedelta(minutes=5)  # a claim holds this long: longer than one send can take
CLOCK_SKEW = timedelta(minutes=10)  # look for an earlier attempt's message from this before it
NO_SIGNALS = Signals((), ())


@dataclass(frozen=True, slots=True)
class Notice:
    """A notice ready to send: its follow, its stored record, the first `page` papers and the
    batch's size (a batch can hold thousands of papers: only one page is read)."""

    follow: Follow
    record: NoticeRecord
    papers: list[Paper]
    total: int
    per_page: int = 10  # the feed's cap: papers in the message, the rest behind ▶

    @property
    def batch(self) -> str:
        return self.record.batch_id

    @property
    def marker(self) -> str:
        return notice_marker(self.record.batch_id)


def notice_marker(batch: str) -> str:
    """Findable in a sent notice (its footer), to recognise it after a crash."""
    return f"ref {batch}"


class SendFailed(Exception):
    """Worth retrying later (429, 5xx, a timeout, the network); `error` is shown to members."""

    def __init__(self, error: str, retry_after: float | None = None) -> None:
        super().__init__(error)
        self.error = error
        self.retry_after = retry_after


class FollowStopped(Exception):
    """The destination refuses for good (closed DMs, a lost channel): the follow stops."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Sender(Protocol):
    """What the Discord side (and the console) implements."""

    async def send(self, notice: Notice) -> int:
        """Send the notice; its message id. Raises SendFailed or FollowStopped."""
        ...

    async def find_sent(self, notice: Notice, since: datetime | None) -> int | None:
        """The id of a message already carrying `notice.marker` at its destination, if any."""
        ...


@dataclass(frozen=True, slots=True)
class Round:
    """What one delivery round did, and when the next notice is due (None: none waits)."""

    sent: int
    retrying: int
    next_at: datetime | None


def matching_new(engine: SearchEngine, query: str, new: set[str]) -> list[str]:
    """Ids among `new` that `query` matches (CPU: run in a thread for many follows)."""
    try:
        return [pid for pid in engine.matching_ids(query) if pid in new]
    except SearchError:  # a query the current corpus cannot run (e.g. its venue is gone)
        return []


def feed_papers(
    engine: SearchEngine, follow: Follow, feed: FeedSettings, new: set[str], signals: Signals
) -> list[str]:
    """What one feed would send of the `new` papers, best first: the follow's matches (its
    query with the feed's negative terms), or for the For you feed the member's ranking;
    those under the feed's minimum score left out. CPU: run in a thread."""
    if follow.query == FOR_YOU:
        if not signals.enough:
            return []
        ranked, _profile = recommend(engine, signals, positions_of(engine, sorted(new)))
        found = [(pid, strength) for pid, strength in ranked if not _excluded(engine, pid, feed)]
    else:
        query = follow.query + "".join(f" -{word}" for word in feed.excluded)
        matched = matching_new(engine, query, new)
        if not matched:
            return []
        positions = positions_of(engine, matched)
        try:
            strengths = query_strength(engine, follow.query, positions)
        except SearchError:
            return []
        ids = engine.ids
        found = sorted(
            ((ids[int(p)], float(v)) for p, v in zip(positions, strengths, strict=True)),
            key=lambda item: -item[1],  # stable: equal strengths keep corpus order
        )
    return [pid for pid, strength in found if strength >= feed.min_score]


def _excluded(engine: SearchEngine, paper_id: str, feed: FeedSettings) -> bool:
    if not feed.excluded:
        return False
    paper = engine.paper(paper_id)
    words = set(engine.analyzer(f"{paper.title} {paper.abstract}"))
    return any(set(engine.analyzer(word)) & words for word in feed.excluded)


async def plan(storage: Storage, engine: SearchEngine, now: datetime) -> int:
    """Queue a notice for every follow matching papers new to the corpus; how many. Each is
    shaped by its feed's settings (`bot.follows.feeds`): its order, minimum score, negative
    terms, and when it goes out."""
    follows = Follows(storage)
    merged: dict[str, tuple[str, ...]] = {}

    def served() -> Iterator[str]:
        for paper in engine.papers:
            yield paper.id
            if paper.aliases:  # versions merged into this paper (`bot.papers.versions`)
                merged[paper.id] = paper.aliases
                yield from paper.aliases

    fresh = set(await follows.record_corpus(served(), now))
    # A merged paper is new only when none of its ids was served before: a preprint's
    # accepted record arriving is not a new paper to tell its followers about again.
    new = {pid for pid in fresh if all(alias in fresh for alias in merged.get(pid, ()))}
    if not new:
        return 0
    feeds, ratings = Feeds(storage), Ratings(storage)
    library = Library(storage)
    queued = 0
    for follow in await follows.active():
        feed = await feeds.get(follow.follow_id, follow.user_id)
        signals = NO_SIGNALS
        if follow.query == FOR_YOU:
            signals = await signals_of(library, ratings, follow.user_id)
        matched = await asyncio.to_thread(feed_papers, engine, follow, feed, new, signals)
        when = next_delivery(feed, now)
        if matched and (await follows.claim(follow, matched, now, not_before=when))[1]:
            queued += 1
    log.info("%d new paper(s) in the corpus: %d follow notice(s)", len(new), queued)
    return queued


async def load(
    follows: Follows, engine: SearchEngine, follow: Follow, record: NoticeRecord, page: int
) -> Notice | None:
    """The notice of `record` with its first page of papers (None: none is in the corpus)."""
    ids = await follows.batch_page(record.batch_id, 0, page)
    papers = [p for p in (find(engine, pid) for pid in ids) if p is not None]
    return Notice(follow, record, papers, record.papers, page) if papers else None


async def deliver(
    storage: Storage,
    engine: SearchEngine,
    sender: Sender,
    *,
    now: Callable[[], datetime],
    owner: str,
    page: int,
    console: bool = False,
) -> Round:
    """Send every notice due now (new ones and retries), each claimed first and confirmed
    after; failures are recorded for the next round, never raised."""
    follows = Follows(storage)
    sent = retrying = 0
    for record in await follows.outbox.due(now(), console=console):
        outcome = await _one(follows, engine, sender, record, now, owner, page)
        sent += outcome == "sent"
        retrying += outcome == "retry"
    return Round(sent, retrying, await follows.outbox.next_due(console=console))


async def _one(
    follows: Follows,
    engine: SearchEngine,
    sender: Sender,
    record: NoticeRecord,
    now: Callable[[], datetime],
    owner: str,
    page: int,
) -> str:
    batch = record.batch_id
    follow = await follows.get(record.follow_id)
    if follow is None or not follow.active:
        await follows.outbox.mark_dropped(batch, "the follow was removed or stopped", now())
        return "dropped"
    at = now()
    claimed = await follows.outbox.mark_sending(
        batch, owner, at, at + LEASE, attempts=record.attempts
    )
    if claimed is None:
        return "claimed"  # another process is sending it
    feed = await Feeds(follows.storage).get(follow.follow_id, follow.user_id)
    notice = await load(follows, engine, follow, claimed, min(page, feed.cap))
    if notice is None:
        await follows.outbox.mark_dropped(batch, "its papers left the corpus", now())
        return "dropped"
    try:
        found = None
        if claimed.attempts > 1 and claimed.first_attempt_at is not None:
            # An earlier attempt may have reached Discord (a timeout, a crash): look first.
            found = await sender.find_sent(notice, claimed.first_attempt_at - CLOCK_SKEW)
        message_id = found if found is not None else await sender.send(notice)
    except SendFailed as exc:
        return await _retry(follows, claimed, exc.error, exc.retry_after, now())
    except FollowStopped as exc:
        await follows.disable(follow.follow_id, exc.reason)
        await follows.outbox.mark_dropped(batch, exc.reason, now())
        log.info("follow %s disabled: %s", follow.follow_id, exc.reason)
        return "stopped"
    except Exception as exc:  # a bug on our side (e.g. a body Discord rejects): retry, loudly
        log.exception("follow %s: unexpected error sending notice %s", follow.follow_id, batch)
        return await _retry(
            follows, claimed, f"unexpected error: {type(exc).__name__}", None, now()
        )
    # Said before it is recorded, as the daily post does: the logs account for every send.
    log.info("follow %s: notice %s sent (message %d)", follow.follow_id, batch, message_id)
    await follows.outbox.mark_sent(batch, message_id, now())
    return "sent"


async def _retry(
    follows: Follows, record: NoticeRecord, error: str, retry_after: float | None, at: datetime
) -> str:
    delay = backoff(max(1, record.attempts), RETRY_BASE, RETRY_MAX, retry_after)
    when = at + timedelta(seconds=delay)
    await follows.outbox.mark_retry(record.batch_id, error, when, at)
    log.warning(
        "follow %s: notice %s not sent (%s); retrying at %s",
        record.follow_id,
        record.batch_id,
        error,
        when.isoformat(),
    )
    return "retry"

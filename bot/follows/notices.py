"""Which follows hear about which new papers, discord-free (the console prints the same notices).

`plan` is the whole rule:

1. record the corpus now served; the ids never served before are the new papers (nothing on
   the very first run, so installing the bot notifies nobody);
2. for each active follow, the new papers matching its query (search syntax, corpus order);
3. claim them for the follow's target (`dm:user` or `ch:channel`), skipping any that target
   already got: one notice per follow and refresh, never the same paper twice to a follower.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime

from bot.follows.store import Follow, Follows
from bot.library import find
from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from bot.search.results import SearchError
from bot.storage.store import Storage

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Notice:
    follow: Follow
    batch: str
    papers: list[Paper]


def matching_new(engine: SearchEngine, query: str, new: set[str]) -> list[str]:
    """Ids among `new` that `query` matches (CPU: run in a thread for many follows)."""
    try:
        return [pid for pid in engine.matching_ids(query) if pid in new]
    except SearchError:  # a query the current corpus cannot run (e.g. its venue is gone)
        return []


async def plan(storage: Storage, engine: SearchEngine, now: datetime) -> list[Notice]:
    follows = Follows(storage)
    new_ids = await follows.record_corpus((p.id for p in engine.papers), now)
    if not new_ids:
        return []
    new = set(new_ids)
    notices = []
    for follow in await follows.active():
        matched = await asyncio.to_thread(matching_new, engine, follow.query, new)
        if not matched:
            continue
        batch, claimed = await follows.claim(follow, matched, now)
        papers = [p for p in (find(engine, pid) for pid in claimed) if p is not None]
        if papers:
            notices.append(Notice(follow, batch, papers))
    log.info("%d new paper(s) in the corpus: %d follow notice(s)", len(new_ids), len(notices))
    return notices

"""The daily `foryou` pool: new papers ranked for one server by the For you model.

A server's signals are the papers its members saved to a library *from this server* (the
library records the server a save came from). 👍 / 👎 are not used: a rating is stored per
member without the server it was given in (`bot.foryou.store`: "no other member and no server
can see their ratings"), so a server's pick is never shaped by, nor reveals, one member's
ratings. Saves are already the server's aggregate (`/top` counts them).

The model is `/foryou`'s, not a second one: `bot.foryou.recommend` builds the Rocchio profile
from the saved papers and ranks the new papers (`bot.foryou.new_positions`, the last
`WINDOW_DAYS` days) by it. With fewer than `MIN_SIGNALS` saved papers, or when every ranked
paper was posted here already, the picker falls back to the server's normal pool and
`/daily status` says which.

The console's "server" (`bot.daily.servers`) has one reader, whose saves carry no server: its
signals are that reader's library.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import datetime

import numpy as np

from bot.daily.records import ForYouState
from bot.daily.servers import CONSOLE_READER, is_console
from bot.foryou import MIN_SIGNALS, Signals, new_positions, recommend
from bot.library import Library
from bot.search import SearchEngine
from bot.storage.store import Storage

FORYOU = "foryou"
SIGNALS_READ = 200  # most-saved papers read per server: the model uses 200 at most anyway


async def server_saves(storage: Storage, guild_id: int) -> list[str]:
    """The distinct papers members saved from this server, most saved first (ties: id)."""
    library = Library(storage)
    if is_console(guild_id):
        return [s.paper_id for s in await library.all(CONSOLE_READER)][:SIGNALS_READ]
    return [entry.paper_id for entry in await library.top_saved(guild_id, None, SIGNALS_READ)]


async def picked_here(storage: Storage, guild_id: int) -> list[str]:
    """Every paper ever picked for the server, in any pass of its pool: never picked again by
    this pool (the normal pool reshuffles once all were shown; new papers keep this one fed)."""
    return await storage.column("SELECT paper_id FROM picks WHERE guild_id = ?", (guild_id,))


def current_id(engine: SearchEngine, paper_id: str) -> str | None:
    """The id the corpus knows this paper by now: a version merged into another paper after it
    was picked or saved (`Paper.aliases`) answers the merged paper's id; None once it left."""
    pos = engine.lookups.find_id(paper_id)
    return None if pos is None else engine.ids[pos]


def current_ids(engine: SearchEngine, paper_ids: Iterable[str]) -> set[str]:
    """`current_id` of each id, an id that left the corpus kept as it is: what "already
    drawn" compares with, so a paper picked under its preprint's id is not picked again
    under the merged paper's."""
    return {current_id(engine, pid) or pid for pid in paper_ids}


def rank_for_server(
    engine: SearchEngine,
    saved: Sequence[str],
    posted: Collection[str],
    allowed: Collection[str] | None,
    now: datetime,
) -> tuple[ForYouState, list[str]]:
    """The server's For you state and its ranked papers not posted yet, best first.

    `saved`: the server's saves (`server_saves`); `posted`: every paper already picked there
    (as `current_ids`); `allowed`: the topic's papers, or None for the whole corpus. CPU work
    (a profile and one scoring pass, as for `/foryou`): run it off the event loop.
    """
    liked = tuple(sorted({pid for p in saved if (pid := current_id(engine, p)) is not None}))
    signals = Signals(liked, ())
    if not signals.enough:
        return ForYouState(len(liked), MIN_SIGNALS, 0, 0, ()), []
    candidates = new_positions(engine, now)
    if allowed is not None:
        keep = set(allowed)
        candidates = np.array(
            [p for p in candidates.tolist() if engine.ids[p] in keep], dtype=np.int32
        )
    ranked, profile = recommend(engine, signals, candidates)
    fresh = [pid for pid, _strength in ranked if pid not in posted]
    state = ForYouState(
        len(liked), MIN_SIGNALS, len(ranked), len(fresh), tuple(profile.top_terms(5))
    )
    return state, fresh

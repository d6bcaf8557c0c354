"""Which process fetches a source: a lease row per source in the shared database.

Where one bot runs as several processes on several machines (shard ranges on one PostgreSQL),
each source is fetched by one process per refresh slot. The election is a row in
`source_leases`: the holder, when its lease ends, a fencing `generation` raised by every
claim, the slot it fetches, the last slot whose fetch ended (`done_slot`), and the last
sequence number of what was published (`last_seq`).

Why a lease row and not an advisory lock (docs/decisions.md): a session advisory lock lives on
one connection, and our calls borrow a pool connection per transaction; a PostgreSQL restart
drops the lock silently while its holder goes on fetching, so two processes would fetch, and
nothing would stop the first one's late writes. The row survives a restart (it is data), a
killed holder's lease simply runs out, and the generation fences a holder that lost its lease:
`publish` commits only under the generation its claim got, in the same transaction that
advances `last_seq` and marks the slot done.

Times are ISO-8601 UTC text of the processes' clocks, as the daily claims are (the machines
keep NTP time; a lease is tens of seconds, skew is milliseconds). Discord-free, and the SQL is
the dialect SQLite and PostgreSQL share, so the storage tests run it on both.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.storage.schema import Conn
from bot.storage.store import Storage

STAMP = "%Y-%m-%dT%H:%M:%S.%fZ"  # fixed width: text order is time order


def stamp(at: datetime) -> str:
    return at.astimezone(UTC).strftime(STAMP)


@dataclass(frozen=True, slots=True)
class Lease:
    """This process holds `source` for `slot` under `generation` (the fencing token)."""

    source: str
    slot: str
    holder: str
    generation: int


@dataclass(frozen=True, slots=True)
class Done:
    """`slot` of `source` has been fetched (or tried) already: only pull."""

    source: str
    slot: str


@dataclass(frozen=True, slots=True)
class Held:
    """Another process (`holder`) fetches `source` until `until` unless it renews."""

    source: str
    holder: str
    until: str


Claim = Lease | Done | Held


@dataclass(frozen=True, slots=True)
class Published:
    """A record as the fetcher published it: its sequence number within its source."""

    seq: int
    record: dict[str, Any]


class Fenced(RuntimeError):
    """The lease was taken over (it ran out): this holder's results are not published."""


class Election:
    """Claims, renews and ends leases on `storage` as `holder` (one name per process)."""

    def __init__(
        self,
        storage: Storage,
        holder: str,
        lease_seconds: float,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.storage = storage
        self.holder = holder
        self.lease = timedelta(seconds=lease_seconds)
        self.clock = clock or (lambda: datetime.now(UTC))

    async def claim(self, source: str, slot: str) -> Claim:
        """Take `source` for `slot` unless that slot is done or a live lease holds it.

        One conditional UPDATE: on PostgreSQL a second claimant waits for the first one's row
        lock and re-checks the condition on the row it committed, so exactly one wins."""
        now = self.clock()
        until = stamp(now + self.lease)

        def tx(c: Conn) -> Claim:
            c.execute(
                "INSERT INTO source_leases (source) VALUES (?) ON CONFLICT (source) DO NOTHING",
                (source,),
            )
            won = c.execute(
                "UPDATE source_leases SET holder = ?, lease_until = ?, slot = ?, "
                "generation = generation + 1 WHERE source = ? "
                "AND (done_slot IS NULL OR done_slot <> ?) "
                "AND (holder IS NULL OR lease_until < ? OR holder = ?) RETURNING generation",
                (self.holder, until, slot, source, slot, stamp(now), self.holder),
            ).fetchone()
            if won is not None:
                return Lease(source, slot, self.holder, int(won[0]))
            row = c.execute(
                "SELECT holder, lease_until, done_slot FROM source_leases WHERE source = ?",
                (source,),
            ).fetchone()
            if row[2] == slot:
                return Done(source, slot)
            return Held(source, str(row[0]), str(row[1]))

        return await self.storage.run(tx)

    async def renew(self, lease: Lease) -> bool:
        """Push the lease's end on; False when it was taken over (stop fetching)."""
        until = stamp(self.clock() + self.lease)
        return await self.storage.run(
            lambda c: (
                c.execute(
                    "UPDATE source_leases SET lease_until = ? "
                    "WHERE source = ? AND holder = ? AND generation = ?",
                    (until, lease.source, lease.holder, lease.generation),
                ).rowcount
                == 1
            )
        )

    async def publish(self, lease: Lease, records: Sequence[dict[str, Any]]) -> int:
        """Publish what the fetch changed, mark its slot done and end the lease, in one
        transaction; the source's last sequence number. Raises Fenced when the lease was
        taken over: nothing is written then (the new holder fetches and publishes)."""
        rows = [(str(r["id"]), json.dumps(r, ensure_ascii=False)) for r in records]

        def tx(c: Conn) -> int:
            got = c.execute(
                "UPDATE source_leases SET last_seq = last_seq + ?, done_slot = slot, "
                "holder = NULL, lease_until = NULL "
                "WHERE source = ? AND holder = ? AND generation = ? RETURNING last_seq",
                (len(rows), lease.source, lease.holder, lease.generation),
            ).fetchone()
            if got is None:
                raise Fenced(f"{lease.source}: the lease was taken over; not published")
            last = int(got[0])
            if rows:
                # A paper published again replaces its older row: the table holds each
                # paper once, and a reader behind it meets the newest version later on.
                c.executemany(
                    "DELETE FROM source_papers WHERE source = ? AND paper_id = ?",
                    [(lease.source, paper_id) for paper_id, _ in rows],
                )
                first = last - len(rows) + 1
                c.executemany(
                    "INSERT INTO source_papers (source, seq, paper_id, record) VALUES (?, ?, ?, ?)",
                    [(lease.source, first + i, pid, text) for i, (pid, text) in enumerate(rows)],
                )
            return last

        return await self.storage.run(tx, durable=True)

    async def last_seq(self, source: str) -> int:
        found = await self.storage.one(
            "SELECT last_seq FROM source_leases WHERE source = ?", (source,), lambda r: int(r[0])
        )
        return found or 0

    async def published(self, source: str, after: int, limit: int) -> list[Published]:
        """Records of `source` published after sequence `after`, oldest first, at most
        `limit` of them."""
        return await self.storage.rows(
            "SELECT seq, record FROM source_papers WHERE source = ? AND seq > ? "
            "ORDER BY seq LIMIT ?",
            (source, after, limit),
            lambda r: Published(int(r[0]), json.loads(r[1])),
        )

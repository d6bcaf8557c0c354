"""What For you keeps about a member: their 👍 / 👎 ratings and the one "already shown" memory.

Both are keyed by the member alone and read only with the member's own id, so no other member
and no server can see them (a rating is never counted in a server's lists, unlike a save).
The memory is shared by every way a paper reaches a member personally: follows to their DMs,
For you, `/new` and the daily post; `bot.foryou.filter_unseen` is the one place that reads it.

Same SQL dialect rules as `bot.library.store`; the tables are
`bot/storage/migrations/0006_foryou.sql`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from bot.library import library_of
from bot.storage.rows import from_row, ts

if TYPE_CHECKING:
    from bot.storage.store import Storage

UP = 1
DOWN = -1


@dataclass(frozen=True, slots=True)
class Rating:
    """One member's word on one paper: 1 "more like this", -1 "not for me"."""

    user_id: int
    paper_id: str
    rating: int
    rated_at: datetime


def ratings_of(storage: Storage | None) -> Ratings:
    """The ratings store; without a database, the library's reason (`library_of`)."""
    return Ratings(library_of(storage).storage)


class Ratings:
    """Ratings and the shown memory over one `Storage`."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    async def rate(self, user_id: int, paper_id: str, rating: int, now: datetime) -> int | None:
        """Set the member's rating of a paper; the same rating again takes it back (a toggle).
        Returns the rating now stored (None when taken back)."""
        if rating not in (UP, DOWN):
            raise ValueError(f"a rating is {UP} or {DOWN}, not {rating}")

        def q(c: Any) -> int | None:
            row = c.execute(
                "SELECT rating FROM ratings WHERE user_id = ? AND paper_id = ?",
                (user_id, paper_id),
            ).fetchone()
            if row is not None and row[0] == rating:
                c.execute(
                    "DELETE FROM ratings WHERE user_id = ? AND paper_id = ?", (user_id, paper_id)
                )
                return None
            c.execute(
                "INSERT INTO ratings (user_id, paper_id, rating, rated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (user_id, paper_id) DO UPDATE SET rating = excluded.rating, "
                "rated_at = excluded.rated_at",
                (user_id, paper_id, rating, ts(now)),
            )
            return rating

        return await self.storage.run(q)

    async def of(self, user_id: int) -> list[Rating]:
        """The member's ratings, newest first."""
        return await self.storage.run(
            lambda c: [
                from_row(Rating, r)
                for r in c.execute(
                    "SELECT user_id, paper_id, rating, rated_at FROM ratings WHERE user_id = ? "
                    "ORDER BY rated_at DESC, paper_id",
                    (user_id,),
                )
            ],
            write=False,
        )

    async def rejected(self, user_id: int) -> set[str]:
        """The papers the member said 👎 to: never shown to them again."""
        return await self.storage.run(
            lambda c: {
                r[0]
                for r in c.execute(
                    "SELECT paper_id FROM ratings WHERE user_id = ? AND rating = ?",
                    (user_id, DOWN),
                )
            },
            write=False,
        )

    # -- the one "already shown" memory ---------------------------------------------------------

    async def shown_among(self, user_id: int, paper_ids: Sequence[str]) -> set[str]:
        """Which of `paper_ids` were already shown to the member (by any feed)."""
        ids = list(dict.fromkeys(paper_ids))

        def q(c: Any) -> set[str]:
            found: set[str] = set()
            for start in range(0, len(ids), 500):  # bounded parameter lists on both backends
                chunk = ids[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                found.update(
                    r[0]
                    for r in c.execute(
                        f"SELECT paper_id FROM shown WHERE user_id = ? AND paper_id IN ({marks})",
                        (user_id, *chunk),
                    )
                )
            return found

        return await self.storage.run(q, write=False) if ids else set()

    async def mark_shown(
        self, user_id: int, paper_ids: Iterable[str], via: str, now: datetime
    ) -> list[str]:
        """Remember papers as shown to the member; returns those this call may show (not shown
        before, not 👎): two feeds marking the same paper at once, only one gets it back."""
        ids = list(dict.fromkeys(paper_ids))
        return (
            await self.storage.run(lambda c: claim_shown(c, user_id, ids, via, now)) if ids else []
        )


def claim_shown(
    c: Any, user_id: int, paper_ids: Sequence[str], via: str, now: datetime
) -> list[str]:
    """Inside the caller's transaction (a follow's claim, `Ratings.mark_shown`): the papers of
    `paper_ids` the member was never shown and did not 👎, now remembered as shown by `via`
    ("follow", "foryou", "new", "daily"), in the order given."""
    rejected = {
        r[0]
        for r in c.execute(
            "SELECT paper_id FROM ratings WHERE user_id = ? AND rating = ?", (user_id, DOWN)
        )
    }
    return [
        paper_id
        for paper_id in dict.fromkeys(paper_ids)
        if paper_id not in rejected
        and c.execute(
            "INSERT INTO shown (user_id, paper_id, via, shown_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (user_id, paper_id) DO NOTHING",
            (user_id, paper_id, via, ts(now)),
        ).rowcount
        > 0
    ]

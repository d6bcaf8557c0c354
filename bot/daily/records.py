"""Plain records of the daily feature: a server's schedule, its pool state, and one day's pick.

They live apart from `bot.storage.store` (which builds them from rows) so the scheduler, the cog
and the status renderer can use them without importing the database layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

# How far posting a pick has got: pending -> sending -> sent, or failed (gave up).
PickState = Literal["pending", "sending", "sent", "failed"]
# What /daily status says of a server: no schedule, turned off, stopped by a failure, running.
DailyState = Literal["unset", "off", "stopped", "on"]
# What one scheduler step did for one server (see `PostOutcome`).
PostResult = Literal["sent", "found", "retry", "failed", "stopped", "resolved", "claimed"]


@dataclass(frozen=True, slots=True)
class Schedule:
    """One server's daily-post settings. `start_date` is the first local date eligible to post."""

    guild_id: int
    channel_id: int
    time: str
    timezone: str
    topic: str | None
    enabled: bool
    stopped_reason: str | None
    start_date: str
    updated_at: datetime

    @property
    def active(self) -> bool:
        return self.enabled and self.stopped_reason is None


@dataclass(frozen=True, slots=True)
class PoolState:
    """Where a server's draw stands: the shuffle is a pure function of (seed, epoch).

    `drawn` holds the papers already drawn in this epoch; `last_paper` is the newest pick's.
    """

    guild_id: int
    seed: int
    epoch: int
    drawn: frozenset[str] = frozenset()
    last_paper: str | None = None


@dataclass(frozen=True, slots=True)
class Pick:
    """The paper chosen for (guild, local date) and how far posting it has got."""

    guild_id: int
    local_date: str
    paper_id: str
    epoch: int
    marker: str
    state: PickState
    channel_id: int | None
    message_id: int | None
    attempts: int
    error: str | None
    next_attempt_at: datetime | None
    first_attempt_at: datetime | None
    created_at: datetime
    updated_at: datetime
    sent_at: datetime | None
    # Who is sending this pick and until when their claim holds (see Storage.mark_sending).
    claim_owner: str | None = None
    claim_until: datetime | None = None

    def claimed_by_other(self, owner: str, now: datetime) -> bool:
        """True while another process holds an unexpired claim: it may be sending right now."""
        return self.claim_until is not None and self.claim_until > now and self.claim_owner != owner

    @property
    def jump_url(self) -> str | None:
        """A link to the posted message, for /daily status."""
        if self.message_id is None or self.channel_id is None:
            return None
        return f"https://discord.com/channels/{self.guild_id}/{self.channel_id}/{self.message_id}"


@dataclass(frozen=True, slots=True)
class ForYouState:
    """How a server's For you pool stands (`bot.daily.ranked`), for /daily status."""

    saves: int  # distinct papers its members saved from it, still in the corpus
    needed: int  # saves needed before the pool is ranked (`bot.foryou.MIN_SIGNALS`)
    matches: int  # new papers the server's profile ranks (of its topic, if it has one)
    remaining: int  # of those, not posted here yet
    learned: tuple[str, ...] = ()  # the profile's strongest terms

    @property
    def active(self) -> bool:
        """False: the pick comes from the normal pool (too few saves, or nothing left)."""
        return self.saves >= self.needed and self.remaining > 0


@dataclass(frozen=True, slots=True)
class DailyStatus:
    """Everything /daily status shows for one server."""

    guild_id: int
    schedule: Schedule | None
    next_post_utc: datetime | None
    next_post_local: datetime | None
    last_post: Pick | None
    today: Pick | None
    pool_size: int | None
    remaining: int | None
    pool_error: str | None
    for_you: ForYouState | None = None  # set when the server's pool is `foryou`

    @property
    def state(self) -> DailyState:
        """'unset', 'off', 'stopped' (see `stopped_reason`) or 'on'."""
        if self.schedule is None:
            return "unset"
        if not self.schedule.enabled:
            return "off"
        return "stopped" if self.schedule.stopped_reason else "on"

    @property
    def channel_id(self) -> int | None:
        return self.schedule.channel_id if self.schedule else None

    @property
    def stopped_reason(self) -> str | None:
        return self.schedule.stopped_reason if self.schedule else None


@dataclass(frozen=True, slots=True)
class PostOutcome:
    """What one `run_due` step did for one server (logged, and returned to the caller)."""

    guild_id: int
    local_date: date
    result: PostResult
    paper_id: str | None = None
    detail: str | None = None

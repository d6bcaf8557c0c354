"""Claims between processes: a lease runs from the moment it is taken, not from the run's start.

A run over many servers can take longer than `claim_seconds` (hundreds of servers, slow sends);
a lease computed from the run's start is then already expired when written, and a second
process takes the post over while the first is still sending it. Both backends.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from bot.daily.scheduler import DailyRequest, PermanentPostError, TransientPostError
from bot.daily.tables import DailyTables
from tests.daily.test_scheduler import START, Corpus, FakeClock, FakePoster, Harness

SEND = timedelta(minutes=4)  # each send takes this long; the lease is 5 minutes


@dataclass
class SlowPoster(FakePoster):
    """Each send takes `SEND`; while the second server's send is on its way, `during` runs."""

    during: Harness | None = None

    async def post(self, guild_id, channel_id, paper_id, local_date, marker):
        self.clock.set(self.clock.now() + SEND)
        if guild_id == 2 and self.during is not None:
            await self.during.sched.run_due(self.clock.now())
        return await super().post(guild_id, channel_id, paper_id, local_date, marker)


async def test_a_long_run_keeps_its_claims_while_it_sends(database_url):
    clock = FakeClock(START)
    slow = SlowPoster(clock)
    a = Harness(database_url, clock, slow, Corpus())
    b = Harness(database_url, clock, FakePoster(clock, messages=slow.messages), Corpus())
    await a.open()
    await b.open()
    try:
        for guild in (1, 2):
            await a.sched.set_schedule(DailyRequest(guild, guild * 10, "09:00", "UTC"))
        clock.set(datetime(2025, 3, 1, 9, 0, tzinfo=UTC))
        slow.during = b  # B looks at 09:08, during A's second send (claimed at 09:04)
        outcomes = await a.sched.run_due(clock.now())
        assert [o.result for o in outcomes] == ["sent", "sent"]
        assert Counter(m.guild_id for m in slow.messages) == {1: 1, 2: 1}
        assert b.poster.calls == 0
    finally:
        for harness in (a, b):
            await harness.sched.stop()
            await harness.storage.close()


LATE = timedelta(minutes=6)  # a send that outlives the 5-minute lease (a long 429, a pause)


@dataclass
class LatePoster(FakePoster):
    """A's send: it outlives its claim, `during` takes the post over meanwhile, then it fails."""

    during: Harness | None = None
    error: Exception | None = None

    async def post(self, guild_id, channel_id, paper_id, local_date, marker):
        self.clock.set(self.clock.now() + LATE)
        assert self.during is not None
        assert self.error is not None
        await self.during.sched.run_due(self.clock.now())
        raise self.error


@pytest.mark.parametrize(
    "error",
    [TransientPostError("503 Service Unavailable"), PermanentPostError("Missing Permissions")],
    ids=["transient", "permanent"],
)
async def test_a_send_that_outlived_its_claim_never_unrecords_the_post_made_meanwhile(
    database_url, error
):
    """Issue 26 (overlapping processes): B takes A's expired claim over and posts; A's late
    failure must not turn B's recorded post back into 'pending' or 'failed' (a retry would
    then rest on finding the message again, and a failure would show a posted day as lost)."""
    clock = FakeClock(START)
    late = LatePoster(clock, error=error)
    a = Harness(database_url, clock, late, Corpus())
    b = Harness(database_url, clock, FakePoster(clock, messages=late.messages), Corpus())
    await a.open()
    await b.open()
    late.during = b
    try:
        await a.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC"))
        clock.set(datetime(2025, 3, 1, 9, 0, tzinfo=UTC))
        await a.sched.run_due(clock.now())
        assert [m.guild_id for m in late.messages] == [1]  # B's post, the only one
        pick = await DailyTables(a.storage).get_pick(1, "2025-03-01")
        assert (pick.state, pick.message_id) == ("sent", late.messages[0].id)
        clock.set(datetime(2025, 3, 1, 10, 0, tzinfo=UTC))
        assert await a.sched.run_due(clock.now()) == []
        assert len(late.messages) == 1
    finally:
        for harness in (a, b):
            await harness.sched.stop()
            await harness.storage.close()

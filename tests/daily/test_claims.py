"""Claims between processes: a lease runs from the moment it is taken, not from the run's start.

A run over many servers can take longer than `claim_seconds` (hundreds of servers, slow sends);
a lease computed from the run's start is then already expired when written, and a second
process takes the post over while the first is still sending it. Both backends.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.daily.scheduler import DailyRequest
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

import asyncio
import itertools
import random
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.config import DailySettings
from bot.daily.rules import DailyError, due_instant
from bot.daily.scheduler import DailyRequest, DailyScheduler, PermanentPostError, TransientPostError
from bot.daily.tables import DailyTables
from bot.storage.store import Storage
from tests.storage import history

START = datetime(2025, 3, 1, 0, 0, tzinfo=UTC)
CORPUS = [f"p{i:03d}" for i in range(40)]
SETTINGS = DailySettings(retry_window_hours=6, retry_base_seconds=30, retry_max_seconds=600)


class Crash(BaseException):
    """The process dies: nothing after this point runs, nothing is cleaned up."""


class FakeClock:
    def __init__(self, now: datetime) -> None:
        self.current = now
        self.limit: datetime | None = None

    def now(self) -> datetime:
        return self.current

    def set(self, when: datetime) -> None:
        assert when >= self.current, "time only moves forward"
        self.current = when

    async def sleep_until(self, when: datetime) -> None:
        if self.limit is not None and when > self.limit:
            await asyncio.Event().wait()
        self.current = max(self.current, when)
        await asyncio.sleep(0)


@dataclass
class Message:
    id: int
    guild_id: int
    channel_id: int
    paper_id: str
    local_date: date
    marker: str
    at: datetime


@dataclass
class FakePoster:
    """A Discord stand-in: channels keep messages; `script` injects outcomes per post call."""

    clock: FakeClock
    messages: list[Message] = field(default_factory=list)
    script: list[object] = field(default_factory=list)
    rng: random.Random | None = None
    crash_rate: float = 0.0
    transient_rate: float = 0.0
    dead_channels: set[int] = field(default_factory=set)
    calls: int = 0

    async def post(self, guild_id, channel_id, paper_id, local_date, marker):
        self.calls += 1
        action = self.script.pop(0) if self.script else None
        if action is None and self.rng is not None:
            roll = self.rng.random()
            if roll < self.crash_rate:
                action = "crash-before" if self.rng.random() < 0.5 else "crash-after"
            elif roll < self.crash_rate + self.transient_rate:
                action = TransientPostError("503 Service Unavailable")
        if isinstance(action, Exception):
            raise action
        if channel_id in self.dead_channels:
            raise PermanentPostError("Unknown Channel (deleted)")
        if action == "crash-before":
            raise Crash
        message = Message(
            len(self.messages) + 1,
            guild_id,
            channel_id,
            paper_id,
            local_date,
            marker,
            self.clock.now(),
        )
        self.messages.append(message)
        if action == "crash-after":
            raise Crash
        return message.id

    async def find_existing(self, channel_id, marker, since=None):
        if channel_id in self.dead_channels:
            raise PermanentPostError("Unknown Channel (deleted)")
        hits = [m.id for m in self.messages if m.channel_id == channel_id and m.marker == marker]
        return hits[-1] if hits else None

    def for_guild(self, guild_id):
        return [m for m in self.messages if m.guild_id == guild_id]


@dataclass
class Corpus:
    ids: list[str] = field(default_factory=lambda: list(CORPUS))
    topics: dict[str, list[str]] = field(default_factory=dict)
    added: dict[str, datetime] = field(default_factory=dict)  # first-seen time of new papers

    def __call__(self):
        return list(self.ids)

    def grow(self, count: int, when: datetime) -> list[str]:
        """A refresh that brings `count` new papers at `when`."""
        new = [f"n{len(self.added) + i:03d}" for i in range(count)]
        self.ids.extend(new)
        self.added.update(dict.fromkeys(new, when))
        return new

    def added_after(self, since):
        return [pid for pid, at in self.added.items() if since is None or at > since]

    def match(self, topic):
        if topic == "!bad":
            raise ValueError("Nothing to search for")
        return [pid for pid in self.topics.get(topic, []) if pid in self.ids]


class Harness:
    def __init__(self, path, clock, poster, corpus, seed=0):
        self.path, self.clock, self.poster, self.corpus = str(path), clock, poster, corpus
        self.rng = random.Random(seed)
        self.storage: Storage | None = None
        self.sched: DailyScheduler | None = None

    async def open(self):
        self.storage = await Storage.open(self.path)
        self.sched = DailyScheduler(
            self.storage,
            self.poster,
            self.corpus,
            self.corpus.match,
            added_after=self.corpus.added_after,
            settings=SETTINGS,
            clock=self.clock,
            rng=random.Random(self.rng.random()),
        )
        return self.sched

    async def restart(self):
        await self.sched.stop()
        await self.storage.close()
        return await self.open()

    async def step(self):
        """One iteration of the scheduler loop, then jump the clock to its next wake-up."""
        await self.sched.run_due(self.clock.now())
        nxt = await self.sched.next_wakeup(self.clock.now())
        self.clock.set(max(nxt, self.clock.now()))

    async def run_until(self, end):
        while self.clock.now() < end:
            nxt = await self.sched.next_wakeup(self.clock.now())
            if nxt is None or nxt >= end:
                self.clock.set(end)
                await self.sched.run_due(end)
                return
            self.clock.set(max(nxt, self.clock.now()))
            await self.sched.run_due(self.clock.now())


@pytest.fixture
async def h(database_url):
    """The scheduler over a fresh database: every test here runs on SQLite and PostgreSQL."""
    clock = FakeClock(START)
    harness = Harness(database_url, clock, FakePoster(clock), Corpus())
    await harness.open()
    yield harness
    await harness.sched.stop()
    await harness.storage.close()


def local_dates(messages, tz):
    return [m.at.astimezone(ZoneInfo(tz)).date() for m in messages]


async def test_bad_input_saves_nothing(h):
    for args, needle in [
        (("25:00", "UTC"), "hours go from 00 to 23"),
        (("09:00", "Mars/Olympus"), "Unknown time zone"),
        (("09:00", "UTC", "nonexistent topic"), "No paper matches"),
        (("09:00", "UTC", "!bad"), "cannot be used"),
    ]:
        with pytest.raises(DailyError, match=needle):
            await h.sched.set_schedule(DailyRequest(1, 10, *args))
    assert await DailyTables(h.storage).get_schedule(1) is None
    assert await h.sched.next_wakeup() is None


async def test_posts_once_a_day_and_today_agrees(h):
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "Europe/Paris"))
    promised = await h.sched.today(1)
    await h.run_until(datetime(2025, 3, 3, 12, 0, tzinfo=UTC))
    posts = h.poster.for_guild(1)
    assert [m.at for m in posts] == [datetime(2025, 3, d, 8, 0, tzinfo=UTC) for d in (1, 2, 3)]
    assert posts[0].paper_id == promised
    assert len({m.paper_id for m in posts}) == 3
    await h.restart()
    assert await h.sched.today(1) == posts[-1].paper_id
    assert await h.sched.run_due() == []


async def test_setting_after_todays_time_starts_tomorrow(h):
    h.clock.set(datetime(2025, 3, 1, 10, 0, tzinfo=UTC))
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC"))
    assert await h.sched.next_wakeup() == datetime(2025, 3, 2, 9, 0, tzinfo=UTC)
    await h.run_until(datetime(2025, 3, 2, 12, 0, tzinfo=UTC))
    assert [m.local_date for m in h.poster.messages] == [date(2025, 3, 2)]


async def test_long_downtime_gives_one_catch_up_for_today_only(h):
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC"))
    await h.run_until(datetime(2025, 3, 1, 10, 0, tzinfo=UTC))
    await h.storage.close()
    h.clock.set(datetime(2025, 3, 5, 15, 0, tzinfo=UTC))  # down for four days
    await h.open()
    await h.run_until(datetime(2025, 3, 6, 0, 0, tzinfo=UTC))
    assert [(m.local_date, m.at.hour) for m in h.poster.messages] == [
        (date(2025, 3, 1), 9),
        (date(2025, 3, 5), 15),
    ]


@pytest.mark.parametrize("when", ["crash-before", "crash-after"])
async def test_crash_around_the_send_never_double_posts(h, when):
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC"))
    h.poster.script = [when]
    h.clock.set(datetime(2025, 3, 1, 9, 0, tzinfo=UTC))
    with pytest.raises(Crash):
        await h.sched.run_due()
    assert (await DailyTables(h.storage).get_pick(1, "2025-03-01")).state == "sending"
    await h.restart()
    h.clock.set(datetime(2025, 3, 1, 9, 7, tzinfo=UTC))
    outcomes = await h.sched.run_due()
    assert [o.result for o in outcomes] == ["found" if when == "crash-after" else "sent"]
    assert len(h.poster.messages) == 1
    pick = await DailyTables(h.storage).get_pick(1, "2025-03-01")
    assert pick.state == "sent"
    assert pick.message_id == h.poster.messages[0].id


@pytest.mark.parametrize(("when", "state"), [("crash-before", "failed"), ("crash-after", "sent")])
async def test_crash_then_days_of_downtime_settles_the_old_day_without_resending(h, when, state):
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC"))
    h.poster.script = [when]
    h.clock.set(datetime(2025, 3, 1, 9, 0, tzinfo=UTC))
    with pytest.raises(Crash):
        await h.sched.run_due()
    h.clock.set(datetime(2025, 3, 3, 12, 0, tzinfo=UTC))
    await h.restart()
    outcomes = await h.sched.run_due()
    assert [(o.result, o.local_date.day) for o in outcomes] == [("resolved", 1), ("sent", 3)]
    old = await DailyTables(h.storage).get_pick(1, "2025-03-01")
    assert old.state == state
    assert [m.local_date.day for m in h.poster.messages] == (
        [1, 3] if when == "crash-after" else [3]
    )
    if state == "sent":
        assert old.message_id == h.poster.messages[0].id
        assert (await h.sched.status(1)).last_post.local_date == "2025-03-03"


async def test_transient_failures_back_off_then_succeed(h):
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC"))
    await h.sched.set_schedule(DailyRequest(2, 20, "09:00", "UTC"))
    h.poster.script = [TransientPostError("429", retry_after=100), None, TransientPostError("502")]
    await h.run_until(datetime(2025, 3, 1, 12, 0, tzinfo=UTC))
    times = {m.guild_id: m.at - datetime(2025, 3, 1, 9, 0, tzinfo=UTC) for m in h.poster.messages}
    # guild 1: Retry-After 100 s beats the 30 s backoff, then a 502 doubles it to 60 s.
    assert times == {1: timedelta(seconds=160), 2: timedelta(0)}
    pick = await DailyTables(h.storage).get_pick(1, "2025-03-01")
    assert pick.state == "sent"
    assert pick.attempts == 3


async def test_transient_failures_give_up_within_the_day_and_resume(h):
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC"))
    h.poster.script = [TransientPostError("503")] * 100
    await h.run_until(datetime(2025, 3, 1, 23, 0, tzinfo=UTC))
    pick = await DailyTables(h.storage).get_pick(1, "2025-03-01")
    assert pick.state == "failed"
    assert "gave up" in pick.error
    assert pick.updated_at <= datetime(2025, 3, 1, 15, 0, tzinfo=UTC)  # 6-hour window
    h.poster.script = []
    await h.run_until(datetime(2025, 3, 2, 10, 0, tzinfo=UTC))
    assert [m.local_date for m in h.poster.messages] == [date(2025, 3, 2)]
    assert (await h.sched.status(1)).state == "on"


async def test_permanent_failure_stops_only_that_server(h):
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC"))
    await h.sched.set_schedule(DailyRequest(2, 20, "09:00", "UTC"))
    h.poster.dead_channels.add(10)
    await h.run_until(datetime(2025, 3, 3, 12, 0, tzinfo=UTC))
    assert [m.guild_id for m in h.poster.messages] == [2, 2, 2]
    status = await h.sched.status(1)
    assert status.state == "stopped"
    assert "Unknown Channel" in status.stopped_reason
    assert status.next_post_utc is None
    assert await h.sched.next_wakeup() == datetime(2025, 3, 4, 9, 0, tzinfo=UTC)
    # /daily set again clears the stop (the admin fixed the channel).
    await h.sched.set_schedule(DailyRequest(1, 11, "13:00", "UTC"))
    await h.run_until(datetime(2025, 3, 3, 14, 0, tzinfo=UTC))
    assert [(m.guild_id, m.channel_id) for m in h.poster.messages][-1] == (1, 11)


async def test_off_stops_posting_and_keeps_history(h):
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC"))
    await h.run_until(datetime(2025, 3, 1, 10, 0, tzinfo=UTC))
    assert await h.sched.disable(1) is True
    await h.run_until(datetime(2025, 3, 4, 0, 0, tzinfo=UTC))
    assert len(h.poster.messages) == 1
    status = await h.sched.status(1)
    assert status.state == "off"
    assert status.last_post.paper_id == h.poster.messages[0].paper_id


async def test_status_shows_everything(h):
    await h.sched.set_schedule(DailyRequest(1, 10, "09:30", "America/New_York"))
    await h.run_until(datetime(2025, 3, 2, 15, 0, tzinfo=UTC))
    status = await h.sched.status(1)
    assert status.channel_id == 10
    assert status.state == "on"
    assert status.next_post_utc == datetime(2025, 3, 3, 14, 30, tzinfo=UTC)
    assert status.next_post_local.replace(tzinfo=None) == datetime(2025, 3, 3, 9, 30)
    assert status.last_post.local_date == "2025-03-02"
    assert status.last_post.jump_url.startswith("https://discord.com/channels/1/10/")
    assert (status.pool_size, status.remaining) == (40, 38)


async def test_topic_pool_and_reshuffle_after_exhaustion(h):
    h.corpus.topics["rl"] = ["p001", "p002", "p003"]
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC", topic="rl"))
    await h.run_until(datetime(2025, 3, 10, 0, 0, tzinfo=UTC))
    papers = [m.paper_id for m in h.poster.messages]
    assert len(papers) == 9
    assert set(papers) == {"p001", "p002", "p003"}
    for start in (0, 3, 6):
        assert len(set(papers[start : start + 3])) == 3
    assert all(a != b for a, b in itertools.pairwise(papers))
    assert (await h.sched.status(1)).remaining == 0


async def test_topic_that_stops_matching_stops_the_schedule(h):
    h.corpus.topics["rl"] = ["p001"]
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC", topic="rl"))
    h.corpus.ids.remove("p001")
    await h.run_until(datetime(2025, 3, 1, 10, 0, tzinfo=UTC))
    assert h.poster.messages == []
    assert "No paper matches" in (await h.sched.status(1)).stopped_reason


async def test_corpus_changes(h):
    h.corpus.ids = ["a", "b", "c", "d"]
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC"))
    await h.run_until(datetime(2025, 3, 2, 10, 0, tzinfo=UTC))
    shown = [m.paper_id for m in h.poster.messages]
    removed = next(p for p in "abcd" if p not in shown)
    h.corpus.ids = [p for p in "abcd" if p != removed] + ["e", "f"]
    await h.run_until(datetime(2025, 3, 6, 10, 0, tzinfo=UTC))
    papers = [m.paper_id for m in h.poster.messages]
    assert len(papers) == 6
    assert removed not in papers
    assert len(set(papers[:5])) == 5  # the pass covers old and new papers, none twice
    assert {"e", "f"} <= set(papers)


async def test_a_new_topic_keeps_the_pick_today_showed_and_applies_from_tomorrow(h):
    h.corpus.topics["rl"] = ["p005"]
    shown = await h.sched.today(1)
    assert shown in CORPUS
    assert shown != "p005"
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC", topic="rl"))
    assert await h.sched.today(1) == shown  # /today is one paper all day
    h.clock.current += timedelta(days=1)
    assert await h.sched.today(1) == "p005"


@pytest.mark.parametrize(
    ("tz", "at", "day", "expected_utc"),
    [
        ("America/New_York", "02:30", date(2025, 3, 9), datetime(2025, 3, 9, 7, 0, tzinfo=UTC)),
        ("America/New_York", "01:30", date(2025, 11, 2), datetime(2025, 11, 2, 5, 30, tzinfo=UTC)),
        ("Australia/Sydney", "02:30", date(2025, 4, 6), datetime(2025, 4, 5, 15, 30, tzinfo=UTC)),
        ("Europe/Berlin", "02:30", date(2025, 3, 30), datetime(2025, 3, 30, 1, 0, tzinfo=UTC)),
    ],
)
async def test_dst_days_post_exactly_once(h, tz, at, day, expected_utc):
    h.clock.current = datetime.combine(day - timedelta(days=2), time(0), tzinfo=UTC)
    await h.sched.set_schedule(DailyRequest(1, 10, at, tz))
    await h.run_until(datetime.combine(day + timedelta(days=2), time(0), tzinfo=UTC))
    on_day = [m for m in h.poster.messages if m.local_date == day]
    assert [m.at for m in on_day] == [expected_utc]
    dates = [m.local_date for m in h.poster.messages]
    assert len(dates) == len(set(dates))
    assert local_dates(h.poster.messages, tz) == dates


async def test_the_loop_sleeps_until_due_and_wakes_on_change(h):
    h.clock.limit = datetime(2025, 3, 3, 0, 0, tzinfo=UTC)
    h.sched.start()
    await asyncio.sleep(0)
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC"))
    for _ in range(500):
        if len(h.poster.messages) == 2:
            break
        await asyncio.sleep(0.005)
    assert [m.at.day for m in h.poster.messages] == [1, 2]
    await h.sched.stop()


SIM_SERVERS = [  # guild, channel, time, zone: three DST rules, one zone without DST
    (1, 10, "02:30", "America/New_York"),  # spring-forward gap on 2025-03-09
    (2, 20, "02:30", "Australia/Sydney"),  # fall-back overlap on 2025-04-06
    (3, 30, "09:00", "Europe/Berlin"),  # spring forward on 2025-03-30
    (4, 40, "18:45", "Asia/Kolkata"),
    (5, 50, "00:30", "Pacific/Auckland"),  # fall back on 2025-04-06
]


NEW_POOL_GUILD = 6  # posts at 07:15 UTC, drawing from papers added since its last post


# Three seeds on SQLite, the growing one on PostgreSQL too: the simulation exercises the
# scheduler's rules, which are the same on both; what differs by backend (claims, leases,
# transactions) has its own tests on both, and the PostgreSQL runs took 40 % of this file.
@pytest.mark.parametrize(
    ("database_url", "seed", "grows"),
    [("sqlite", 1, False), ("sqlite", 2, False), ("sqlite", 3, True), ("postgresql", 3, True)],
    indirect=["database_url"],
)
async def test_sixty_days_with_random_restarts(h, seed, grows):
    rng = random.Random(seed)
    h.poster.rng, h.poster.crash_rate, h.poster.transient_rate = rng, 0.15, 0.1
    h.corpus.topics["small"] = CORPUS[:7]
    for guild, channel, at, tz in SIM_SERVERS:
        await h.sched.set_schedule(
            DailyRequest(guild, channel, at, tz, topic="small" if guild == 3 else None)
        )
    if grows:
        await h.sched.set_schedule(DailyRequest(NEW_POOL_GUILD, 60, "07:15", "UTC", pool="new"))
    end = START + timedelta(days=60)
    # The corpus grows every few days at 02:00 UTC, as a scheduled source refresh would.
    growth = START + timedelta(days=2, hours=2) if grows else end
    grown: dict[date, list[str]] = {}
    restarts = 0
    while h.clock.now() < end:
        if h.clock.now() >= growth:
            grown[growth.date()] = h.corpus.grow(2, growth)
            growth += timedelta(days=rng.choice([2, 3, 4]))
        try:
            await h.sched.run_due(h.clock.now())
        except Crash:
            restarts += 1
            h.clock.set(h.clock.now() + timedelta(minutes=rng.uniform(0, 90)))
            await h.restart()
            continue
        nxt = min(await h.sched.next_wakeup(h.clock.now()), max(growth, h.clock.now()))
        if rng.random() < 0.2:  # a restart at a random moment before the next wake-up
            restarts += 1
            h.clock.set(h.clock.now() + (nxt - h.clock.now()) * rng.random())
            await h.restart()
            continue
        h.clock.set(max(nxt, h.clock.now()))
    assert restarts > 20
    for guild, channel, at, tz in SIM_SERVERS:
        zone = ZoneInfo(tz)
        posts = h.poster.for_guild(guild)
        dates = [m.local_date for m in posts]
        hh, mm = map(int, at.split(":"))
        first = START.astimezone(zone).date()
        if due_instant(first, time(hh, mm), zone) <= START:
            first += timedelta(days=1)
        expected = [first + timedelta(days=i) for i in range(len(posts))]
        assert dates == expected, f"guild {guild} posted {dates}"
        assert len(posts) >= 59
        assert local_dates(posts, tz) == dates
        assert all(m.at >= due_instant(m.local_date, time(hh, mm), zone) for m in posts)
        assert {m.channel_id for m in posts} == {channel}
        picks = await history.picks(h.storage, guild)
        sent = {p.local_date: p.message_id for p in picks if p.state == "sent"}
        assert sent == {m.local_date.isoformat(): m.id for m in posts}
        by_epoch: dict[int, list[str]] = {}
        for pick in picks:
            by_epoch.setdefault(pick.epoch, []).append(pick.paper_id)
        for epoch, papers in by_epoch.items():
            assert len(set(papers)) == len(papers), f"guild {guild} repeated in pass {epoch}"
        pool = 7 if guild == 3 else 40
        if not grows:
            assert all(len(papers) == pool for papers in list(by_epoch.values())[:-1])
    if grows:
        assert len(grown) >= 15
        picks = {p.local_date: p for p in await history.picks(h.storage, NEW_POOL_GUILD)}
        assert len([p for p in picks.values() if p.state == "sent"]) >= 59
        for day, new in grown.items():
            # Each refresh's papers are new since the last post: that day's 07:15 pick is one.
            assert picks[day.isoformat()].paper_id in new, f"{day}: {picks[day.isoformat()]}"
        # Everyone else draws from the whole, growing pool: new papers do show up there too.
        every = {m.paper_id for m in h.poster.for_guild(1)}
        assert every & set(h.corpus.added)


async def test_system_clock_loop_starts_and_stops(database_url):
    store = await Storage.open(database_url)
    sched = DailyScheduler(store, FakePoster(FakeClock(START)), Corpus())
    sched.start()
    sched.start()  # idempotent
    sched.wake()
    await asyncio.sleep(0.05)
    assert sched.loop.running
    await sched.stop()
    assert not sched.loop.running
    await store.close()


async def test_new_pool_prefers_papers_added_since_the_last_post(h):
    with pytest.raises(DailyError, match="Unknown pool"):
        await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC", pool="fresh"))
    assert await DailyTables(h.storage).get_schedule(1) is None
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC", pool="new"))
    assert await h.sched.pool_mode(1) == "new"
    assert await h.sched.pool_mode(2) == "all"
    await h.run_until(START + timedelta(hours=12))  # nothing added yet: the whole pool
    new = h.corpus.grow(2, h.clock.now())
    await h.run_until(START + timedelta(days=1, hours=12))
    await h.run_until(START + timedelta(days=2, hours=12))
    posted = [m.paper_id for m in h.poster.messages]
    assert posted[0] in CORPUS
    assert posted[1] in new  # added since the first post
    # The other new paper was added before the second post, not since it: the whole pool again.
    assert posted[2] != posted[1]
    # Switching back to every paper applies at once.
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC", pool="all"))
    assert await h.sched.pool_mode(1) == "all"


@dataclass
class GatedPoster(FakePoster):
    """A poster whose send waits on `gate`: the process is stuck on a long 429 Retry-After."""

    gate: asyncio.Event = field(default_factory=asyncio.Event)
    entered: asyncio.Event = field(default_factory=asyncio.Event)

    async def post(self, *args):
        self.entered.set()
        await self.gate.wait()
        return await super().post(*args)


async def test_a_second_process_on_the_same_database_never_posts_again(database_url):
    """Issue 12.3: process B starts on A's database while A waits on a 429: one post, not two."""
    clock = FakeClock(START)
    stuck = GatedPoster(clock)
    a = Harness(database_url, clock, stuck, Corpus())
    b = Harness(database_url, clock, FakePoster(clock, messages=stuck.messages), Corpus())
    await a.open()
    await b.open()
    try:
        await a.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC"))
        clock.set(datetime(2025, 3, 1, 9, 0, tzinfo=UTC))
        first = asyncio.ensure_future(a.sched.run_due())
        await asyncio.wait_for(stuck.entered.wait(), 5)
        clock.set(datetime(2025, 3, 1, 9, 1, tzinfo=UTC))
        assert await b.sched.run_due() == []  # A's claim holds: B does not even look
        # B plans to look again when A's claim runs out, not before.
        assert await b.sched.next_wakeup() == datetime(2025, 3, 1, 9, 5, tzinfo=UTC)
        stuck.gate.set()
        assert [o.result for o in await first] == ["sent"]
        clock.set(datetime(2025, 3, 1, 9, 10, tzinfo=UTC))
        assert await b.sched.run_due() == []
        assert [m.guild_id for m in stuck.messages] == [1]
    finally:
        for harness in (a, b):
            await harness.sched.stop()
            await harness.storage.close()


async def test_a_claim_left_by_a_dead_process_is_taken_over_after_its_lease(database_url):
    """A dies after claiming (before or after Discord got the post): B looks, then posts once."""
    clock = FakeClock(START)
    a = Harness(database_url, clock, FakePoster(clock, script=["crash-after"]), Corpus())
    await a.open()
    await a.sched.set_schedule(DailyRequest(1, 10, "09:00", "UTC"))
    clock.set(datetime(2025, 3, 1, 9, 0, tzinfo=UTC))
    with pytest.raises(Crash):
        await a.sched.run_due()
    await a.storage.close()
    b = Harness(database_url, clock, FakePoster(clock, messages=a.poster.messages), Corpus())
    await b.open()
    try:
        clock.set(datetime(2025, 3, 1, 9, 2, tzinfo=UTC))
        assert await b.sched.run_due() == []
        clock.set(await b.sched.next_wakeup())
        assert clock.now() == datetime(2025, 3, 1, 9, 5, tzinfo=UTC)
        assert [o.result for o in await b.sched.run_due()] == ["found"]
        assert len(a.poster.messages) == 1
    finally:
        await b.sched.stop()
        await b.storage.close()


async def test_a_process_posts_only_for_the_servers_it_owns(database_url):
    clock = FakeClock(START)
    h = Harness(database_url, clock, FakePoster(clock), Corpus())
    await h.open()
    try:
        h.sched.owns = lambda guild_id: guild_id % 2 == 0
        for guild in (1, 2, 3, 4):
            await h.sched.set_schedule(DailyRequest(guild, guild * 10, "09:00", "UTC"))
        await h.run_until(datetime(2025, 3, 1, 10, 0, tzinfo=UTC))
        assert sorted(m.guild_id for m in h.poster.messages) == [2, 4]
    finally:
        await h.sched.stop()
        await h.storage.close()


# -- issue 12 item 2: a pick whose paper left the corpus is redrawn ---------------------------


async def test_pick_whose_paper_left_the_corpus_is_redrawn_and_today_follows(h):
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "Europe/Paris"))
    promised = await h.sched.today(1)  # /today fixes the pick...
    h.corpus.ids.remove(promised)  # ...then a reload drops its paper
    replacement = await h.sched.today(1)  # /today follows the redraw
    assert replacement != promised
    assert replacement in h.corpus.ids
    await h.run_until(datetime(2025, 3, 1, 12, 0, tzinfo=UTC))
    (post,) = h.poster.for_guild(1)
    assert post.paper_id == replacement
    assert h.poster.calls == 1  # no failed attempt, no day lost


async def test_paper_that_leaves_between_attempts_is_redrawn_at_the_next_one(h):
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "Europe/Paris"))
    promised = await h.sched.today(1)
    h.poster.script = [TransientPostError("503 Service Unavailable")]
    await h.run_until(datetime(2025, 3, 1, 8, 0, tzinfo=UTC))  # the first attempt fails
    assert h.poster.for_guild(1) == []
    h.corpus.ids.remove(promised)
    await h.run_until(datetime(2025, 3, 1, 12, 0, tzinfo=UTC))
    (post,) = h.poster.for_guild(1)
    assert post.paper_id != promised
    assert await h.sched.today(1) == post.paper_id


async def test_a_sent_pick_is_never_redrawn(h):
    await h.sched.set_schedule(DailyRequest(1, 10, "09:00", "Europe/Paris"))
    await h.run_until(datetime(2025, 3, 1, 12, 0, tzinfo=UTC))
    (post,) = h.poster.for_guild(1)
    h.corpus.ids.remove(post.paper_id)
    assert await h.sched.today(1) == post.paper_id


# -- issue 12 item 17: corpus walks run off the event loop ------------------------------------


async def test_corpus_walks_run_off_the_event_loop(h):
    import threading

    loop_thread = threading.get_ident()
    threads: list[int] = []
    ids, match = h.corpus.__call__, h.corpus.match

    def corpus() -> list[str]:
        threads.append(threading.get_ident())
        return ids()

    def topic(text: str) -> list[str]:
        threads.append(threading.get_ident())
        return match(text)

    h.corpus.topics["graphs"] = CORPUS[:5]
    sched = DailyScheduler(h.storage, h.poster, corpus, topic, settings=SETTINGS, clock=h.clock)
    await sched.set_schedule(
        DailyRequest(1, 10, "09:00", "Europe/Paris", "graphs")
    )  # /daily set topic:
    await sched.status(1)  # /daily status
    await sched.today(1)  # the first /today of a day
    await sched.set_schedule(DailyRequest(2, 10, "09:00", "Europe/Paris"))
    await sched.status(2)
    await sched.today(2)
    assert len(threads) >= 6
    assert loop_thread not in threads

"""The paper of the day in the console: `/daily set|status|off` and `/today`, the post printed
when due, on the same scheduler and database as Discord (issue 14 §3).

The REPL is driven through `Console.run` with scripted input: a step is either a command line or
an action between lines (move the clock, wait for the post), so the console's own loop thread
prints the post while the REPL waits for its next line, as it does at a terminal.
"""

from __future__ import annotations

import asyncio
import io
import random
import re
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TextIO, cast

import pytest

from bot.app import render
from bot.config import Settings, StorageSettings
from bot.console.daily import parse_set
from bot.console.repl import Console
from bot.daily.records import Schedule
from bot.daily.servers import CONSOLE_SERVER
from bot.daily.tables import DailyTables
from bot.search.engine import SearchEngine
from bot.storage.store import Storage

START = datetime(2025, 3, 1, 6, 0, tzinfo=UTC)  # 07:00 in Paris
DUE = datetime(2025, 3, 1, 8, 0, tzinfo=UTC)  # 09:00 in Paris
POSTED = re.compile(r"^/save (\S+) keeps it · /cite \1 its BibTeX · /similar \1$", re.M)
WAIT = 30.0  # seconds; generous for a loaded machine, only reached when a test fails


class ManualClock:
    """The scheduler's clock, moved by the test. `sleeping` is the instant the scheduler is
    waiting for, so a test knows when it has done everything due (it sleeps for the future)."""

    def __init__(self, now: datetime) -> None:
        self.current = now
        self.sleeping: datetime | None = None

    def now(self) -> datetime:
        return self.current

    def set(self, when: datetime) -> None:
        assert when >= self.current, "time only moves forward"
        self.current = when

    async def sleep_until(self, when: datetime) -> None:
        self.sleeping = when
        try:
            while self.current < when:
                await asyncio.sleep(0.005)
        finally:
            self.sleeping = None


class Script:
    """stdin for `Console.run`: lines, and callables run between them (not a terminal)."""

    def __init__(self, *steps: str | Callable[[], None]) -> None:
        self.steps = list(steps)

    def isatty(self) -> bool:
        return False

    def readline(self) -> str:
        while self.steps:
            step = self.steps.pop(0)
            if isinstance(step, str):
                return step + "\n"
            step()
        return ""


def wait_for(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


class Terminal:
    """One console session after another on one database and one clock (restarts)."""

    def __init__(self, engine: SearchEngine, database: str, clock: ManualClock) -> None:
        self.engine, self.database, self.clock = engine, database, clock
        self.out = io.StringIO()
        self.console: Console | None = None

    def session(self, *steps: str | Callable[[], None]) -> str:
        """Run a console to the end of `steps`; what it printed."""
        start = len(self.out.getvalue())
        settings = replace(Settings(), storage=StorageSettings(self.database))
        self.console = Console(
            self.engine,
            self.out,
            settings=settings,
            clock=self.clock,
            rng=random.Random(7),
        )
        assert self.console.run(cast(TextIO, Script(*steps))) == 0
        return self.out.getvalue()[start:]

    def posts(self) -> list[str]:
        return POSTED.findall(self.out.getvalue())

    def at(self, when: datetime, *, scheduled: bool = True) -> Callable[[], None]:
        """A step: move the clock, then, while a schedule is on, wait until the scheduler
        sleeps for a later instant (it has done whatever was due)."""

        def step() -> None:
            self.clock.set(when)
            if scheduled:
                self.settle()

        return step

    def settle(self) -> None:
        wait_for(
            lambda: self.clock.sleeping is not None and self.clock.sleeping > self.clock.current,
            "the scheduler to sleep until its next post",
        )

    def nothing_due(self) -> None:
        """A step: the scheduler, asked directly, finds nothing left to do now."""
        assert self.console is not None
        scheduler = self.console.daily.scheduler
        assert scheduler is not None
        assert self.console.db.wait(scheduler.run_due()) == []


def test_set_status_post_once_restart_next_day_and_off(
    icml_engine: SearchEngine, database_url: str
) -> None:
    clock = ManualClock(START)
    term = Terminal(icml_engine, database_url, clock)

    first = term.session(
        "/daily set 09:00 Europe/Paris",
        "/daily status",
        term.at(DUE),  # the post prints while the console waits for input
        term.at(DUE + timedelta(hours=5)),
        term.nothing_due,
        "/daily status",
    )
    assert "Paper of the day is set" in first
    assert "In #console, every day at **09:00** (Europe/Paris) · all papers." in first
    assert "Paper of the day: on" in first
    assert "Channel: #console" in first
    assert "2025-03-01 09:00 CET (Europe/Paris) · 2025-03-01 08:00 UTC" in first
    assert "(in 2 hours)" in first  # the relative time, against the console's clock
    assert first.count("📄 Paper of the day") == 1
    assert re.search(r"\n-- Paper of the day · Saturday 1 March 2025\b", first)
    assert "potd-" not in first  # no internal token in any footer
    assert "/cite " in first  # the post's buttons, as console commands
    [day_one] = term.posts()
    title = render.title_text(icml_engine.paper(day_one))
    assert f"Last post: {title} · 2025-03-01" in first
    assert "2025-03-02 09:00 CET (Europe/Paris)" in first  # the next one, tomorrow

    # A restart the same day: nothing is posted again; the next day brings another paper.
    second = term.session(
        term.at(DUE + timedelta(hours=6)),
        term.nothing_due,
        term.at(DUE + timedelta(days=1)),
        "/today",
    )
    assert term.posts()[0] == day_one
    assert len(term.posts()) == 2
    day_two = term.posts()[1]
    assert day_two != day_one
    assert re.search(r"\n-- Paper of the day · Sunday 2 March 2025\b", second)
    assert "potd-" not in second
    assert "Posted in #console today." in second  # /today shows the post of the day

    # Off stops it: the next due time passes without a post, here and after a restart.
    off = DUE + timedelta(days=2)
    term.session("/daily off", term.at(off, scheduled=False), term.nothing_due)
    third = term.session("/daily status", term.nothing_due)
    assert len(term.posts()) == 2
    assert "Paper of the day: off" in third


# The same inputs and words as the Discord test of /daily set (tests/app/exts/daily/test_cog.py).
BAD_INPUT = [
    ("25:00 Europe/Paris", "hours go from 00 to 23"),
    ('"9 o\'clock" Europe/Paris', "use 24-hour HH:MM"),
    ("09:00 Mars/Olympus", "Unknown time zone 'Mars/Olympus'"),
    ("09:00 Europe/Pari", "Did you mean Europe/Paris"),
    ("09:00 UTC zzzqqq nonexistentword", "No paper matches the topic"),
]


def test_bad_input_gets_discords_message_and_changes_nothing(
    icml_engine: SearchEngine, tmp_path: Path
) -> None:
    database = tmp_path / "bot.sqlite3"
    term = Terminal(icml_engine, str(database), ManualClock(START))
    out = term.session(*(f"/daily set {line}" for line, _ in BAD_INPUT[:4]))
    for _line, needle in BAD_INPUT[:4]:
        assert needle in out
    assert out.count("Nothing was saved.") == 4
    assert not database.exists()  # a mistyped first command creates no database

    out = term.session(
        "/daily set 10:30 UTC",
        *(f"/daily set {line}" for line, _ in BAD_INPUT),
        "/daily set 09:00",
        "/daily set #general 09:00 UTC",
        "/daily status",
    )
    for _line, needle in BAD_INPUT:
        assert needle in out
    assert "Missing timezone. Use: /daily set TIME TIMEZONE" in out
    assert "Unknown channel '#general': the console has one channel, #console" in out
    assert out.count("Nothing was saved.") == len(BAD_INPUT) + 2
    assert out.rstrip().endswith("(then the pool is reshuffled)")
    status = out[out.rindex("Paper of the day: on") :]
    assert "every day at **10:30** (UTC) · all papers" in status

    async def stored() -> Schedule | None:
        storage = await Storage.open(str(database))
        try:
            return await DailyTables(storage).get_schedule(CONSOLE_SERVER)
        finally:
            await storage.close()

    schedule = asyncio.run(stored())
    assert schedule is not None
    assert (schedule.time, schedule.timezone, schedule.topic) == ("10:30", "UTC", None)


def test_set_reads_positional_and_named_options() -> None:
    assert parse_set("09:00 Europe/Paris optimal transport") == {
        "time": "09:00",
        "timezone": "Europe/Paris",
        "topic": "optimal transport",
    }
    assert parse_set('time:9h30 timezone:UTC topic:"graph networks" pool:new #console') == {
        "time": "9h30",
        "timezone": "UTC",
        "topic": "graph networks",
        "pool": "new",
        "channel": "#console",
    }
    with pytest.raises(ValueError, match="longer than 100 characters"):
        parse_set("09:00 UTC " + "word " * 30)


def test_today_is_one_paper_all_day_in_the_console(
    icml_engine: SearchEngine, tmp_path: Path
) -> None:
    """Before the first /daily set (UTC date), after it (Paris: already the next date at
    23:30 UTC, with a topic leaving that paper out): the same paper."""
    late = datetime(2025, 3, 1, 23, 30, tzinfo=UTC)
    term = Terminal(icml_engine, str(tmp_path / "bot.sqlite3"), ManualClock(late))
    before = term.session("/today")
    title = re.search(r"📄 Paper of the day\n(.+)\n", before)
    assert title is not None
    others = [p for p in icml_engine.papers if render.title_text(p) != title.group(1)]
    topic = '"' + " ".join(others[0].title.split()[:3]) + '"'
    after = term.session(f"/daily set 09:00 Europe/Paris {topic}", "/today")
    assert "Paper of the day is set" in after
    assert f"📄 Paper of the day\n{title.group(1)}\n" in after

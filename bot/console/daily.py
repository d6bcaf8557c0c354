"""The paper of the day in the console: `/daily set|status|off` and `/today`, printed here.

Nothing is reimplemented: the console's "server" (`bot.daily.servers.CONSOLE_SERVER`) is
scheduled by the same `DailyScheduler` over the same database as a Discord server, with the same
pool, never-repeat and catch-up rules, and answered by the same functions as the cog
(`bot.app.exts.daily.answers`). The one difference is where the post goes: `TerminalPoster`
prints it, rendered like every console answer, instead of sending it to a Discord channel. The
scheduler runs on the console's loop thread (`bot.console.localdb`), so a post due while the
console waits for input is printed at its time.
"""

from __future__ import annotations

import logging
import random
import shlex
import time as wallclock
from collections.abc import Callable, Coroutine
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

import discord

from bot.app import render
from bot.app.exts.daily import answers
from bot.app.exts.daily.answers import TIME_MAX, TOPIC_MAX, ZONE_MAX
from bot.app.exts.daily.embeds import daily_embed
from bot.config import DailySettings
from bot.console.localdb import ConsoleContext
from bot.console.text import paper_actions
from bot.daily.rules import TransientPostError
from bot.daily.scheduler import DailyRequest, DailyScheduler
from bot.daily.servers import CONSOLE_CHANNEL, CONSOLE_SERVER
from bot.papers.records import Paper
from bot.search.recent import ids_added_after
from bot.timing import Clock

if TYPE_CHECKING:
    from bot.search.engine import SearchEngine

log = logging.getLogger(__name__)

CHANNEL_NAMES = ("#console", "console", "here")
OPTIONS = ("channel", "time", "timezone", "topic", "pool")
DAILY_HELP = """Paper of the day (printed here when due, while the console runs):
  /daily set TIME TIMEZONE [TOPIC...] [pool:new|foryou]   e.g. /daily set 09:00 UTC transport
  /daily status      /daily off      /today   today's paper (/save, /cite, more)
"""


class TerminalPoster:
    """`bot.daily.rules.Poster` for the console's one channel: the terminal.

    The terminal keeps no history to search, so `find_existing` finds nothing: a console killed
    in the instant between printing a post and recording it prints it again at its next start
    (on Discord the channel itself is the record, see `DiscordPoster.find_existing`).
    """

    def __init__(
        self, engine: Callable[[], SearchEngine], announce: Callable[[discord.Embed, str], None]
    ) -> None:
        self.engine = engine
        self.announce = announce

    async def post(
        self, guild_id: int, channel_id: int, paper_id: str, local_date: date, marker: str
    ) -> int:
        try:
            paper = self.engine().paper(paper_id)
        except ValueError as exc:  # UnknownPaper: the corpus was reloaded without it
            raise TransientPostError(f"paper {paper_id} is no longer in the corpus") from exc
        self.announce(daily_embed(paper, local_date), paper_actions(paper.id))
        return wallclock.time_ns() // 1_000_000  # a message id, as Discord would return one

    async def find_existing(
        self, channel_id: int, marker: str, since: datetime | None = None
    ) -> int | None:
        return None


class DailyInput(ValueError):
    """A `/daily set` line the console cannot read; the message says what would work."""


def parse_set(rest: str) -> dict[str, str]:
    """`/daily set` options: `TIME TIMEZONE [TOPIC...]` in order, or `name:value` as Discord's
    client fills them in (`time:09:00 timezone:Europe/Paris pool:new`), mixed freely.

    Discord's client refuses a missing required option and values over an option's length
    before anything reaches the bot; the console says so instead.
    """
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        raise DailyInput(f"Cannot read that line ({exc}): close the quotes.") from exc
    given: dict[str, str] = {}
    loose: list[str] = []
    for word in words:
        name, colon, value = word.partition(":")
        if colon and name.lower() in OPTIONS:
            given[name.lower()] = value
        elif word.startswith("#") and "channel" not in given:
            given["channel"] = word
        else:
            loose.append(word)
    for name in ("time", "timezone"):
        if name not in given and loose:
            given[name] = loose.pop(0)
    if loose:
        given["topic"] = " ".join([given.get("topic", ""), *loose]).strip()
    missing = [name for name in ("time", "timezone") if not given.get(name)]
    if missing:
        raise DailyInput(
            f"Missing {' and '.join(missing)}. Use: /daily set TIME TIMEZONE [TOPIC] "
            "[pool:new|foryou], for example /daily set 09:00 Europe/Paris."
        )
    for name, most in (("time", TIME_MAX), ("timezone", ZONE_MAX), ("topic", TOPIC_MAX)):
        if len(given.get(name, "")) > most:
            raise DailyInput(f"{name} is longer than {most} characters (Discord refuses it too).")
    channel = given.get("channel", "#console")
    if channel.lower() not in CHANNEL_NAMES:
        raise DailyInput(
            f"Unknown channel {channel!r}: the console has one channel, #console (this "
            "terminal), where the post is printed. Leave the channel out."
        )
    return given


class LocalDaily:
    """The console's `/daily` and `/today`, and the scheduler that prints its posts."""

    def __init__(
        self,
        context: ConsoleContext,
        announce: Callable[[discord.Embed, str], None],
        *,
        settings: DailySettings | None = None,
        clock: Clock | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.db = context.db
        self.engine = context.engine
        self.show = context.show
        self.write = context.write
        self.poster = TerminalPoster(context.engine, announce)
        self.settings = settings or DailySettings()
        self.clock = clock
        self.rng = rng
        self.scheduler: DailyScheduler | None = None

    async def _sched(self) -> DailyScheduler:
        """The scheduler, made and started on first need (on the console's loop)."""
        if self.scheduler is None:
            self.scheduler = DailyScheduler(
                await self.db.storage(),
                self.poster,
                lambda: list(self.engine().ids),
                lambda topic: self.engine().matching_ids(topic),
                added_after=lambda since: ids_added_after(self.engine(), since),
                settings=self.settings,
                clock=self.clock,
                rng=self.rng,
                has_paper=lambda paper_id: self.engine().has_paper(paper_id),
                console=True,
                engine=self.engine,
            )
            self.scheduler.start()
        return self.scheduler

    def start(self) -> None:
        """At console start: run the schedule of an existing database (today's post, if due,
        prints now). A console that never used the database creates none."""
        if self.db.exists():
            self.db.wait(self._sched())

    def close(self) -> None:
        scheduler, self.scheduler = self.scheduler, None
        if scheduler is not None:
            self.db.wait(scheduler.stop())

    def handle(self, name: str, rest: str) -> Paper | None:
        """Run `/daily ...` or `/today`; returns the paper shown, for `/save` and `more`."""
        if name == "today":
            return self._today()
        verb, _, arg = rest.partition(" ")
        verb = verb.lower()
        if verb == "set":
            try:
                given = parse_set(arg)
            except DailyInput as exc:
                self.show(answers.refused(str(exc)))
                return None
            embed = self._call_set(given)
        elif verb == "status":
            embed = self._call(lambda s: answers.status_answer(s, CONSOLE_SERVER, self._title_of))
        elif verb == "off":
            embed = self._call(lambda s: answers.off_answer(s, CONSOLE_SERVER))
        else:
            self.show(render.error_embed(f"Unknown /daily command {verb!r}.\n" + DAILY_HELP))
            return None
        self.show(embed)
        return None

    def _call(
        self, make: Callable[[DailyScheduler], Coroutine[Any, Any, discord.Embed]]
    ) -> discord.Embed:
        async def go() -> discord.Embed:
            return await make(await self._sched())

        return self.db.wait(go())

    def _call_set(self, given: dict[str, str]) -> discord.Embed:
        request = DailyRequest(
            CONSOLE_SERVER,
            CONSOLE_CHANNEL,
            given["time"],
            given["timezone"],
            given.get("topic") or None,
            given.get("pool") or None,
        )
        bad = answers.check_input(request)
        if bad is not None:
            return bad  # before the database is opened: a typo creates nothing

        async def go() -> discord.Embed:
            return await answers.set_answer(await self._sched(), request)

        return self.db.wait(go())

    def _title_of(self, paper_id: str) -> str | None:
        return answers.title_of(self.engine(), paper_id)

    def _today(self) -> Paper | None:
        async def go() -> answers.TodayAnswer:
            return await answers.today_answer(await self._sched(), self.engine(), CONSOLE_SERVER)

        answer = self.db.wait(go())
        self.show(answer.embed)
        if answer.paper is not None:
            self.write(paper_actions() + "\n")
        if answer.jump_url:
            self.write("Posted in #console today.\n\n")
        return answer.paper

"""What `/daily set|status|off` and `/today` answer, for the cog and for the console alike.

One place for the order of the checks and for every message, so a bad time or an unknown zone
gets the same words in the terminal as on Discord: the console's "same commands" (README) hold
because both ends call these. Channels and permissions are the caller's part: only Discord has
them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date

import discord

from bot.app import render
from bot.app.exts.daily import embeds
from bot.daily.rules import DailyError, parse_time, parse_timezone
from bot.daily.scheduler import DailyRequest, DailyScheduler
from bot.papers.records import Paper
from bot.search.engine import SearchEngine

# Longest values the commands take (Discord options and the console alike).
TIME_MAX = 16
ZONE_MAX = 64
TOPIC_MAX = 100

OFF_TEXT = (
    "Paper of the day is off. `/daily set` turns it back on; what was already shown will "
    "not be repeated."
)
NOT_ON_TEXT = "Paper of the day was not on here; nothing changed."


def refused(reason: str) -> discord.Embed:
    """A `/daily set` refusal: the reason, and that nothing changed."""
    return render.error_embed(f"{reason}\nNothing was saved.")


def check_input(request: DailyRequest) -> discord.Embed | None:
    """The refusal for a bad time or zone (checked before anything else), or None."""
    try:
        parse_time(request.time)
        parse_timezone(request.timezone)
    except DailyError as exc:
        return refused(str(exc))
    return None


async def set_answer(
    sched: DailyScheduler, request: DailyRequest, notes: Sequence[str] = ()
) -> discord.Embed:
    """Save the schedule and confirm it, or say why not (then nothing is saved)."""
    try:
        await sched.set_schedule(request)
    except DailyError as exc:
        return refused(str(exc))
    lines = [f"Pool: {embeds.NEW_POOL_TEXT}."] if request.pool == "new" else []
    status = await sched.status(request.guild_id)
    return embeds.set_embed(status, [*lines, *notes])


def title_of(engine: SearchEngine, paper_id: str) -> str | None:
    """A pick's title for /daily status, or None once its paper left the corpus."""
    try:
        return render.title_text(engine.paper(paper_id))
    except ValueError:  # UnknownPaper
        return None


async def status_answer(
    sched: DailyScheduler, guild_id: int, title_of: Callable[[str], str | None]
) -> discord.Embed:
    status = await sched.status(guild_id)
    mode = await sched.pool_mode(guild_id)
    return embeds.status_embed(status, title_of, mode)


async def off_answer(sched: DailyScheduler, guild_id: int) -> discord.Embed:
    changed = await sched.disable(guild_id)
    text = OFF_TEXT if changed else NOT_ON_TEXT
    return render.note_embed(text)


@dataclass(frozen=True, slots=True)
class TodayAnswer:
    """`/today`: the paper's embed, or an error embed (then `paper` is None)."""

    embed: discord.Embed
    paper: Paper | None = None
    posted_in: int | None = None  # the channel of today's post, once it is sent
    jump_url: str | None = None


async def today_answer(sched: DailyScheduler, engine: SearchEngine, guild_id: int) -> TodayAnswer:
    try:
        pick = await sched.today_pick(guild_id)
        paper = engine.paper(pick.paper_id)
    except ValueError as exc:  # DailyError (empty pool) or UnknownPaper (corpus reloaded)
        return TodayAnswer(render.error_embed(f"No paper of the day: {exc}"))
    embed = embeds.daily_embed(paper, date.fromisoformat(pick.local_date))
    if pick.state == "sent" and pick.jump_url:
        return TodayAnswer(embed, paper, pick.channel_id, pick.jump_url)
    return TodayAnswer(embed, paper)

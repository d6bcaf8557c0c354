"""Embeds of the paper of the day: the daily post itself, its thread's starter message,
`/daily status` and `/daily set`.

Kept apart from `bot.app.render` (papers and search results) but built from its pieces and leaving
through the same `render.finish`, so every Discord limit still applies in one place.

No footer carries an internal token: the post's marker (`bot.daily.rules.pick_marker`), by which
the scheduler finds the post again after a crash between sending and recording, travels in the
custom_id of the post's Cite button (`bot.app.results.citing.PostCiteButton`). `/today` shows
the same paper without it, so a /today reply in the channel is never mistaken for the post.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date, datetime

import discord

from bot.app import limits, markdown, render
from bot.app.markdown import masked_link
from bot.daily.records import DailyStatus, ForYouState, Pick
from bot.papers.records import Paper

EXCERPT = 700  # characters of abstract in the post: a teaser, the thread is for discussion
FOOTER_LABEL = "Paper of the day"


def day_text(day: date) -> str:
    """`Saturday 1 March 2025`: unambiguous in every locale, unlike 01/03/2025."""
    return f"{day:%A} {day.day} {day:%B %Y}"


def daily_embed(paper: Paper, day: date) -> discord.Embed:
    """The paper as `/paper` shows it (`render.paper_embed`), abstract cut to a teaser, footer
    "Paper of the day · DATE"."""
    return render.paper_embed(
        paper, heading=f"📄 {FOOTER_LABEL}", excerpt=EXCERPT, footer=(FOOTER_LABEL, day_text(day))
    )


PROMPTS = (
    "What is the main claim, and does the evidence carry it?",
    "Would it work on your data or problem? What would break first?",
    "What would you try next, or what is missing?",
)


def starter_text(paper: Paper) -> str:
    """The first message of the post's thread: what to discuss, and the paper's links (an
    empty thread invites nobody)."""
    title = markdown.escape(limits.truncate(render.title_text(paper), 200))
    lines = [f"💬 **Discuss today's paper: {title}**", *(f"• {q}" for q in PROMPTS)]
    links = [masked_link(label, url) for label, url in render.found_links(paper)]
    if links:
        lines.append("Links: " + limits.join_limited(links, 1000, sep=" · "))
    lines.append("Save it, cite it or find more like it with the buttons on the post.")
    return limits.truncate("\n".join(lines), limits.CONTENT, markdown=True)


def thread_name(paper: Paper, day: date) -> str:
    """The discussion thread's name: the plain title (thread names show no markdown), or
    "Paper of the day, DATE" when the title renders to nothing."""
    name = limits.truncate(render.title_text(paper), limits.THREAD_NAME)
    return name or limits.truncate(f"{FOOTER_LABEL}, {day_text(day)}", limits.THREAD_NAME)


def timestamp(when: datetime) -> str:
    """A Discord timestamp (shown in each reader's own zone) and how far away it is."""
    return f"{discord.utils.format_dt(when, 'F')} ({discord.utils.format_dt(when, 'R')})"


def zone_text(status: DailyStatus) -> str:
    """The next post written out in the server's zone and in UTC (no client-side rendering)."""
    assert status.next_post_local is not None
    assert status.next_post_utc is not None
    local = status.next_post_local
    zone = status.schedule.timezone if status.schedule else "UTC"
    return (
        f"{local:%Y-%m-%d %H:%M} {local.tzname()} ({zone}) · "
        f"{status.next_post_utc:%Y-%m-%d %H:%M} UTC"
    )


def _pick_line(pick: Pick, title_of: Callable[[str], str | None]) -> str:
    title = title_of(pick.paper_id) or pick.paper_id
    title = limits.truncate(title, 200)
    return f"{masked_link(title, pick.jump_url)} · {pick.local_date}"


def _schedule_text(status: DailyStatus) -> str:
    schedule = status.schedule
    assert schedule is not None
    topic = f"papers matching “{schedule.topic}”" if schedule.topic else "all papers"
    return f"every day at **{schedule.time}** ({schedule.timezone}) · {topic}"


def _pool_text(status: DailyStatus) -> str:
    if status.pool_error:
        return status.pool_error
    if status.pool_size is None or status.remaining is None:
        return "unknown"
    return (
        f"{status.remaining} of {status.pool_size} papers not shown yet in this round "
        "(then the pool is reshuffled)"
    )


STATE_TITLES = {"on": "on", "off": "off", "stopped": "stopped", "unset": "not set up"}


NEW_POOL_TEXT = "new papers first: those added since the last post, else any paper of the pool"
SAVES_ONLY = "Saves only: 👍 / 👎 are personal and never count for a server."


def for_you_text(state: ForYouState) -> str:
    """The `foryou` pool in /daily status and /daily set: counts of the server's saves and
    matches, and its strongest words (aggregates, never a member), or why it falls back."""
    if state.saves < state.needed:
        head = (
            f"For you needs {state.needed} papers saved from this server and has "
            f"{state.saves}: until then the paper comes from the normal pool"
        )
    elif not state.remaining:
        head = (
            f"For you: no new paper matching the {state.saves} papers saved here is left to "
            "post: the paper comes from the normal pool"
        )
    else:
        words = f" (strongest words: {', '.join(state.learned)})" if state.learned else ""
        head = (
            f"For you: {state.remaining} of the {state.matches} new papers that match the "
            f"{state.saves} papers saved here are not posted yet, best first{words}"
        )
    return limits.truncate(f"{head}. {SAVES_ONLY}", 700)


def status_embed(
    status: DailyStatus, title_of: Callable[[str], str | None], pool_mode: str = "all"
) -> discord.Embed:
    """`/daily status`: channel, next post (both zones), last post, pool, and why it stopped."""
    state = status.state
    colour = render.ERROR_COLOR if state == "stopped" else render.COLOR
    embed = discord.Embed(title=f"Paper of the day: {STATE_TITLES[state]}", colour=colour)
    if status.schedule is None:
        embed.description = (
            "No paper of the day here yet. Set one up with "
            "`/daily set channel time timezone [topic]`."
        )
        return render.finish(embed)
    if state == "off":
        embed.description = "Turned off with `/daily off`. `/daily set` turns it back on."
    elif state == "stopped":
        embed.description = (
            f"**Stopped:** {status.stopped_reason}\n"
            "Fix the cause, then run `/daily set` to start again."
        )
    embed.add_field(name="Channel", value=f"<#{status.schedule.channel_id}>", inline=True)
    embed.add_field(name="Schedule", value=_schedule_text(status), inline=False)
    if status.next_post_utc is not None and state == "on":
        embed.add_field(
            name="Next post",
            inline=False,
            value=f"{timestamp(status.next_post_utc)}\n{zone_text(status)}",
        )
    today = status.today
    if today is not None and today.state in ("pending", "sending") and today.error:
        when = f", next attempt {timestamp(today.next_attempt_at)}" if today.next_attempt_at else ""
        embed.add_field(
            name="Today", inline=False, value=f"not posted yet: {today.error} (retrying{when})"
        )
    elif today is not None and today.state == "failed" and state != "stopped":
        embed.add_field(name="Today", value=f"not posted: {today.error}", inline=False)
    last = _pick_line(status.last_post, title_of) if status.last_post else "none yet"
    embed.add_field(name="Last post", value=last, inline=False)
    pool = _pool_text(status)
    if pool_mode == "new":
        pool = f"{NEW_POOL_TEXT}.\n{pool}"
    elif status.for_you is not None:
        pool = f"{for_you_text(status.for_you)}\nNormal pool: {pool}"
    embed.add_field(name="Pool", value=pool, inline=False)
    return render.finish(embed)


def set_embed(status: DailyStatus, notes: Sequence[str] = ()) -> discord.Embed:
    """The `/daily set` confirmation: what was saved and when the first post comes."""
    schedule = status.schedule
    assert schedule is not None
    lines = [f"In <#{schedule.channel_id}>, {_schedule_text(status)}."]
    if status.next_post_utc is not None:
        lines.append(f"First post: {timestamp(status.next_post_utc)}\n{zone_text(status)}")
    if status.for_you is not None:
        lines.append(for_you_text(status.for_you))
    if status.pool_size is not None:
        lines.append(f"{'Normal pool' if status.for_you else 'Pool'}: {_pool_text(status)}.")
    lines.extend(notes)
    embed = discord.Embed(
        title="Paper of the day is set", colour=render.COLOR, description="\n".join(lines)
    )
    return render.finish(embed)

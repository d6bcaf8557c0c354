"""`/daily set|status|off` (Manage Server) and `/today` (everyone): the paper of the day.

The rules live in `bot.daily.scheduler.DailyScheduler` (storage, pool, retries, catch-up) and the
Discord calls in `poster.DiscordPoster`; this cog wires them to the bot and translates
commands. Wiring:

* the scheduler reads the corpus through `self.bot.engine` *at call time*, so a live reload
  that swaps the engine changes the pool without restarting anything;
* its clock is `bot.clock` when one was injected, else real time;
* it posts only for the servers of this process's shards (`bot.owns_guild`); a server's post
  is also claimed in the database first, so overlapping processes still post it once;
* it starts once the gateway is up (a task awaiting `wait_until_ready`, so a reconnect's
  second `on_ready` cannot start it twice) and stops in `cog_unload`, which discord.py also
  runs from `Bot.close()`, before the bot closes its storage.

`/daily` is hidden from members without Manage Server (`default_permissions`), but Discord lets
server admins override that per role or channel, so every subcommand also checks it here. `/today`
is a separate top-level command because `default_member_permissions` applies to a whole group.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.app import installs, limits, render, respond
from bot.app.checks import WORDS, manager_group, manager_only, stored_text
from bot.app.exts.daily import answers
from bot.app.exts.daily.answers import TIME_MAX, TOPIC_MAX, ZONE_MAX
from bot.app.exts.daily.forum import forum_tags, tag_problem
from bot.app.exts.daily.poster import DiscordPoster, missing_permissions
from bot.app.results.views import paper_view
from bot.app.workers import off_loop
from bot.daily.rules import zone_names
from bot.daily.scheduler import DailyRequest, DailyScheduler
from bot.search.recent import ids_added_after

if TYPE_CHECKING:
    from bot.app.client import PaperBot
    from bot.storage.store import Storage

log = logging.getLogger(__name__)

POOL_CHOICES = [
    app_commands.Choice(name="every paper (default)", value="all"),
    app_commands.Choice(name="new papers first (added since the last post)", value="new"),
    app_commands.Choice(
        name="For you: new papers ranked from what members saved here", value="foryou"
    ),
]
# Suggested before anything is typed: a spread of the zones most servers use.
COMMON_ZONES = (
    "UTC",
    "Europe/London",
    "Europe/Paris",
    "Europe/Berlin",
    "Europe/Moscow",
    "America/New_York",
    "America/Chicago",
    "America/Denver",
    "America/Los_Angeles",
    "America/Sao_Paulo",
    "Africa/Lagos",
    "Africa/Johannesburg",
    "Asia/Dubai",
    "Asia/Kolkata",
    "Asia/Singapore",
    "Asia/Shanghai",
    "Asia/Seoul",
    "Asia/Tokyo",
    "Australia/Sydney",
    "Pacific/Auckland",
)


def zone_choices(current: str, limit: int = limits.CHOICES) -> list[str]:
    """Zones for what was typed: name prefix first, then a part's prefix (the city), then any
    substring. "paris", "new york" and "europe/pa" all find what one would expect."""
    want = current.strip().lower().replace(" ", "_")
    if not want:
        known = set(zone_names().values())
        return [z for z in COMMON_ZONES if z in known][:limit]
    starts: list[str] = []
    parts: list[str] = []
    inside: list[str] = []
    for lower, canonical in zone_names().items():
        if lower.startswith(want):
            starts.append(canonical)
        elif any(part.startswith(want) for part in lower.split("/")[1:]):
            parts.append(canonical)
        elif want in lower:
            inside.append(canonical)
    return (starts + parts + inside)[:limit]


PostTarget = discord.TextChannel | discord.ForumChannel


class DailyChannel(app_commands.Transformer["PaperBot"]):
    """The `/daily set` channel: text, announcement or forum. discord.py offers media channels
    with `ForumChannel`; a media post must carry a file, so they are neither offered nor taken."""

    KINDS = (discord.ChannelType.text, discord.ChannelType.news, discord.ChannelType.forum)

    @property
    def type(self) -> discord.AppCommandOptionType:
        return discord.AppCommandOptionType.channel

    @property
    def channel_types(self) -> list[discord.ChannelType]:
        return list(self.KINDS)

    async def transform(
        self, interaction: discord.Interaction[PaperBot], value: object, /
    ) -> PostTarget:
        resolve = getattr(value, "resolve", None)
        resolved = resolve() if callable(resolve) else value
        if isinstance(resolved, PostTarget) and resolved.type in self.KINDS:
            return resolved
        raise app_commands.TransformerError(value, discord.AppCommandOptionType.channel, self)


class Daily(commands.Cog):
    """The paper-of-the-day commands and the scheduler's lifetime."""

    daily = manager_group("daily", "Paper of the day for this server (needs Manage Server)")

    def __init__(self, bot: PaperBot, storage: Storage) -> None:
        self.bot = bot
        self.storage = storage
        self.scheduler: DailyScheduler | None = None
        self._starter: asyncio.Task[None] | None = None

    # -- lifecycle --------------------------------------------------------------------------

    async def cog_load(self) -> None:
        settings = self.bot.settings.daily
        poster = DiscordPoster(self.bot, open_thread=settings.open_thread)
        self.scheduler = DailyScheduler(
            self.storage,
            poster,
            self._corpus_ids,
            self._topic_ids,
            added_after=self._added_after,
            settings=settings,
            clock=self.bot.clock,
            owns=self.bot.owns_guild,  # only the servers of this process's shards
            has_paper=lambda paper_id: self.bot.engine.has_paper(paper_id),
            offload=off_loop,
            engine=lambda: self.bot.engine,
        )
        await off_loop(zone_names)
        self._starter = asyncio.create_task(self._start_when_ready(), name="daily-start")

    async def _start_when_ready(self) -> None:
        """Start posting only once the gateway is up: before that, caches are empty."""
        await self.bot.wait_until_ready()
        assert self.scheduler is not None
        self.scheduler.start()
        log.info("paper of the day scheduler started")

    async def cog_unload(self) -> None:
        if self._starter is not None:
            self._starter.cancel()
            await asyncio.gather(self._starter, return_exceptions=True)
        if self.scheduler is not None:
            await self.scheduler.stop()

    def _corpus_ids(self) -> list[str]:
        return list(self.bot.engine.ids)  # from memory: no paper decoded

    def _topic_ids(self, topic: str) -> list[str]:
        return self.bot.engine.matching_ids(topic)

    def _added_after(self, since: datetime | None) -> list[str]:
        return ids_added_after(self.bot.engine, since)

    def _title_of(self, paper_id: str) -> str | None:
        return answers.title_of(self.bot.engine, paper_id)

    @property
    def sched(self) -> DailyScheduler:
        if self.scheduler is None:
            raise RuntimeError("the daily cog is not loaded")
        return self.scheduler

    # -- /daily -----------------------------------------------------------------------------

    @daily.command(name="set", description="Post a paper every day in a channel at a local time")
    @app_commands.describe(
        channel="A text channel, or a forum (each day a post, tagged with the topic)",
        time="Local time, 24-hour HH:MM, for example 09:00",
        timezone="IANA time zone such as Europe/Paris (start typing a city)",
        topic="Only papers matching these words (search syntax); empty: every paper",
        pool="new: papers added since the last post first; foryou: ranked from this server's saves",
    )
    @app_commands.choices(pool=POOL_CHOICES)
    @app_commands.check(manager_only)
    async def set_daily(
        self,
        interaction: discord.Interaction[PaperBot],
        channel: app_commands.Transform[PostTarget, DailyChannel],
        time: app_commands.Range[str, 1, TIME_MAX],
        timezone: app_commands.Range[str, 1, ZONE_MAX],
        topic: app_commands.Range[str, 1, TOPIC_MAX] | None = None,
        pool: app_commands.Choice[str] | None = None,
    ) -> None:
        assert interaction.guild_id is not None
        stored_text(topic, "the topic", WORDS)
        request = DailyRequest(
            interaction.guild_id, channel.id, time, timezone, topic, pool.value if pool else None
        )
        embed = await respond.soon(interaction, self._set(channel, request))
        await respond.send(interaction, embed=embed, ephemeral=True)

    async def _set(self, channel: PostTarget, request: DailyRequest) -> discord.Embed:
        bad = answers.check_input(request)
        if bad is not None:
            return bad
        required, optional = self._missing_in(channel)
        if required:
            return answers.refused(
                f"I can't post in {channel.mention}: I'm missing **{', '.join(required)}** "
                "there. Give my role those permissions in the channel's settings, then run "
                "`/daily set` again."
            )
        notes = []
        if isinstance(channel, discord.ForumChannel):
            topic = (request.topic or "").strip() or None
            problem = tag_problem(channel, topic)
            if problem is not None:
                return answers.refused(problem)
            tags = forum_tags(channel, topic)
            tagged = f", tagged “{tags[0].name}”" if tags else ""
            notes.append(f"Each day's paper is a post in the forum {channel.mention}{tagged}.")
        elif optional and self.bot.settings.daily.open_thread:
            notes.append(
                f"Posts will have no discussion thread: I'm missing "
                f"{', '.join(optional)} in {channel.mention} (optional)."
            )
        return await answers.set_answer(self.sched, request, notes)

    def _missing_in(self, channel: PostTarget) -> tuple[list[str], list[str]]:
        me = channel.guild.me
        if me is None:  # not cached (should not happen with the guilds intent): let Discord say
            return [], []
        return missing_permissions(channel.permissions_for(me))

    @set_daily.autocomplete("timezone")
    async def timezone_autocomplete(
        self, interaction: discord.Interaction[PaperBot], current: str
    ) -> list[app_commands.Choice[str]]:
        return [app_commands.Choice(name=name, value=name) for name in zone_choices(current)]

    @daily.command(
        name="status", description="Channel, next post, last post and pool of the paper of the day"
    )
    @app_commands.check(manager_only)
    async def status(self, interaction: discord.Interaction[PaperBot]) -> None:
        assert interaction.guild_id is not None
        embed = await respond.soon(
            interaction, answers.status_answer(self.sched, interaction.guild_id, self._title_of)
        )
        await respond.send(interaction, embed=embed, ephemeral=True)

    @daily.command(name="off", description="Stop posting the paper of the day (history is kept)")
    @app_commands.check(manager_only)
    async def off(self, interaction: discord.Interaction[PaperBot]) -> None:
        assert interaction.guild_id is not None
        embed = await respond.soon(
            interaction, answers.off_answer(self.sched, interaction.guild_id)
        )
        await respond.send(interaction, ephemeral=True, embed=embed)

    # -- /today -----------------------------------------------------------------------------

    @app_commands.command(name="today", description="Today's paper of the day for this server")
    @installs.server_only
    async def today(self, interaction: discord.Interaction[PaperBot]) -> None:
        assert interaction.guild_id is not None
        ephemeral = self.bot.settings.discord.ephemeral
        answer = await respond.soon(
            interaction,
            answers.today_answer(self.sched, self.bot.engine, interaction.guild_id),
            ephemeral=ephemeral,
        )
        if answer.paper is None:
            await respond.send(interaction, ephemeral=True, embed=answer.embed)
            return
        content = f"Posted in <#{answer.posted_in}>: {answer.jump_url}" if answer.jump_url else None
        await respond.send(
            interaction,
            embed=answer.embed,
            content=content,
            ephemeral=ephemeral,
            view=paper_view(answer.paper.id, render.found_links(answer.paper), share=ephemeral),
        )


async def setup(bot: PaperBot) -> None:
    if bot.storage is None:
        log.warning(
            "paper of the day unavailable: no storage (see [storage] database in the "
            "settings); /daily and /today are not registered"
        )
        return
    await bot.add_cog(Daily(bot, bot.storage))

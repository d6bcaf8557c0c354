"""`/follow add|list|remove`: be told about new papers matching a query, by DM or in a channel.

A personal follow (no channel) notifies its owner by DM; a channel follow needs Manage Server
and posts in that channel. Notices go out when the corpus grows: after `/admin reload`, a
scheduled refresh (both swap the engine and dispatch `corpus_reloaded`) and at start (papers
added while the bot was down). A notice Discord did not take is retried by the retry loop here
(woken when the next one is due, on `bot.clock`), and by any of those rounds. The rules are in
`bot.app.exts.follows.notify`; this cog wires them.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.ext import commands

import bot.library as library
from bot.app import installs, markdown, respond
from bot.app.checks import WORDS, manager_only, stored_autocomplete, stored_text
from bot.app.exts.follows import notify
from bot.app.exts.follows.embeds import follows_embed, notice_title
from bot.follows.feeds import (
    CAP_MAX,
    EXCLUDE_MAX,
    FREQUENCIES,
    WEEKDAYS,
    FeedError,
    Feeds,
    tuned,
)
from bot.follows.notices import RETRY_BASE, RETRY_MAX
from bot.follows.store import FOR_YOU, AlreadyFollowed, Follow, Follows, TooManyFollows
from bot.search.results import EmptyQuery
from bot.timing import backoff

if TYPE_CHECKING:
    from bot.app.client import PaperBot
    from bot.storage.store import Storage

log = logging.getLogger(__name__)
QUERY_MAX = 100


async def _removable(
    interaction: discord.Interaction[PaperBot], storage: Storage
) -> list[tuple[str, str]]:
    """The follows `/follow remove` accepts from this user as (query, id): their DM follows,
    and the server's channel follows for a manager."""
    follows = Follows(storage)
    found = await follows.personal(interaction.user.id)
    if interaction.guild_id is not None and interaction.permissions.manage_guild:
        found += await follows.of_guild(interaction.guild_id)
    return [
        (notice_title(f) if f.channel_id is None else f"{f.query} (channel)", f.follow_id)
        for f in found
    ]


follow_autocomplete = stored_autocomplete(_removable)


class FollowsCog(commands.Cog, name="Follows"):
    follow = installs.anywhere(
        app_commands.Group(name="follow", description="New papers matching a query, as they arrive")
    )

    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot
        self.owner = notify.owner_name()
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._retry: asyncio.Task[None] | None = None  # the wake-up for the next retry
        self._failures = 0  # passes failed in a row (the database away): their backoff

    def _follows(self) -> Follows:
        if self.bot.storage is None:
            raise library.Refused("Follows need the bot's database, which is not available.")
        return Follows(self.bot.storage)

    # -- notices --------------------------------------------------------------------------------

    async def cog_load(self) -> None:
        self._spawn(self._at_start())

    async def cog_unload(self) -> None:
        tasks = [*self._tasks, *([self._retry] if self._retry is not None else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro, name="follow-notices")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _at_start(self) -> None:
        await self.bot.wait_until_ready()
        await self.notify_now()

    async def notify_now(self, *, queue: bool = True) -> int:
        """One planning-and-delivery pass at a time (a reload during the start pass waits);
        then the retry loop is set to wake when the next waiting notice is due."""
        async with self._lock:
            clock = notify.clock_of(self.bot)
            try:
                done = await notify.run(self.bot, self.owner, queue=queue)
            except Exception:  # a failed pass must not take the bot down; the next one retries
                log.exception("follow notices failed")
                self._failures += 1
                delay = backoff(self._failures, RETRY_BASE, RETRY_MAX)
                self._wake_at(clock.now() + timedelta(seconds=delay))
                return 0
            self._failures = 0
            self._wake_at(done.next_at)
            return done.sent

    def _wake_at(self, when: datetime | None) -> None:
        """(Re)arm the one retry wake-up; the task calling this may be that wake-up itself."""
        if self._retry is not None and self._retry is not asyncio.current_task():
            self._retry.cancel()
        self._retry = None
        if when is not None and self.bot.storage is not None:
            self._retry = asyncio.create_task(self._retry_at(when), name="follow-retries")

    async def _retry_at(self, when: datetime) -> None:
        # Never sooner than a second from now: a notice another process holds is not a spin.
        clock = notify.clock_of(self.bot)
        await clock.sleep_until(max(when, clock.now() + timedelta(seconds=1)))
        await self.notify_now(queue=False)

    @commands.Cog.listener()
    async def on_corpus_reloaded(self, outcome: Any) -> None:
        if getattr(outcome, "ok", True):
            self._spawn(self.notify_now())

    # -- commands -------------------------------------------------------------------------------

    @follow.command(name="add", description="Get new papers matching a query (DM, or a channel)")
    @app_commands.describe(
        query='Search words; "a phrase", -exclude, author:name, venue:icml, year:2026 work',
        channel="Post in this channel instead of your DMs (needs Manage Server)",
    )
    async def add(
        self,
        interaction: discord.Interaction[PaperBot],
        query: app_commands.Range[str, 1, QUERY_MAX],
        channel: discord.TextChannel | None = None,
    ) -> None:
        query = " ".join(query.split())
        stored_text(query, "the query", WORDS)
        if not query:
            raise EmptyQuery()
        self.bot.engine.search(query, limit=1)  # bad syntax or venue: a clear message, nothing kept
        follows = self._follows()
        if channel is not None:
            if installs.outside(interaction):  # a user install here: the bot cannot post
                raise library.Refused(
                    "Channel follows need the bot in this server; follow without a channel "
                    "to get the papers by DM."
                )
            await manager_only(interaction)
            assert interaction.guild_id is not None
            limit = self.bot.settings.library.follows_per_server
            full = (
                f"This server already has {limit} channel follows, the most allowed. "
                "Remove one with /follow remove first."
            )
        else:
            limit = self.bot.settings.library.follows_per_user
            full = (
                f"You already follow {limit} queries, the most allowed. "
                "Remove one with /follow remove first."
            )
        try:  # counted and stored in one transaction: concurrent adds keep the limit
            made = await follows.add(
                interaction.user.id,
                query,
                now=library.now(),
                channel=(interaction.guild_id, channel.id)
                if channel is not None and interaction.guild_id is not None
                else None,
                limit=limit,
            )
        except TooManyFollows as exc:
            raise library.Refused(full) from exc
        except AlreadyFollowed as exc:
            raise library.Refused(
                f"Already followed: `{exc.follow.follow_id}` {markdown.escape(query)}."
            ) from exc
        where = channel.mention if channel is not None else "your DMs"
        text = (
            f"Following **{markdown.escape(query)}** (`{made.follow_id}`): new papers that match "
            f"will be posted in {where} when the corpus grows."
        )
        if channel is None:
            text += " Keep DMs from this server's members open, or the follow stops."
        await respond.confirm(interaction, text)

    @follow.command(name="list", description="Your follows and this server's channel follows")
    async def list_(self, interaction: discord.Interaction[PaperBot]) -> None:
        follows = self._follows()
        mine = await follows.personal(interaction.user.id)
        server = []
        if interaction.guild_id is not None:
            server = await follows.of_guild(interaction.guild_id)
        waiting = await follows.outbox.waiting([f.follow_id for f in (*mine, *server)])
        embeds = [follows_embed(mine, "🔔 Your follows", waiting=waiting)]
        if server:
            embeds.append(
                follows_embed(server, "🔔 This server's channel follows", waiting=waiting)
            )
        await respond.send(interaction, embeds=embeds, ephemeral=True)

    @follow.command(name="remove", description="Stop a follow")
    @app_commands.describe(follow="The follow (start typing its query)")
    @app_commands.autocomplete(follow=follow_autocomplete)
    async def remove(
        self, interaction: discord.Interaction[PaperBot], follow: app_commands.Range[str, 1, 20]
    ) -> None:
        found = await self._owned(interaction, follow)
        await self._follows().remove(found.follow_id)
        title = markdown.escape(notice_title(found))
        await respond.confirm(interaction, f"Stopped following **{title}**.")

    async def _owned(self, interaction: discord.Interaction[PaperBot], ref: str) -> Follow:
        """The follow `ref` names if the member may change it: their own DM follow, or one of
        this server's channel follows for a manager."""
        follows = self._follows()
        stored_text(ref, "the follow id")
        found = await follows.get(ref.strip().strip("`"))
        mine = (
            found is not None and found.channel_id is None and found.user_id == interaction.user.id
        )
        server = (
            found is not None
            and found.channel_id is not None
            and found.guild_id == interaction.guild_id
        )
        if found is None or not (mine or server):
            raise library.Refused(f"No follow {ref!r} of yours. `/follow list` shows them.")
        if server:
            await manager_only(interaction)
        return found

    @follow.command(name="foryou", description="Get your For you papers by DM as they arrive")
    async def foryou(self, interaction: discord.Interaction[PaperBot]) -> None:
        limit = self.bot.settings.library.follows_per_user
        try:
            made = await self._follows().add(
                interaction.user.id, FOR_YOU, now=library.now(), limit=limit
            )
        except TooManyFollows as exc:
            raise library.Refused(
                f"You already follow {limit} queries, the most allowed. Remove one first."
            ) from exc
        except AlreadyFollowed as exc:
            raise library.Refused(
                f"Your For you feed is on already (`{exc.follow.follow_id}`)."
            ) from exc
        await respond.confirm(
            interaction,
            f"For you by DM is on (`{made.follow_id}`): new papers ranked for you from what you "
            "save and rate 👍 / 👎. `/follow tune` sets how often and how many.",
        )

    @follow.command(name="tune", description="How a follow is delivered: when, how many, what not")
    @app_commands.describe(
        follow="The follow (start typing its query)",
        frequency="After each refresh (default), daily, or weekly",
        time="Daily or weekly at this time, 24-hour HH:MM (default 09:00)",
        day="Weekly on this day (default monday)",
        timezone="IANA time zone for the time, e.g. Europe/Paris (default UTC)",
        cap="Papers in one message; the rest behind ▶ (1-10, default 10)",
        exclude="Leave out papers with these words, e.g. survey benchmark (- to clear)",
        min_score="Quiet unless a paper matches at least this much (0-100%, default 0)",
    )
    @app_commands.choices(
        frequency=[app_commands.Choice(name=f, value=f) for f in FREQUENCIES],
        day=[app_commands.Choice(name=d, value=d) for d in WEEKDAYS],
    )
    @app_commands.autocomplete(follow=follow_autocomplete)
    async def tune(
        self,
        interaction: discord.Interaction[PaperBot],
        follow: app_commands.Range[str, 1, 20],
        frequency: str | None = None,
        time: app_commands.Range[str, 1, 10] | None = None,
        day: str | None = None,
        timezone: app_commands.Range[str, 1, 64] | None = None,
        cap: app_commands.Range[int, 1, CAP_MAX] | None = None,
        exclude: app_commands.Range[str, 1, EXCLUDE_MAX] | None = None,
        min_score: app_commands.Range[int, 0, 100] | None = None,
    ) -> None:
        found = await self._owned(interaction, follow)
        for text, what in (
            (time, "the time"),
            (timezone, "the time zone"),
            (exclude, "the exclude option"),
        ):
            if text is not None:
                stored_text(text, what)
        feeds = Feeds(self._follows().storage)
        current = await feeds.get(found.follow_id, found.user_id)
        try:
            settings = tuned(
                current,
                frequency=frequency,
                at_time=time,
                weekday=day,
                timezone=timezone,
                cap=cap,
                exclude=None if exclude is None else ("" if exclude.strip() == "-" else exclude),
                min_score=min_score,
            )
        except FeedError as exc:
            raise library.Refused(str(exc)) from exc
        await feeds.put(settings, library.now())
        title = markdown.escape(notice_title(found))
        await respond.confirm(interaction, f"**{title}**: {markdown.escape(settings.describe())}.")


async def setup(bot: PaperBot) -> None:
    await bot.add_cog(FollowsCog(bot))

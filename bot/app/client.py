"""The bot: a `commands.AutoShardedBot` whose `setup_hook` loads the index, storage and cogs.

Follows discord.py's examples/advanced_startup.py: everything async is prepared in
`setup_hook` (before the gateway connects), never in `on_ready`, which fires again on every
reconnect. Commands are pushed to Discord only when their payload changed: the hash of the
last synced payload is kept in storage, so restarts do not spend the tight sync rate limit.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib
import json
import logging
import pkgutil
import sqlite3
from collections.abc import Awaitable
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import discord
from discord import app_commands
from discord.ext import commands

import bot.app.exts
from bot.app import installs
from bot.app.identify import IdentifyPacer
from bot.app.refresh import Refresher
from bot.app.reload import Reloader, ReloadOutcome
from bot.app.respond import DEFER_AFTER, watch_database
from bot.app.results import views as results_views
from bot.app.sync import CommandSyncer
from bot.app.workers import off_loop
from bot.config import ConfigError, Settings
from bot.shards import shard_of
from bot.sources.shared import shared_sources

if TYPE_CHECKING:
    from bot.search.engine import SearchEngine
    from bot.storage.store import Storage
    from bot.timing import Clock

log = logging.getLogger(__name__)
T = TypeVar("T")
# Within the 10 s a worker host waits between SIGTERM and SIGKILL: replies in flight get
# SHUTDOWN_GRACE s to finish, then RESTART_NOTICE s to tell their users the bot is restarting.
SHUTDOWN_GRACE = 6.0
RESTART_NOTICE = 2.0
# discord.py names the tasks answering an interaction (2.x: app_commands/tree.py, ui/view.py).
INTERACTION_TASKS = (
    "CommandTree-invoker",
    "discord-ui-view-dispatch-",
    "discord-ui-dynamic-item-",
    "discord.py: on_interaction",
)


async def drain_interactions(timeout: float) -> int:
    """Wait up to `timeout` s for the tasks answering interactions; returns how many were left.

    discord.py starts one task per interaction and keeps no list of them, so they are found by
    the names it gives them (discord.py 2.x's, listed in `INTERACTION_TASKS`).
    """
    current = asyncio.current_task()
    pending = {
        t
        for t in asyncio.all_tasks()
        if t is not current and not t.done() and t.get_name().startswith(INTERACTION_TASKS)
    }
    if not pending:
        return 0
    log.info("waiting for %d interaction(s) to finish before closing", len(pending))
    _done, left = await asyncio.wait(pending, timeout=timeout)
    if left:
        log.warning("closing with %d interaction(s) still running after %.1f s", len(left), timeout)
    return len(left)


def cog_modules() -> list[str]:
    """Every feature package in bot/app/exts (each has `async def setup(bot)`), by name."""
    return sorted(
        f"{bot.app.exts.__name__}.{m.name}"
        for m in pkgutil.iter_modules(bot.app.exts.__path__)
        if not m.name.startswith("_")
    )


@functools.cache
def dynamic_items() -> tuple[type[discord.ui.DynamicItem[Any]], ...]:
    """Every persistent component: the result views' and each feature package's `ITEMS`.
    Found once per process (the errors cog asks on every click it may have to answer).
    Registered whichever extensions load, so a button under an old message always answers
    (a feature that failed to load answers with its error, not with silence)."""
    found: list[type[discord.ui.DynamicItem[Any]]] = list(results_views.ITEMS)
    for name in cog_modules():
        found.extend(getattr(importlib.import_module(name), "ITEMS", ()))
    return tuple(found)


class PaperTree(app_commands.CommandTree["PaperBot"]):
    """The command tree: every command and autocomplete is watched from its first instant.

    Why here: a command may read the database before anything answers it (the server's default
    venue read by /search, a library page), and a locked table once held such commands past
    Discord's 3 s. `interaction_check` runs first in the task that answers the interaction, so
    the watch (`bot.app.respond.watch_database`) covers every database call made for it.
    """

    async def interaction_check(self, interaction: discord.Interaction[PaperBot], /) -> bool:
        watch_database(interaction)
        return True


class PaperBot(commands.AutoShardedBot):
    """Shared state for cogs: `settings`, `engine` (SearchEngine) and `storage` (or None)."""

    def __init__(
        self,
        settings: Settings,
        *,
        engine: SearchEngine | None = None,
        storage: Storage | None = None,
        force_sync: bool = False,
        extensions: list[str] | None = None,
        **options: Any,
    ) -> None:
        intents = discord.Intents.default()  # no privileged intent: slash commands need none
        # Link replies read messages: Message Content only when [links] replies asks for it.
        intents.message_content = settings.links.replies
        # The bot never joins voice: don't warn at every start that voice libraries are missing.
        discord.VoiceClient.warn_nacl = False
        discord.VoiceClient.warn_dave = False
        owners = set(settings.secrets.owner_ids)
        options.setdefault("shard_count", settings.discord.shard_count or None)
        if settings.discord.shard_ids:  # one range of the bot's shards (SHARD_IDS)
            options.setdefault("shard_ids", list(settings.discord.shard_ids))
        # Nothing the bot sends pings anyone unless a call asks for it: paper text could hold
        # @everyone or <@&role>, and a shared reply names its sharer without a ping.
        options.setdefault("allowed_mentions", discord.AllowedMentions.none())
        # Commands not marked `installs.anywhere` / `server_only`: guild install, server + bot DM.
        options.setdefault("allowed_installs", installs.TREE_INSTALLS)
        options.setdefault("allowed_contexts", installs.TREE_CONTEXTS)
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=intents,
            help_command=None,
            owner_ids=owners or None,
            tree_cls=PaperTree,
            **options,
        )
        self.settings = settings
        self.engine: SearchEngine = engine  # type: ignore[assignment]  # set in setup_hook
        self.storage: Storage | None = storage
        self._owns_storage = storage is None
        self.force_sync = force_sync
        self.extensions_to_load = extensions if extensions is not None else cog_modules()
        self.failed_extensions: dict[str, str] = {}
        # Sync runs in the background so a rate-limited or refused sync never keeps the bot
        # offline or takes it down (bot.app.sync); /sync reports its status.
        self.syncer = CommandSyncer(self)
        self.sync_guild_refused = False  # DISCORD_GUILD_ID names a server the bot is not in
        self._meta: dict[str, str] = {}  # command hashes when there is no storage
        # The daily scheduler's clock; None is real time (a stepped clock can be injected).
        self.clock: Clock | None = None
        # Seconds of work before an interaction is deferred ("thinking…"); see respond.soon.
        self.defer_after = DEFER_AFTER
        # Live corpus reload (/admin reload, SIGHUP): swaps `self.engine`; see bot.app.reload.
        self.reloader = Reloader(self)
        self.reloader.on_swap.append(self._announce_reload)
        # Scheduled fetches of [sources] (bot/app/refresh.py); swaps through the reloader.
        self.refresher = Refresher(self)
        # Seconds close() waits for interactions already being answered (SIGTERM).
        self.shutdown_grace = SHUTDOWN_GRACE
        self._shutdown_task: asyncio.Task[None] | None = None
        # Set when close() begins: loading, logging in and connecting stop waiting for what
        # they wait for (`until_stopping`).
        self.stopping = asyncio.Event()
        # Set when the grace is over: work still running answers "restarting" (bot.app.respond).
        self.restarting = asyncio.Event()
        # IDENTIFYs paced by Discord's session start limit, not a flat 5 s (bot.app.identify).
        self.identify_pacer = IdentifyPacer(self._max_concurrency)

    def owns_guild(self, guild_id: int) -> bool:
        """Whether this process serves `guild_id`: its shard is one of `shard_ids`.

        Work that is not a reply to an event (the paper of the day) asks this, so each process
        of a sharded bot does it only for the servers Discord routes to it. Read at call time:
        without a shard count in the settings, discord.py learns it from Discord at connect.
        """
        if self.shard_ids is None or not self.shard_count:
            return True
        return shard_of(guild_id, self.shard_count) in self.shard_ids

    async def _max_concurrency(self) -> int:
        return (await self.fetch_session_start_limits()).max_concurrency

    async def until_stopping(self, work: Awaitable[T]) -> asyncio.Future[T] | None:
        """`work` run to its end (the done future), or cancelled once a stop begins (None).

        Why: discord.py waits for Discord without minding a stop. It retries a failed shard
        connect every 5 s for ever, sleeps its reconnect backoff (up to 1024 s) and a 429's
        Retry-After, and waits up to 60 s for a RESUME's connection, all in the task `start`
        runs. A SIGTERM in any of them was heard only when the wait ended (issue 26.14).
        """
        task = asyncio.ensure_future(work)
        stopped = asyncio.ensure_future(self.stopping.wait())
        try:
            await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        return None if task.cancelled() else task

    async def login(self, token: str) -> None:
        """discord.py's login (REST: the bot user, the application, then `setup_hook`),
        given up when a stop begins: Discord may be rate-limiting or not answering."""
        done = await self.until_stopping(super().login(token))
        if done is not None:
            done.result()

    async def connect(self, *, reconnect: bool = True) -> None:
        """discord.py's connection loop (shards connecting, reconnecting, resuming), ended
        when a stop begins; `close` then closes the shards and answers what is in flight."""
        done = await self.until_stopping(super().connect(reconnect=reconnect))
        if done is not None:
            done.result()

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """Wait only as long as this shard's IDENTIFY bucket needs (see bot.app.identify)."""
        waited = await self.identify_pacer.wait(shard_id)
        if waited:
            log.info("shard %s waited %.1f s to IDENTIFY (session start limit)", shard_id, waited)

    async def load_engine(self) -> bool:
        """Load the corpus and index before connecting; False when a stop signal came first.

        Why before `start`: a corpus that cannot be served is reported (CorpusError) without
        ever logging in, and a SIGTERM during a long index build ends the process at once
        (the build runs in a daemon thread that dies with it) instead of after the build.
        """
        if self.engine is not None:
            return True
        from bot.search.engine import SearchEngine

        load = await self.until_stopping(off_loop(SearchEngine.load, self.settings))
        if load is None:
            log.info("stopped while loading the corpus")
            return False
        self.engine = load.result()
        return True

    def _announce_reload(self, outcome: ReloadOutcome) -> None:
        """Events for cogs: `on_corpus_reloaded(outcome)` on every swap, and
        `on_papers_added(paper_ids, source)` when the new corpus has papers the old one had not
        (a source refresh, or an edited corpus file) - the hook for anything that announces them."""
        self.dispatch("corpus_reloaded", outcome)
        if outcome.added:
            self.dispatch("papers_added", outcome.added, outcome.source)

    async def setup_hook(self) -> None:
        if self.engine is None:
            from bot.search.engine import SearchEngine

            self.engine = await off_loop(SearchEngine.load, self.settings)
        if self.storage is None:
            self.storage = await self._open_storage()
        self.add_dynamic_items(*dynamic_items())
        for name in self.extensions_to_load:
            try:
                await self.load_extension(name)
            except commands.ExtensionError as exc:
                # One broken feature must not take search down with it; the log says why.
                log.exception("could not load %s", name)
                self.failed_extensions[name] = str(exc)
        self.syncer.start(force=self.force_sync)
        self.refresher.shared = shared_sources(self.storage, self.settings.sources)
        self.refresher.start()

    async def wait_until_synced(self, timeout: float | None = None) -> bool:
        """True once the background command sync has finished (synced, refused or failed)."""
        return await self.syncer.wait(timeout)

    async def _open_storage(self) -> Storage | None:
        """The configured database, or a StorageError that stops the start.

        Never a start without it: the paper of the day would vanish from Discord with one log
        line, and schedules would seem lost (issue 12.4). The error says what is wrong and how
        to restore a backup.
        """
        from bot.storage.schema import StorageError
        from bot.storage.store import Storage

        try:
            storage = self.settings.storage
            return await Storage.open(storage.database, timeout=storage.timeout_seconds)
        except StorageError:
            raise
        except (OSError, sqlite3.Error, ConfigError) as exc:
            raise StorageError(f"cannot open the database: {exc}") from exc

    async def close(self) -> None:
        """Graceful stop: gateway first, then in-flight replies, then HTTP, then storage.

        Why this order: closing the gateway stops new interactions arriving; replies already
        being computed still need the HTTP session, which discord.py's close() shuts at once,
        so they are awaited first (at most `shutdown_grace` s). Storage closes last: its one
        connection is closed on the database thread after every queued write, which also
        checkpoints the WAL into the database file.
        """
        self.stopping.set()
        if self._shutdown_task is None:
            self._shutdown_task = asyncio.ensure_future(self._shutdown())
        await asyncio.shield(self._shutdown_task)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # discord.py's waits only for its own close (gateway, HTTP) once one has begun; ours
        # goes on to the database, which the process must not leave before it is closed.
        await self.close()

    async def _shutdown(self) -> None:
        await self.syncer.stop()
        await self.refresher.stop()
        for shard in self.shards.values():
            if not shard.is_closed():
                await shard.disconnect()
        if await drain_interactions(self.shutdown_grace):
            self.restarting.set()
            await drain_interactions(RESTART_NOTICE)
        await super().close()
        if self.storage is not None and self._owns_storage:
            await self.storage.close()
            self.storage = None

    # -- command sync -----------------------------------------------------------------------

    def sync_target(self) -> discord.Object | None:
        guild_id = self.settings.secrets.guild_id
        return discord.Object(id=guild_id) if guild_id and not self.sync_guild_refused else None

    def command_payload(self, guild: discord.abc.Snowflake | None) -> list[dict[str, Any]]:
        """What `tree.sync(guild=guild)` would send, in a stable order."""
        commands_ = self.tree.get_commands(guild=guild)
        return sorted(
            (c.to_dict(self.tree) for c in commands_), key=lambda d: (d.get("type", 1), d["name"])
        )

    async def _get_meta(self, key: str) -> str | None:
        if self.storage is not None:
            return await self.storage.get_meta(key)
        return self._meta.get(key)

    async def _set_meta(self, key: str, value: str) -> None:
        if self.storage is not None:
            await self.storage.set_meta(key, value)
        else:
            self._meta[key] = value

    async def sync_commands(
        self, *, force: bool = False, guild: discord.abc.Snowflake | None = None
    ) -> tuple[int, str]:
        """Sync to `guild`, else DISCORD_GUILD_ID, else globally; skip if the hash matches.

        Returns (commands in the payload, where). A guild target gets the global commands
        copied to it, so they appear at once instead of after Discord's global propagation.
        """
        target = guild or self.sync_target()
        if target is not None:
            self.tree.copy_global_to(guild=target)
        where = f"guild {target.id}" if target else "global"
        payload = self.command_payload(target)
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
        key = f"commands_hash:{self.application_id}:{where.replace(' ', ':')}"
        if not force and await self._get_meta(key) == digest:
            log.info("application commands unchanged (%s): not syncing", where)
            return len(payload), where
        synced = await self.tree.sync(guild=target)
        await self._set_meta(key, digest)
        log.info("synced %d application commands (%s)", len(synced), where)
        return len(synced), where

    async def on_ready(self) -> None:
        # Only a log line: on_ready fires again after every reconnect, so no work belongs here.
        log.info("ready as %s in %d servers", self.user, len(self.guilds))

"""`python -m bot`: settings, logging, then the Discord bot, or the console without a token.

The token is read from DISCORD_TOKEN (environment, or .env in the project folder). It is never
printed: discord.py does not log it, and as a second guard (`bot.logs`) every log handler is
wrapped in a formatter that replaces it with "[token]" should it reach a message or traceback.
"""

from __future__ import annotations

import asyncio
import faulthandler
import ipaddress
import logging
import os
import signal
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import aiohttp
import discord
import yarl

from bot.config import ConfigError, Settings
from bot.papers.corpus import CorpusError
from bot.search.index.workers import stop_workers

if TYPE_CHECKING:
    from bot.app.client import PaperBot
    from bot.storage.store import Storage

log = logging.getLogger(__name__)
# Exit codes of `python -m bot` (README "Exit codes"): a supervisor can tell a bad token from a
# network outage (retry later) without reading the log.
EXIT_OK = 0
EXIT_CONFIG = 1  # settings problem
EXIT_CORPUS = 2  # the corpus is unusable (argparse also exits 2 on a bad command line)
EXIT_TOKEN = 3  # Discord rejected DISCORD_TOKEN
EXIT_INTENTS = 4  # Discord refused a privileged intent
EXIT_UNREACHABLE = 5  # Discord could not be reached (refused, timed out, TLS)
EXIT_DNS = 6  # Discord's host name could not be resolved
EXIT_STORAGE = 7  # the database is damaged, unreachable, or would not survive a restart
FORCE_SYNC_ENV = "PAPERBOT_FORCE_SYNC"
ALLOW_EPHEMERAL_ENV = "PAPERBOT_ALLOW_EPHEMERAL_SQLITE"
SERVICE_ENV = "PAPERBOT_SERVICE"
# Testing hook: point discord.py at a loopback Discord stand-in (see apply_test_endpoints).
API_BASE_ENV = "PAPERBOT_API_BASE"  # e.g. http://127.0.0.1:8123/api/v10
GATEWAY_ENV = "PAPERBOT_GATEWAY_URL"  # e.g. ws://127.0.0.1:8123/gateway-ws

TOKEN_HELP = """\
DISCORD_TOKEN is not set, so the bot cannot connect to Discord.

To run it in your server:
  1. https://discord.com/developers/applications -> New Application -> Bot -> Reset Token;
     copy the token.
  2. Put it in {env} as the line   DISCORD_TOKEN=<the token>
     (or export DISCORD_TOKEN in the environment; never commit it).
  3. Invite the bot: OAuth2 -> URL Generator, scopes "bot" and "applications.commands",
     permissions View Channels, Send Messages, Embed Links, Read Message History,
     Create Public Threads (the daily post uses the last three); open the URL it gives.
  4. Optional: DISCORD_GUILD_ID=<your server id> shows the commands in that server at once
     (Discord settings -> Advanced -> Developer Mode, then right-click the server -> Copy ID).
  Then run again: python -m bot

Meanwhile, a local console serves the same commands as text (try: /search optimal transport).
"""


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def _loopback(url: str) -> bool:
    host = yarl.URL(url).host or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def apply_test_endpoints(env: dict[str, str] | None = None) -> bool:
    """Honour PAPERBOT_API_BASE / PAPERBOT_GATEWAY_URL, a hook for tests only.

    They point discord.py's REST base and gateway at a stand-in; only loopback addresses are
    accepted, so a stray variable can never send the token to another machine.
    """
    env = dict(os.environ if env is None else env)
    api, gateway = env.get(API_BASE_ENV, "").strip(), env.get(GATEWAY_ENV, "").strip()
    if not api and not gateway:
        return False
    for name, url in ((API_BASE_ENV, api), (GATEWAY_ENV, gateway)):
        if not url or not _loopback(url):
            raise ConfigError(
                f"{name} is a testing hook: both it and the other must be set, to "
                "a loopback address (127.0.0.1, ::1 or localhost)"
            )
    from discord.gateway import DiscordWebSocket
    from discord.http import Route

    Route.BASE = api.rstrip("/")
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway)
    log.warning("testing hook: Discord API at %s, gateway at %s", api, gateway)
    return True


# discord.py's lines for a failed gateway connect (`discord.shard`: a shard's first connect,
# and each reconnect), each logged with the whole traceback.
RECONNECT_MESSAGES = ("Attempting a reconnect", "Failed to connect for shard_id")


class OneLineReconnects(logging.Filter):
    """Logs each failed gateway connect as discord.py's line plus its cause, no traceback.

    Why: discord.py retries for as long as an outage lasts, and each attempt printed a full
    traceback (18 in one outage, issue 26.14) that buried the lines that matter. The cause
    (`_reason`: what could not be reached, and why) is all those tracebacks said.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.msg
        if not record.exc_info or not isinstance(message, str):
            return True
        if message.startswith(RECONNECT_MESSAGES) and isinstance(record.args, tuple):
            error = record.exc_info[1]
            if error is not None:
                record.msg = message + " (%s)"
                record.args = (*record.args, _reason(error))
            record.exc_info = None
            record.exc_text = None
        return True


ONE_LINE_RECONNECTS = OneLineReconnects()


def install_signal_handlers(bot: PaperBot) -> list[signal.Signals]:
    """SIGTERM/SIGINT close the bot gracefully; SIGHUP reloads the corpus in the background.

    Returns the signals handled (none where the loop cannot take signal handlers: Windows).
    """
    loop = asyncio.get_running_loop()
    stopping: list[asyncio.Future[None]] = []

    def stop(sig: signal.Signals) -> None:
        if stopping:
            return
        log.info("%s received: closing the gateway, finishing replies, closing storage", sig.name)
        # An index build (start, reload) is dropped at once: its forked workers are killed,
        # which frees the cores for the replies still in flight (bot.search.index.workers).
        if stop_workers():
            log.info("index build stopped")
        stopping.append(asyncio.ensure_future(bot.close()))

    def reload(sig: signal.Signals) -> None:
        bot.reloader.request(sig.name)

    handled = []
    wanted = [(signal.SIGTERM, stop), (signal.SIGINT, stop)]
    if hasattr(signal, "SIGHUP"):
        wanted.append((signal.SIGHUP, reload))
    for sig, handler in wanted:
        try:
            loop.add_signal_handler(sig, handler, sig)
        except (NotImplementedError, RuntimeError, ValueError):
            continue
        handled.append(sig)
    return handled


async def serve(
    settings: Settings,
    token: str,
    *,
    force_sync: bool = False,
    corpus_files: Sequence[Path] | None = None,
) -> None:
    from bot.app.client import PaperBot

    bot = PaperBot(settings, force_sync=force_sync)
    bot.reloader.corpus_files = tuple(corpus_files or ())  # --corpus wins on reload too
    install_signal_handlers(bot)
    backups: asyncio.Future[None] | None = None
    try:
        async with bot:
            if not await bot.load_engine():
                return
            # The database before Discord: a damaged file or an unreachable server stops the
            # start here (PaperBot._open_storage says why never without it). After the index
            # build, whose worker processes must not be forked while a database thread runs.
            bot.storage = await bot._open_storage()
            if bot.storage is not None:
                backups = asyncio.ensure_future(rolling_backup(bot, bot.storage, settings))
            await bot.start(token)
    finally:
        if backups is not None:
            backups.cancel()
            await asyncio.gather(backups, return_exceptions=True)


async def rolling_backup(bot: PaperBot, storage: Storage, settings: Settings) -> None:
    """SQLite only: a backup through SQLite's backup API whenever the newest is `backup_hours`
    old, keeping `backup_keep`, so a damaged file loses at most that much (issue 12.4).

    The first one waits until the bot is connected: never during the index build, whose worker
    processes are forked (a fork while this thread works can leave a child stuck on a lock).
    """
    from bot.storage import admin
    from bot.storage.schema import StorageError

    if storage.dialect != "sqlite" or storage.display == ":memory:":
        return
    await bot.wait_until_ready()
    conf = settings.storage
    while True:
        now = datetime.now(UTC)
        if admin.backup_due(conf, now):
            try:
                await admin.backup(storage, conf.backup_dir, conf.backup_keep, now)
            except (OSError, StorageError) as exc:
                log.error("database backup to %s failed: %s", conf.backup_dir, exc)
        await asyncio.sleep(min(conf.backup_hours * 3600, 3600.0))


def unattended_host(stdin: TextIO, env: dict[str, str] | None = None) -> str | None:
    """What says this process is a service nobody types into, or None.

    A worker dyno (`DYNO`) or an image or unit that sets PAPERBOT_SERVICE=1, with stdin not a
    terminal: there the token-less console would read end of input and exit 0 at once. A
    terminal (`heroku run`, `docker run -it`) still gets the console.
    """
    env = dict(os.environ if env is None else env)
    if stdin.isatty():
        return None
    if env.get("DYNO"):
        return f"DYNO={env['DYNO']}"
    if _truthy(env.get(SERVICE_ENV)):
        return f"{SERVICE_ENV}=1"
    return None


def ephemeral_disk_problem(settings: Settings, env: dict[str, str] | None = None) -> str | None:
    """Why this host would lose the SQLite file at each restart, or None.

    A Heroku-style dyno (`DYNO` set) has an ephemeral disk: SQLite there forgets every schedule
    daily. PAPERBOT_ALLOW_EPHEMERAL_SQLITE=1 overrides (a quick trial).
    """
    from bot.storage.urls import parse_database_url

    env = dict(os.environ if env is None else env)
    if not env.get("DYNO") or _truthy(env.get(ALLOW_EPHEMERAL_ENV)):
        return None
    if parse_database_url(settings.storage.database).dialect != "sqlite":
        return None
    return (
        f"this host's disk is ephemeral (DYNO={env['DYNO']}): a SQLite database would lose "
        "every schedule at each restart. Attach PostgreSQL and set DATABASE_URL "
        f"(e.g. heroku addons:create heroku-postgresql), or set {ALLOW_EPHEMERAL_ENV}=1 to "
        "run anyway."
    )


def run_bot(
    settings: Settings, token: str, err: TextIO, *, corpus_files: Sequence[Path] | None = None
) -> int:
    from bot.storage.schema import StorageError

    force = _truthy(os.environ.get(FORCE_SYNC_ENV))
    try:
        apply_test_endpoints()
    except ConfigError as exc:
        err.write(f"error: {exc}\n")
        return EXIT_CONFIG
    problem = ephemeral_disk_problem(settings)
    if problem:
        err.write(f"error: {problem}\n")
        return EXIT_STORAGE
    if hasattr(signal, "SIGUSR1"):
        # `kill -USR1 <pid>`: every thread's stack on stderr, for a process that seems stuck.
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    logging.getLogger("discord.shard").addFilter(ONE_LINE_RECONNECTS)
    try:
        asyncio.run(serve(settings, token, force_sync=force, corpus_files=corpus_files))
    except CorpusError as exc:
        err.write(f"error: {exc}\n")
        return EXIT_CORPUS
    except StorageError as exc:
        err.write(f"error: {exc}\n")
        return EXIT_STORAGE
    except discord.LoginFailure:
        err.write(
            "error: Discord rejected DISCORD_TOKEN. Reset the token in the developer "
            "portal (Bot -> Reset Token) and update .env.\n"
        )
        return EXIT_TOKEN
    except discord.PrivilegedIntentsRequired:
        err.write(
            "error: Discord refused an intent this bot asked for; check the Bot page of "
            "the developer portal.\n"
        )
        return EXIT_INTENTS
    except aiohttp.ClientConnectorDNSError as exc:
        err.write(
            f"error: cannot resolve {exc.host} (DNS failure): check the network or DNS "
            "settings of this machine, then start again.\n"
        )
        return EXIT_DNS
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        err.write(
            f"error: cannot reach Discord ({_reason(exc)}): check the network, a firewall "
            "or a proxy, then start again.\n"
        )
        return EXIT_UNREACHABLE
    except KeyboardInterrupt:
        return EXIT_OK
    return EXIT_OK


def _reason(exc: BaseException) -> str:
    """A short cause for an unreachable Discord, without the traceback."""
    if isinstance(exc, aiohttp.ClientConnectorError):
        return f"{exc.host}:{exc.port}: {exc.strerror or exc.os_error}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__

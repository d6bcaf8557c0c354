"""`python -m bot --check`: load config, corpus and every cog without connecting; exit 0 or 1.

Why: CI (and a deploy script, before restarting the worker) should learn that a settings
typo, a broken corpus file or a cog that fails to import would take the bot down, without a
token and without Discord. Every cog is loaded into a real `PaperBot` that never logs in (the
storage it sees is in memory), and the command tree is serialised as a sync would send it and
checked against Discord's registration rules (bot.app.commandcheck), which Discord would
otherwise enforce by refusing the whole sync.
The token is only reported as set or not, never shown.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import TYPE_CHECKING, TextIO

from discord.ext import commands

from bot.app.commandcheck import check_commands
from bot.config import ConfigError, Settings, settings_for
from bot.logs import redact, setup_logging
from bot.papers.corpus import CorpusError
from bot.search.ranking import kernel
from bot.shards import describe as describe_shards

if TYPE_CHECKING:
    from bot.search.engine import SearchEngine

log = logging.getLogger(__name__)


async def _check_cogs(settings: Settings, engine: SearchEngine, out: TextIO) -> list[str]:
    """Load every cog module into an offline bot; the problems found (empty when fine)."""
    from bot.app.client import PaperBot, cog_modules
    from bot.storage.store import Storage

    problems: list[str] = []
    storage = await Storage.open(":memory:")
    bot = PaperBot(settings, engine=engine, storage=storage, shard_count=1)
    try:
        async with bot:  # prepares the client's loop state; leaving closes it, offline
            for name in cog_modules():
                try:
                    await bot.load_extension(name)
                except commands.ExtensionError as exc:  # wraps whatever the cog raised
                    cause = exc.__cause__ or exc
                    problems.append(f"cog {name}: {type(cause).__name__}: {cause}")
            try:
                payload = bot.command_payload(None)
            except Exception as exc:  # noqa: BLE001 - any definition a sync would choke on
                problems.append(f"commands: {type(exc).__name__}: {exc}")
            else:
                problems += [f"command {p}" for p in check_commands(payload)]
                names = ", ".join(sorted(f"/{c['name']}" for c in payload))
                out.write(
                    f"ok   cogs: {len(bot.extensions)} loaded; {len(payload)} commands ({names})\n"
                )
            for name in list(bot.extensions):
                await bot.unload_extension(name)  # stops any task a cog started
    finally:
        await storage.close()
    return problems


def run_check(settings: Settings, out: TextIO) -> int:
    """Check an already-read configuration; 0 when the bot could start, else 1."""
    from bot.search.engine import SearchEngine
    from bot.storage import admin
    from bot.storage.schema import StorageError

    problems: list[str] = []
    source = settings.source or "built-in defaults"
    out.write(f"ok   settings: {source}\n")
    secrets = settings.secrets
    from bot.app.runner import unattended_host

    host = None if secrets.discord_token else unattended_host(sys.stdin)
    if secrets.discord_token:
        token = "set"
    elif host:
        token = f"not set (this runs as a service, {host}: the bot will stop until it is set)"
    else:
        token = "not set (the console would start instead)"
    out.write(f"ok   DISCORD_TOKEN: {token}\n")
    shards = settings.discord
    out.write(f"ok   shards: {describe_shards(shards.shard_count, shards.shard_ids)}\n")
    try:
        report = asyncio.run(admin.check(settings.storage.database))
        out.write(f"ok   storage: {' / '.join(report.lines())}\n")
    except (ConfigError, StorageError) as exc:
        problems.append(f"storage: {exc}")
    engine: SearchEngine | None = None
    try:
        engine = SearchEngine.load(settings)
    except (CorpusError, ConfigError, OSError, ValueError) as exc:
        problems.append(f"corpus: {exc}")
    else:
        skipped = len(engine.load_report.problems) if engine.load_report else 0
        out.write(
            f"ok   corpus: {len(engine.papers):,} papers from "
            f"{len(settings.corpus.files)} file(s)"
            + (f"; {skipped} bad record(s) skipped (see warnings)" if skipped else "")
            + "\n"
        )
        out.write(f"ok   top-k: {kernel.describe()}\n")
    if engine is not None:
        problems += asyncio.run(_check_cogs(settings, engine, out))
    for problem in problems:
        out.write(f"FAIL {problem}\n")
    out.write("check passed\n" if not problems else f"check failed: {len(problems)} problem(s)\n")
    return 0 if not problems else 1


def main(args: argparse.Namespace, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    setup_logging(logging.INFO if getattr(args, "verbose", False) else logging.WARNING, stream=err)
    try:
        settings = settings_for(args)
    except ConfigError as exc:
        out.write(f"FAIL settings: {exc}\ncheck failed: 1 problem(s)\n")
        return 1
    redact([settings.secrets.discord_token or ""])  # the token stays out of any warning line
    return run_check(settings, out)

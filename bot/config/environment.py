"""What the environment (or .env) supplies: the secrets, and overrides of settings.toml.

Secrets never live in settings.toml; their values are never repeated in an error, because a
token pasted into the wrong variable must not end up in a terminal or a log.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from bot.config.sections import ConfigError, DiscordSettings, Secrets
from bot.shards import (
    SHARD_COUNT_ENV,
    SHARD_IDS_ENV,
    ShardError,
    check_shards,
    parse_count,
    parse_ids,
)

DATABASE_URL_ENV = "DATABASE_URL"
# [sources] keys a variable overrides (a test's loopback stand-in, a mirror).
URL_ENV = {"openreview_url": "PAPERBOT_OPENREVIEW_URL", "arxiv_url": "PAPERBOT_ARXIV_URL"}


def _discord_id(name: str, raw: str) -> int:
    """A Discord id (snowflake) from the environment.

    The value is never repeated in the error: these variables sit next to the token, and a
    token pasted into the wrong one must not end up in a terminal or a log. Only ASCII digits
    count (`str.isdigit` also accepts `²`, which `int` then refuses with a traceback).
    """
    if not (raw.isascii() and raw.isdigit()) or not 0 < int(raw) < 2**64:
        raise ConfigError(
            f"{name} must be a Discord id: digits 0-9 only, e.g. 1234567890123456789 "
            f"(the value is not shown, in case it is a secret)"
        )
    return int(raw)


def _int_env(env: dict[str, str], name: str) -> int | None:
    raw = env.get(name, "").strip()
    return _discord_id(name, raw) if raw else None


def read_secrets(env: dict[str, str] | None = None) -> Secrets:
    env = dict(os.environ if env is None else env)
    token = env.get("DISCORD_TOKEN", "").strip() or None
    owners_raw = env.get("DISCORD_OWNER_IDS", "")
    owners = [
        _discord_id("DISCORD_OWNER_IDS", part) for part in owners_raw.replace(",", " ").split()
    ]
    return Secrets(
        discord_token=token, guild_id=_int_env(env, "DISCORD_GUILD_ID"), owner_ids=tuple(owners)
    )


def read_dotenv(path: Path) -> None:
    """Load `path` (.env) into the environment; a file that is not UTF-8 is a ConfigError.

    Why not just `load_dotenv`: it raises UnicodeDecodeError (a traceback) on a file saved in
    another encoding; the error names the line and never shows its content (a secret).
    """
    from dotenv import load_dotenv

    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from exc
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}:{line}: not UTF-8 text; save the file as UTF-8 (its content is not shown)"
        ) from exc
    load_dotenv(path, override=False, encoding="utf-8")


def with_shards(settings: DiscordSettings, environ: dict[str, str]) -> DiscordSettings:
    """SHARD_COUNT / SHARD_IDS over `[discord] shard_count` / `shard_ids`, checked together."""
    count_raw = environ.get(SHARD_COUNT_ENV, "").strip()
    ids_raw = environ.get(SHARD_IDS_ENV, "").strip()
    names = [
        SHARD_COUNT_ENV if count_raw else "[discord] shard_count",
        SHARD_IDS_ENV if ids_raw else "[discord] shard_ids",
    ]
    try:
        count = parse_count(count_raw) if count_raw else settings.shard_count
        ids = parse_ids(ids_raw) if ids_raw else settings.shard_ids
        checked = check_shards(count, ids, " / ".join(names))
    except ShardError as exc:
        raise ConfigError(str(exc)) from exc
    return replace(settings, shard_count=count, shard_ids=checked)

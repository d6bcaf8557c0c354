"""`load_settings`: settings.toml, then the environment over it, into one `Settings`.

Loading is explicit, never at import time, so each caller can point the bot at its own files
and nothing reads the disk just because a module was imported.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

from bot.config.environment import DATABASE_URL_ENV, read_dotenv, read_secrets, with_shards
from bot.config.paths import DEFAULT_CONFIG, PROJECT_ROOT
from bot.config.sections import SECTIONS, ConfigError, Settings
from bot.config.tables import read_section, read_sources


def settings_for(args: Any) -> Settings:
    """Settings as a command line asked for them: its `--config` file and `--corpus` files."""
    settings = load_settings(getattr(args, "config", None))
    corpus = getattr(args, "corpus", None)
    return settings.with_corpus(corpus) if corpus else settings


def load_settings(
    path: Path | None = None, *, env: dict[str, str] | None = None, dotenv: bool = True
) -> Settings:
    """Read settings from `path` (or PAPERBOT_CONFIG, or config/settings.toml) and secrets.

    `.env` in the project folder is read first when `dotenv` is true; real environment
    variables win over it, as python-dotenv does by default.
    """
    if dotenv and env is None:
        read_dotenv(PROJECT_ROOT / ".env")
    environ = dict(os.environ if env is None else env)
    if path is None:
        override = environ.get("PAPERBOT_CONFIG", "").strip()
        path = Path(override).expanduser() if override else DEFAULT_CONFIG
    raw: dict[str, Any] = {}
    if path.exists():
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: {exc}") from exc
    elif path != DEFAULT_CONFIG:
        raise ConfigError(f"config file not found: {path}")
    base = (
        path.resolve().parent.parent
        if path.resolve().parent.name == "config"
        else path.resolve().parent
    )
    known = [*SECTIONS, "sources"]
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise ConfigError(
            f"{path}: unknown section(s): {', '.join(unknown)}; the sections are "
            + ", ".join(known)
        )
    parts: dict[str, Any] = {
        name: read_section(cls, name, raw.get(name, {}), base) for name, cls in SECTIONS.items()
    }
    sources = read_sources(raw.get("sources", {}), base, environ)
    # A fetched file joins the corpus once it exists (after the first fetch), so a source is
    # configured in one place; a reload re-reads this and picks the new file up.
    listed = parts["corpus"].files
    fetched = tuple(
        dict.fromkeys(j.out for j in sources.fetch if j.out not in listed and j.out.is_file())
    )
    if fetched:
        parts["corpus"] = replace(parts["corpus"], files=listed + fetched)
    database_url = environ.get(DATABASE_URL_ENV, "").strip()
    if database_url:
        parts["storage"] = replace(parts["storage"], database=database_url)
    parts["discord"] = with_shards(parts["discord"], environ)
    return Settings(**parts, sources=sources, secrets=read_secrets(environ), source=path)

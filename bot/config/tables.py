"""One TOML table of settings.toml -> its section dataclass, every value checked.

Each error names the table and key, so a typo in the settings is one clear line, not a
traceback or a default silently used instead.
"""

from __future__ import annotations

import re
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from bot.config.environment import URL_ENV
from bot.config.paths import resolve
from bot.config.sections import (
    RANGES,
    SOURCE_KINDS,
    ConfigError,
    DailySettings,
    FetchJob,
    SourcesSettings,
    check_range,
)

_PATH_KEYS = {("corpus", "files"), ("corpus", "index_dir"), ("storage", "backup_dir")}
# Keys read under another name: `[storage] url` is the documented name of `database`.
_ALIASES = {("storage", "url"): "database"}
_HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


def read_section(cls: type, name: str, raw: dict[str, Any], base: Path) -> Any:
    """`[name]` as a `cls`; relative paths are taken against `base` (the project folder)."""
    raw = {_ALIASES.get((name, key), key): value for key, value in raw.items()}
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise ConfigError(f"[{name}] has unknown key(s): {', '.join(unknown)}")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        default = getattr(cls(), key)
        if (name, key) in _PATH_KEYS:
            if isinstance(default, tuple):
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise ConfigError(f"[{name}] {key} must be a list of paths")
                values[key] = tuple(resolve(base, v) for v in value)
            else:
                if not isinstance(value, str):
                    raise ConfigError(f"[{name}] {key} must be a path")
                values[key] = resolve(base, value)
            continue
        if (
            name == "storage"
            and key == "database"
            and isinstance(value, str)
            and "://" not in value
            and value != ":memory:"
        ):
            value = str(resolve(base, value))
        if isinstance(default, tuple):
            if not isinstance(value, list):
                raise ConfigError(f"[{name}] {key} must be a list")
            value = tuple(value)
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise ConfigError(f"[{name}] {key} must be true or false")
        elif isinstance(default, float):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"[{name}] {key} must be a number")
            value = float(value)
        elif isinstance(default, int):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"[{name}] {key} must be a whole number")
        elif isinstance(default, str) and not isinstance(value, str):
            raise ConfigError(f"[{name}] {key} must be a string")
        if (name, key) in RANGES:
            check_range(name, key, value)
        values[key] = value
    section = cls(**values)
    if isinstance(section, DailySettings | SourcesSettings) and (
        section.retry_max_seconds < section.retry_base_seconds
    ):
        raise ConfigError(f"[{name}] retry_max_seconds must be at least retry_base_seconds")
    return section


def _fetch_job(raw: Any, number: int, base: Path) -> FetchJob:
    where = f"[[sources.fetch]] #{number}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a table")
    known = {f.name for f in fields(FetchJob)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"{where} has unknown key(s): {', '.join(unknown)}")
    kind = raw.get("kind")
    if kind not in SOURCE_KINDS:
        raise ConfigError(f"{where} kind must be one of {', '.join(SOURCE_KINDS)}, got {kind!r}")
    out = raw.get("out")
    if not isinstance(out, str) or not out:
        raise ConfigError(f"{where} needs out = the corpus file to write")
    categories = raw.get("categories", [])
    if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
        raise ConfigError(f"{where} categories must be a list of arXiv categories")
    days = raw.get("days", 7)
    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        raise ConfigError(f"{where} days must be a whole number of days, at least 1")
    venue, url = raw.get("venue", ""), raw.get("url", "")
    if not isinstance(venue, str) or not isinstance(url, str):
        raise ConfigError(f"{where} venue and url must be strings")
    need = {"openreview": venue, "arxiv": categories, "paperlist": url}[kind]
    if not need:
        key = {"openreview": "venue", "arxiv": "categories", "paperlist": "url"}[kind]
        raise ConfigError(f"{where} ({kind}) needs {key}")
    return FetchJob(kind, resolve(base, out), venue, tuple(categories), days, url)


def read_sources(raw: dict[str, Any], base: Path, environ: dict[str, str]) -> SourcesSettings:
    """[sources]: plain keys as every section, [[sources.fetch]] jobs, URL overrides from env."""
    raw = dict(raw)
    jobs = raw.pop("fetch", [])
    if not isinstance(jobs, list):
        raise ConfigError("[[sources.fetch]] must be an array of tables")
    settings = read_section(SourcesSettings, "sources", raw, base)
    bad = [t for t in settings.refresh_at if not isinstance(t, str) or not _HHMM.match(t)]
    if bad:
        raise ConfigError(f"[sources] refresh_at takes UTC times as HH:MM, got {bad[0]!r}")
    overrides = {
        key: environ[env].strip() for key, env in URL_ENV.items() if environ.get(env, "").strip()
    }
    parsed = tuple(_fetch_job(job, n, base) for n, job in enumerate(jobs, start=1))
    result: SourcesSettings = replace(settings, fetch=parsed, **overrides)
    return result

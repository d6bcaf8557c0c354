"""One TOML table of settings.toml -> its section dataclass.

msgspec checks each table against its declaration (bot/config/checking.py); what is left here
is what no single key can say: the `[storage] url` alias, a SQLite path taken against the
project folder, a retry ceiling below its base, a fetch job missing what its kind reads, and
the environment's URL overrides.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from bot.config.checking import convert, convert_list
from bot.config.environment import URL_ENV
from bot.config.paths import resolve
from bot.config.sections import (
    ConfigError,
    DailySettings,
    FetchJob,
    SourcesSettings,
    StorageSettings,
)

T = TypeVar("T")

# Keys read under another name: `[storage] url` is the documented name of `database`.
_ALIASES = {"storage": {"url": "database"}}
# What each kind of fetch job reads.
_NEEDS = {"openreview": "venue", "arxiv": "categories", "paperlist": "url"}


def read_section(cls: type[T], name: str, raw: Any, base: Path) -> T:
    """`[name]` as a `cls`; relative paths are taken against `base` (the project folder)."""
    section = convert(raw, cls, base, f"[{name}]", _ALIASES.get(name))
    if isinstance(section, StorageSettings) and not _is_url(section.database):
        return replace(section, database=str(resolve(base, section.database)))
    if isinstance(section, DailySettings | SourcesSettings) and (
        section.retry_max_seconds < section.retry_base_seconds
    ):
        raise ConfigError(
            f"[{name}] retry_max_seconds = {section.retry_max_seconds} must be at least "
            f"retry_base_seconds = {section.retry_base_seconds}"
        )
    return section


def _is_url(database: str) -> bool:
    return "://" in database or database == ":memory:"


def read_sources(raw: Any, base: Path, environ: dict[str, str]) -> SourcesSettings:
    """[sources]: plain keys as every section, [[sources.fetch]] jobs, URL overrides from env."""
    jobs: Any = []
    if isinstance(raw, dict):
        raw = dict(raw)
        jobs = raw.pop("fetch", [])
    settings = read_section(SourcesSettings, "sources", raw, base)
    parsed = convert_list(jobs, FetchJob, base, "[[sources.fetch]]")
    for number, job in enumerate(parsed, start=1):
        key = _NEEDS[job.kind]
        if not getattr(job, key):
            raise ConfigError(f"[[sources.fetch]] #{number} ({job.kind}) needs {key}")
    overrides: dict[str, Any] = {
        key: environ[env].strip() for key, env in URL_ENV.items() if environ.get(env, "").strip()
    }
    return replace(settings, fetch=parsed, **overrides)

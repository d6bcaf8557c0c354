"""Typed settings: config/settings.toml for behaviour, the environment (or .env) for secrets.

Loading is explicit (`load_settings()`), never at import time, so each caller can point the bot
at its own files and nothing reads the disk just because a module was imported.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from bot.shards import (
    SHARD_COUNT_ENV,
    SHARD_IDS_ENV,
    ShardError,
    check_shards,
    parse_count,
    parse_ids,
)

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = PROJECT_ROOT / "config" / "settings.toml"


class ConfigError(ValueError):
    """The configuration cannot be used; the message says which key and why."""


# Decisions that mean "not accepted": such papers are left out of every corpus by default
# (settings, the loader, `ingest` and the benchmarks all read this one list; case is ignored).
EXCLUDED_STATUSES: tuple[str, ...] = ("Reject", "Withdraw", "Desk Reject")


@dataclass(frozen=True, slots=True)
class CorpusSettings:
    files: tuple[Path, ...] = (PROJECT_ROOT / "data" / "icml2026.jsonl",)
    exclude_status: tuple[str, ...] = EXCLUDED_STATUSES
    index_dir: Path = PROJECT_ROOT / "data" / ".index"
    # A reload losing more than this share of the papers served is refused unless forced.
    reload_max_loss: float = 0.10
    # Accept a damaged or shrunken corpus on SIGHUP (what force:True does for /admin reload).
    reload_force: bool = False


@dataclass(frozen=True, slots=True)
class SearchSettings:
    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.0
    title_weight: int = 2
    compound_weight: float = 0.25
    prf_docs: int = 0
    prf_terms: int = 0
    prf_weight: float = 0.0
    min_score_ratio: float = 0.2
    proximity_weight: float = 0.15
    similar_terms: int = 25
    page_size: int = 5


@dataclass(frozen=True, slots=True)
class DiscordSettings:
    ephemeral: bool = True
    search_cooldown_uses: int = 5
    search_cooldown_seconds: float = 30.0
    # Shards of the whole bot (0: Discord chooses) and the ones this process runs (empty: all);
    # SHARD_COUNT / SHARD_IDS in the environment win (bot/shards.py).
    shard_count: int = 0
    shard_ids: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class StorageSettings:
    """`database` is a SQLite path or URL, or postgresql://… (`[storage] url`, DATABASE_URL)."""

    database: str = str(PROJECT_ROOT / "state" / "paperbot.sqlite3")
    backup_dir: Path = PROJECT_ROOT / "state" / "backups"
    backup_hours: float = 24.0
    backup_keep: int = 7


@dataclass(frozen=True, slots=True)
class DailySettings:
    """How the paper of the day retries a failed post ([daily]; bot/daily/delivery.py)."""

    retry_window_hours: float = 12.0
    retry_base_seconds: float = 30.0
    retry_max_seconds: float = 1800.0
    open_thread: bool = True
    # How long a process's claim on a post holds: longer than one send can take (60 s plus
    # the thread), short enough that a crashed process's post is retried within minutes.
    claim_seconds: float = 300.0


@dataclass(frozen=True, slots=True)
class LibrarySettings:
    """Limits of readers' libraries and follows (issue 16), against abuse of one bot by a few."""

    max_saved: int = 1000
    follows_per_user: int = 10
    follows_per_server: int = 25


SOURCE_KINDS = ("openreview", "arxiv", "paperlist")
_HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


@dataclass(frozen=True, slots=True)
class FetchJob:
    """One corpus file the bot keeps fresh from a source ([[sources.fetch]] in the settings).

    `kind` openreview reads `venue` (a venue id such as ICML.cc/2026/Conference); arxiv reads
    `categories` and asks for the last `days` days on every refresh; paperlist reads `url`.
    """

    kind: str
    out: Path
    venue: str = ""
    categories: tuple[str, ...] = ()
    days: int = 7
    url: str = ""

    @property
    def label(self) -> str:
        what = self.venue or " ".join(self.categories) or self.url
        return f"{self.kind} {what}"


@dataclass(frozen=True, slots=True)
class SourcesSettings:
    """Where papers are fetched from and when the bot refreshes them (see README, Sources)."""

    openreview_url: str = "https://api2.openreview.net"
    arxiv_url: str = "https://export.arxiv.org/api/query"
    user_agent: str = "paperbot/0.1 (Discord paper-discovery bot; python -m bot fetch)"
    # arXiv asks for one connection and at least 3 s between calls.
    arxiv_interval_seconds: float = 3.0
    max_retries: int = 5
    retry_base_seconds: float = 2.0
    retry_max_seconds: float = 120.0
    timeout_seconds: float = 60.0
    # UTC times of day ("HH:MM") at which the running bot refreshes every [[sources.fetch]].
    refresh_at: tuple[str, ...] = ()
    fetch: tuple[FetchJob, ...] = ()


@dataclass(frozen=True, slots=True)
class Secrets:
    """Values read from the environment. `repr` hides the token so it never reaches a log."""

    discord_token: str | None = field(default=None, repr=False)
    guild_id: int | None = None
    owner_ids: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Settings:
    corpus: CorpusSettings = CorpusSettings()
    search: SearchSettings = SearchSettings()
    discord: DiscordSettings = DiscordSettings()
    storage: StorageSettings = StorageSettings()
    daily: DailySettings = DailySettings()
    library: LibrarySettings = LibrarySettings()
    sources: SourcesSettings = SourcesSettings()
    secrets: Secrets = Secrets()
    source: Path | None = None

    def with_corpus(self, files: list[Path] | tuple[Path, ...]) -> Settings:
        """The same settings over other corpus files (the CLI's --corpus)."""
        paths = tuple(Path(f).expanduser().resolve() for f in files)
        return replace(self, corpus=replace(self.corpus, files=paths))


_PATH_KEYS = {("corpus", "files"), ("corpus", "index_dir"), ("storage", "backup_dir")}
# Keys read under another name: `[storage] url` is the documented name of `database`.
_ALIASES = {("storage", "url"): "database"}
DATABASE_URL_ENV = "DATABASE_URL"

# Allowed (lowest, highest) of every numeric setting, both inclusive. Why: an out-of-range
# number does not fail loudly where it is used; `shard_count = -1` hangs at connect,
# `retry_base_seconds = 0` retries a failed post in a tight loop, `k1 = -1` or `nan` scores
# every paper 0 ("No paper matches"). NaN and infinity are refused everywhere.
RANGES: dict[tuple[str, str], tuple[float, float]] = {
    ("corpus", "reload_max_loss"): (0.0, 1.0),
    ("search", "k1"): (0.0, 100.0),
    ("search", "b"): (0.0, 1.0),
    ("search", "epsilon"): (0.0, 10.0),
    ("search", "title_weight"): (1, 10),
    ("search", "compound_weight"): (0.0, 10.0),
    ("search", "prf_docs"): (0, 100),
    ("search", "prf_terms"): (0, 100),
    ("search", "prf_weight"): (0.0, 10.0),
    ("search", "min_score_ratio"): (0.0, 1.0),
    ("search", "proximity_weight"): (0.0, 10.0),
    ("search", "similar_terms"): (1, 100),
    ("search", "page_size"): (1, 10),
    ("discord", "search_cooldown_uses"): (1, 1000),
    ("discord", "search_cooldown_seconds"): (0.0, 86400.0),
    ("discord", "shard_count"): (0, 100_000),
    ("daily", "retry_window_hours"): (0.0, 24.0),
    ("daily", "retry_base_seconds"): (1.0, 86400.0),
    ("daily", "retry_max_seconds"): (1.0, 86400.0),
    ("library", "max_saved"): (1, 100_000),
    ("library", "follows_per_user"): (0, 1000),
    ("library", "follows_per_server"): (0, 10_000),
    # Above one send (60 s + the thread); below a day.
    ("daily", "claim_seconds"): (1.0, 86400.0),
    ("storage", "backup_hours"): (0.1, 24.0 * 30),
    ("storage", "backup_keep"): (1, 1000),
}


def check_range(name: str, key: str, value: float) -> None:
    low, high = RANGES[(name, key)]
    if not math.isfinite(value) or not low <= value <= high:
        raise ConfigError(f"[{name}] {key} = {value} is out of range: use {low} to {high}")


def _resolve(base: Path, value: str) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else (base / path).resolve()


def _section(cls: type, name: str, raw: dict[str, Any], base: Path) -> Any:
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
                values[key] = tuple(_resolve(base, v) for v in value)
            else:
                if not isinstance(value, str):
                    raise ConfigError(f"[{name}] {key} must be a path")
                values[key] = _resolve(base, value)
            continue
        if (
            name == "storage"
            and key == "database"
            and isinstance(value, str)
            and "://" not in value
            and value != ":memory:"
        ):
            value = str(_resolve(base, value))
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
    if name == "daily" and section.retry_max_seconds < section.retry_base_seconds:
        raise ConfigError("[daily] retry_max_seconds must be at least retry_base_seconds")
    return section


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
    return FetchJob(kind, _resolve(base, out), venue, tuple(categories), days, url)


def _sources(raw: dict[str, Any], base: Path, environ: dict[str, str]) -> SourcesSettings:
    """[sources]: plain keys as every section, [[sources.fetch]] jobs, URL overrides from env."""
    raw = dict(raw)
    jobs = raw.pop("fetch", [])
    if not isinstance(jobs, list):
        raise ConfigError("[[sources.fetch]] must be an array of tables")
    settings = _section(SourcesSettings, "sources", raw, base)
    bad = [t for t in settings.refresh_at if not isinstance(t, str) or not _HHMM.match(t)]
    if bad:
        raise ConfigError(f"[sources] refresh_at takes UTC times as HH:MM, got {bad[0]!r}")
    overrides = {
        key: environ[env].strip()
        for key, env in (
            ("openreview_url", "PAPERBOT_OPENREVIEW_URL"),
            ("arxiv_url", "PAPERBOT_ARXIV_URL"),
        )
        if environ.get(env, "").strip()
    }
    parsed = tuple(_fetch_job(job, n, base) for n, job in enumerate(jobs, start=1))
    result: SourcesSettings = replace(settings, fetch=parsed, **overrides)
    return result


def _shards(settings: DiscordSettings, environ: dict[str, str]) -> DiscordSettings:
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
    sections = {
        "corpus": CorpusSettings,
        "search": SearchSettings,
        "discord": DiscordSettings,
        "storage": StorageSettings,
        "daily": DailySettings,
        "library": LibrarySettings,
    }
    unknown = sorted(set(raw) - set(sections) - {"sources"})
    if unknown:
        raise ConfigError(f"{path}: unknown section(s): {', '.join(unknown)}")
    parts = {name: _section(cls, name, raw.get(name, {}), base) for name, cls in sections.items()}
    sources = _sources(raw.get("sources", {}), base, environ)
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
    parts["discord"] = _shards(parts["discord"], environ)
    return Settings(**parts, sources=sources, secrets=read_secrets(environ), source=path)

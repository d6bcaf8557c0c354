"""What can be set: one frozen dataclass per settings section, each key with its default.

A numeric key declares its allowed range next to its default (`within`), so a new setting is
written in one place and `check_range` cannot miss it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TypeVar

from bot.config.paths import PROJECT_ROOT

N = TypeVar("N", int, float)


class ConfigError(ValueError):
    """The configuration cannot be used; the message says which key and why."""


def within(default: N, low: N, high: N) -> N:
    """A numeric setting's default and its allowed (lowest, highest), both inclusive.

    Why every number has one: an out-of-range number does not fail loudly where it is used;
    `shard_count = -1` hangs at connect, `retry_base_seconds = 0` retries a failed post in a
    tight loop, `k1 = -1` or `nan` scores every paper 0 ("No paper matches"). NaN and infinity
    are refused everywhere.
    """
    return field(default=default, metadata={"range": (low, high)})


def share(default: float) -> float:
    """A setting that is a fraction of something (of a score, of the papers): 0 to 1."""
    return within(default, 0.0, 1.0)


def weight(default: float) -> float:
    """A setting that weighs one signal against a typed query word's 1: 0 (off) to 10."""
    return within(default, 0.0, 10.0)


# Bounds of durations given in seconds.
HOUR = 3600.0
DAY = 24 * HOUR

# Decisions that mean "not accepted": such papers are left out of every corpus by default
# (settings, the loader, `ingest` and the benchmarks all read this one list; case is ignored).
EXCLUDED_STATUSES: tuple[str, ...] = ("Reject", "Withdraw", "Desk Reject")


@dataclass(frozen=True, slots=True)
class CorpusSettings:
    files: tuple[Path, ...] = (PROJECT_ROOT / "data" / "icml2026.jsonl",)
    exclude_status: tuple[str, ...] = EXCLUDED_STATUSES
    index_dir: Path = PROJECT_ROOT / "data" / ".index"
    # A reload losing more than this share of the papers served is refused unless forced.
    reload_max_loss: float = share(0.10)
    # Accept a damaged or shrunken corpus on SIGHUP (what force:True does for /admin reload).
    reload_force: bool = False


@dataclass(frozen=True, slots=True)
class SearchSettings:
    k1: float = within(1.5, 0.0, 100.0)
    b: float = share(0.75)
    epsilon: float = within(0.0, 0.0, 10.0)
    title_weight: int = within(2, 1, 10)
    compound_weight: float = weight(0.25)
    prf_docs: int = within(0, 0, 100)
    prf_terms: int = within(0, 0, 100)
    prf_weight: float = weight(0.0)
    min_score_ratio: float = share(0.2)
    proximity_weight: float = weight(0.15)
    similar_terms: int = within(25, 1, 100)
    page_size: int = within(5, 1, 10)


@dataclass(frozen=True, slots=True)
class DiscordSettings:
    ephemeral: bool = True
    search_cooldown_uses: int = within(5, 1, 1000)
    search_cooldown_seconds: float = within(30.0, 0.0, DAY)
    # Shards of the whole bot (0: Discord chooses) and the ones this process runs (empty: all);
    # SHARD_COUNT / SHARD_IDS in the environment win (bot/shards.py).
    shard_count: int = within(0, 0, 100_000)
    shard_ids: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class StorageSettings:
    """`database` is a SQLite path or URL, or postgresql://… (`[storage] url`, DATABASE_URL)."""

    database: str = str(PROJECT_ROOT / "state" / "paperbot.sqlite3")
    backup_dir: Path = PROJECT_ROOT / "state" / "backups"
    backup_hours: float = within(24.0, 0.1, 30 * 24.0)
    backup_keep: int = within(7, 1, 1000)


@dataclass(frozen=True, slots=True)
class DailySettings:
    """How the paper of the day retries a failed post ([daily]; bot/daily/delivery.py)."""

    retry_window_hours: float = within(12.0, 0.0, 24.0)
    retry_base_seconds: float = within(30.0, 1.0, DAY)
    retry_max_seconds: float = within(1800.0, 1.0, DAY)
    open_thread: bool = True
    # How long a process's claim on a post holds: longer than one send can take (60 s plus
    # the thread), short enough that a crashed process's post is retried within minutes;
    # below a day.
    claim_seconds: float = within(300.0, 1.0, DAY)


@dataclass(frozen=True, slots=True)
class LibrarySettings:
    """Limits of readers' libraries and follows (issue 16), against abuse of one bot by a few."""

    max_saved: int = within(1000, 1, 100_000)
    follows_per_user: int = within(10, 0, 1000)
    follows_per_server: int = within(25, 0, 10_000)


SOURCE_KINDS = ("openreview", "arxiv", "paperlist")


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
    # (Lower only for a mirror or a stand-in that allows it.)
    arxiv_interval_seconds: float = within(3.0, 0.0, HOUR)
    max_retries: int = within(5, 0, 100)
    retry_base_seconds: float = within(2.0, 0.01, HOUR)
    retry_max_seconds: float = within(120.0, 0.01, DAY)
    timeout_seconds: float = within(60.0, 0.1, HOUR)
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


# The sections read the same way from settings.toml; [sources] adds its [[sources.fetch]] jobs.
SECTIONS: dict[str, type] = {
    "corpus": CorpusSettings,
    "search": SearchSettings,
    "discord": DiscordSettings,
    "storage": StorageSettings,
    "daily": DailySettings,
    "library": LibrarySettings,
}

# (section, key) -> (lowest, highest) of every numeric setting, from the `within` declarations.
RANGES: dict[tuple[str, str], tuple[float, float]] = {
    (name, f.name): f.metadata["range"]
    for name, cls in {**SECTIONS, "sources": SourcesSettings}.items()
    for f in fields(cls)
    if "range" in f.metadata
}


def check_range(name: str, key: str, value: float) -> None:
    low, high = RANGES[(name, key)]
    if not math.isfinite(value) or not low <= value <= high:
        raise ConfigError(f"[{name}] {key} = {value} is out of range: use {low} to {high}")

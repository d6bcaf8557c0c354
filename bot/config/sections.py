"""What can be set: one frozen dataclass per settings section, each key with its default.

Each key is declared once: its type, its allowed values (msgspec `Meta` in `Annotated`: a
numeric key's range through `within`, a pattern, a description) and its default. msgspec
checks a settings table against exactly these declarations (bot/config/checking.py); there is
no second list of keys or ranges to keep in step. The sections stay plain dataclasses, so
callers copy them with `dataclasses.replace` as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Literal, get_args

from msgspec import Meta

from bot.config.paths import PROJECT_ROOT


class ConfigError(ValueError):
    """The configuration cannot be used; the message says which key and why."""


def within(low: float, high: float) -> Meta:
    """A numeric setting's allowed (lowest, highest), both inclusive, in its `Annotated` type.

    Why every number has one: an out-of-range number does not fail loudly where it is used;
    `shard_count = -1` hangs at connect, `retry_base_seconds = 0` retries a failed post in a
    tight loop, `k1 = -1` or `nan` scores every paper 0 ("No paper matches"). A bounded float
    refuses NaN and infinity too (msgspec: NaN compares false with both bounds).
    """
    return Meta(ge=low, le=high)


# Bounds of durations given in seconds.
HOUR = 3600.0
DAY = 24 * HOUR

# A fraction of something (of a score, of the papers): 0 to 1.
Share = Annotated[float, within(0.0, 1.0)]
# The weight of one signal against a typed query word's 1: 0 (off) to 10.
Weight = Annotated[float, within(0.0, 10.0)]
# A UTC time of day, "HH:MM".
HourMinute = Annotated[str, Meta(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")]

# Decisions that mean "not accepted": such papers are left out of every corpus by default
# (settings, the loader, `ingest` and the benchmarks all read this one list; case is ignored).
EXCLUDED_STATUSES: tuple[str, ...] = ("Reject", "Withdraw", "Desk Reject")


@dataclass(frozen=True, slots=True)
class CorpusSettings:
    files: tuple[Path, ...] = (PROJECT_ROOT / "data" / "icml2026.jsonl",)
    exclude_status: tuple[str, ...] = EXCLUDED_STATUSES
    index_dir: Path = PROJECT_ROOT / "data" / ".index"
    # A reload losing more than this share of the papers served is refused unless forced.
    reload_max_loss: Share = 0.10
    # Accept a damaged or shrunken corpus on SIGHUP (what force:True does for /admin reload).
    reload_force: bool = False


@dataclass(frozen=True, slots=True)
class SearchSettings:
    k1: Annotated[float, within(0.0, 100.0)] = 1.0
    b: Share = 0.75
    epsilon: Annotated[float, within(0.0, 10.0)] = 0.0
    # "lucene": Lucene's idf (the default); "okapi": rank_bm25's, floored by epsilon (parity).
    idf: Literal["lucene", "okapi"] = "lucene"
    title_weight: Annotated[int, within(1, 10)] = 3
    compound_weight: Weight = 0.25
    prf_docs: Annotated[int, within(0, 100)] = 0
    prf_terms: Annotated[int, within(0, 100)] = 0
    prf_weight: Weight = 0.0
    min_score_ratio: Share = 0.1
    proximity_weight: Weight = 0.3
    similar_terms: Annotated[int, within(1, 100)] = 100
    page_size: Annotated[int, within(1, 10)] = 5


@dataclass(frozen=True, slots=True)
class DiscordSettings:
    ephemeral: bool = True
    search_cooldown_uses: Annotated[int, within(1, 1000)] = 5
    search_cooldown_seconds: Annotated[float, within(0.0, DAY)] = 30.0
    # Shards of the whole bot (0: Discord chooses) and the ones this process runs (empty: all);
    # SHARD_COUNT / SHARD_IDS in the environment win (bot/shards.py).
    shard_count: Annotated[int, within(0, 100_000)] = 0
    shard_ids: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class StorageSettings:
    """`database` is a SQLite path or URL, or postgresql://… (`[storage] url`, DATABASE_URL)."""

    database: str = str(PROJECT_ROOT / "state" / "paperbot.sqlite3")
    backup_dir: Path = PROJECT_ROOT / "state" / "backups"
    backup_hours: Annotated[float, within(0.1, 30 * 24.0)] = 24.0
    backup_keep: Annotated[int, within(1, 1000)] = 7
    # How long one database call of the bot may wait (a lock, a busy pool, a slow statement)
    # before its user is told the database is busy (bot/storage/core.py).
    timeout_seconds: Annotated[float, within(0.1, 300.0)] = 5.0


@dataclass(frozen=True, slots=True)
class DailySettings:
    """How the paper of the day retries a failed post ([daily]; bot/daily/delivery.py)."""

    retry_window_hours: Annotated[float, within(0.0, 24.0)] = 12.0
    retry_base_seconds: Annotated[float, within(1.0, DAY)] = 30.0
    retry_max_seconds: Annotated[float, within(1.0, DAY)] = 1800.0
    open_thread: bool = True
    # How long a process's claim on a post holds: longer than one send can take (60 s plus
    # the thread), short enough that a crashed process's post is retried within minutes;
    # below a day.
    claim_seconds: Annotated[float, within(1.0, DAY)] = 300.0


@dataclass(frozen=True, slots=True)
class LibrarySettings:
    """Limits of readers' libraries and follows (issue 16), against abuse of one bot by a few."""

    max_saved: Annotated[int, within(1, 100_000)] = 1000
    follows_per_user: Annotated[int, within(0, 1000)] = 10
    follows_per_server: Annotated[int, within(0, 10_000)] = 25


@dataclass(frozen=True, slots=True)
class LinksSettings:
    """Papers named in messages (issue 28): "Find papers" and the optional link replies."""

    # Reply to messages that post paper links in servers that ran `/server links on`. Needs the
    # privileged Message Content intent, requested only when this is true (turn it on in the
    # developer portal first, or Discord refuses the connection).
    replies: bool = False
    # The most a paper not in the corpus may take to fetch from arXiv or OpenReview on demand.
    fetch_timeout_seconds: Annotated[float, within(1.0, 120.0)] = 15.0


SourceKind = Literal["openreview", "arxiv", "paperlist"]
SOURCE_KINDS: tuple[str, ...] = get_args(SourceKind)


@dataclass(frozen=True, slots=True)
class FetchJob:
    """One corpus file the bot keeps fresh from a source ([[sources.fetch]] in the settings).

    `kind` openreview reads `venue` (a venue id such as ICML.cc/2026/Conference); arxiv reads
    `categories` and asks for the last `days` days on every refresh; paperlist reads `url`.
    """

    kind: SourceKind
    # The corpus file to write.
    out: Path
    venue: str = ""
    categories: tuple[str, ...] = ()
    days: Annotated[int, Meta(ge=1)] = 7
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
    arxiv_interval_seconds: Annotated[float, within(0.0, HOUR)] = 3.0
    max_retries: Annotated[int, within(0, 100)] = 5
    retry_base_seconds: Annotated[float, within(0.01, HOUR)] = 2.0
    retry_max_seconds: Annotated[float, within(0.01, DAY)] = 120.0
    timeout_seconds: Annotated[float, within(0.1, HOUR)] = 60.0
    # A response body larger than this is refused, read in chunks up to the limit.
    max_response_mb: Annotated[int, within(1, 4096)] = 128
    # The most one fetch job may take, its requests and every retry's wait together: a wait
    # (a 429's Retry-After) that would end later stops the job, resumable, instead.
    max_fetch_seconds: Annotated[float, within(1.0, DAY)] = 1800.0
    # UTC times of day at which the running bot refreshes every [[sources.fetch]].
    refresh_at: Annotated[
        tuple[HourMinute, ...], Meta(description='UTC times as HH:MM in a list, e.g. ["06:30"]')
    ] = ()
    # Several processes on one PostgreSQL: one fetches each source per refresh, holding a
    # lease it renews every quarter of this; a killed fetcher's source is taken over after it.
    lease_seconds: Annotated[float, within(0.2, HOUR)] = 60.0
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
    links: LinksSettings = LinksSettings()
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
    "links": LinksSettings,
}

"""Typed settings: config/settings.toml for behaviour, the environment (or .env) for secrets.

One module per job: `sections` (what can be set: each key's type, range and default, declared
once), `checking` (msgspec checks a table against them; its refusal as one line), `tables` (what
no single key can say), `environment` (secrets, .env and overrides), `loading`
(`load_settings`), `paths` (the project folder). Every name is importable from `bot.config`.
"""

from bot.config.checking import check_range
from bot.config.environment import DATABASE_URL_ENV, read_dotenv, read_secrets
from bot.config.loading import load_settings, settings_for
from bot.config.paths import DEFAULT_CONFIG, PROJECT_ROOT
from bot.config.sections import (
    EXCLUDED_STATUSES,
    SOURCE_KINDS,
    ConfigError,
    CorpusSettings,
    DailySettings,
    DiscordSettings,
    FetchJob,
    LibrarySettings,
    LinksSettings,
    SearchSettings,
    Secrets,
    Settings,
    SourcesSettings,
    StorageSettings,
)

__all__ = [
    "DATABASE_URL_ENV",
    "DEFAULT_CONFIG",
    "EXCLUDED_STATUSES",
    "PROJECT_ROOT",
    "SOURCE_KINDS",
    "ConfigError",
    "CorpusSettings",
    "DailySettings",
    "DiscordSettings",
    "FetchJob",
    "LibrarySettings",
    "LinksSettings",
    "SearchSettings",
    "Secrets",
    "Settings",
    "SourcesSettings",
    "StorageSettings",
    "check_range",
    "load_settings",
    "read_dotenv",
    "read_secrets",
    "settings_for",
]

"""Which database a setting names: a SQLite file (the default) or a PostgreSQL server.

`DATABASE_URL=postgresql://…` is the hosting convention (Heroku, Render, Fly, compose files);
the same URL can stand in `[storage] url`. Anything else is a SQLite path or `sqlite:///` URL.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.config import ConfigError

POSTGRES_SCHEMES = ("postgres", "postgresql")


@dataclass(frozen=True, slots=True)
class DatabaseUrl:
    """`dialect` is "sqlite" (then `target` is a file path or ":memory:") or "postgresql"."""

    dialect: str
    target: str

    @property
    def display(self) -> str:
        """The URL without a password, for logs and messages."""
        if self.dialect != "postgresql":
            return self.target
        head, sep, tail = self.target.partition("://")
        creds, at, rest = tail.rpartition("@")
        if not at:
            return self.target
        user = creds.split(":", 1)[0]
        return f"{head}{sep}{user}:***@{rest}" if ":" in creds else self.target


def parse_database_url(url: str) -> DatabaseUrl:
    """A plain path, `sqlite:///path`, `:memory:`, or `postgresql://…` / `postgres://…`."""
    url = url.strip()
    if url in (":memory:", "sqlite://", "sqlite:///:memory:"):
        return DatabaseUrl("sqlite", ":memory:")
    scheme, sep, rest = url.partition("://")
    if not sep:
        if not url:
            raise ConfigError("[storage] url is empty: give a SQLite path or a postgresql:// URL")
        return DatabaseUrl("sqlite", str(Path(url).expanduser()))
    scheme = scheme.lower()
    if scheme in POSTGRES_SCHEMES or scheme.startswith("postgresql+"):
        # psycopg takes the libpq form; "postgres://" (Heroku) and driver suffixes are aliases.
        return DatabaseUrl("postgresql", "postgresql://" + rest)
    if scheme != "sqlite" or not rest.startswith("/"):
        raise ConfigError(
            f"[storage] url: cannot use {url.split('@')[-1]!r}; give a file path, "
            "sqlite:///relative/path, sqlite:////absolute/path or postgresql://user:pass@host/db"
        )
    return DatabaseUrl("sqlite", str(Path(rest[1:]).expanduser()))


def sqlite_path(url: str) -> str:
    """The SQLite file named by `url` (a ConfigError if it names another engine)."""
    parsed = parse_database_url(url)
    if parsed.dialect != "sqlite":
        raise ConfigError(f"{parsed.display} is not a SQLite database")
    return parsed.target

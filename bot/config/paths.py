"""Where the project lives on disk, and how a path written in the settings is read.

Computed from this file's location, never from the working directory, so the bot finds its
files whichever folder it is started from.
"""

from __future__ import annotations

from pathlib import Path

# bot/config/paths.py -> the repository root.
PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_CONFIG = PROJECT_ROOT / "config" / "settings.toml"


def resolve(base: Path, value: str) -> Path:
    """`value` with `~` expanded; a relative one is taken against `base` (the project folder)."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else (base / path).resolve()

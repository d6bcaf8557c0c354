"""How records cross the database boundary: timestamps as ISO-8601 UTC text (they sort as time
on SQLite and PostgreSQL alike) and a row read back into its record dataclass.

One place for both, so a schedule, a pick, a saved paper and a follow are read by one rule:
a column per field, named like it unless the caller says otherwise, timestamps parsed back.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import UTC, datetime
from typing import Any, TypeVar, get_type_hints, overload

T = TypeVar("T")
Reader = tuple[tuple[str, Any], ...]
_READERS: dict[type[Any], Reader] = {}  # per record class, built on first use


@overload
def ts(value: datetime) -> str: ...


@overload
def ts(value: None) -> None: ...


def ts(value: datetime | None) -> str | None:
    """A timestamp as stored; a naive one is refused (its zone would be a guess)."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    return value.astimezone(UTC).isoformat()


def _readers_of(cls: type[Any]) -> Reader:
    """Each field of a record and how its column is read back: timestamps from their text,
    flags from SQLite's 0/1, anything else as it comes."""
    hints = get_type_hints(cls)
    readers: list[tuple[str, Any]] = []
    for f in fields(cls):
        hint = hints[f.name]
        if hint in (datetime, datetime | None):
            readers.append((f.name, datetime.fromisoformat))
        elif hint is bool:
            readers.append((f.name, bool))
        else:
            readers.append((f.name, None))
    return tuple(readers)


def from_row(cls: type[T], row: Any, **columns: str) -> T:
    """A `cls` record (a dataclass) from a row: each field from the column of its name, or
    `columns[field]`, read back by its type; NULL stays None."""
    readers = _READERS.get(cls)
    if readers is None:
        readers = _READERS[cls] = _readers_of(cls)
    values: dict[str, Any] = {}
    for name, read in readers:
        value = row[columns.get(name, name)]
        values[name] = read(value) if read is not None and value is not None else value
    return cls(**values)

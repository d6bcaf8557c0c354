"""What the database may be given: text any backend can hold, and rows checked against the
schema before `db restore` or `db copy` writes them (`bot.storage.admin`).

`text_problem` is the one rule for text: the input check every command that stores user text
calls (`bot.app.checks.stored_text`) and the check of rows on their way into a database both
use it, so SQLite and PostgreSQL take the same text. `plan` checks an export's tables and
columns against the schema (as the migrations create it), each row's shape and plain values;
only the schema's own spelling of a name is ever put into SQL text.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from bot.storage.schema import TABLES, Conn, StorageError

SHOWN_BAD_ROWS = 10  # rows named in a refusal; the count says how many more there are
BIGINT = 1 << 63  # PostgreSQL's BIGINT and SQLite's INTEGER: -2**63 .. 2**63 - 1


@cache
def _refused(allow: str | None) -> re.Pattern[str]:
    if allow is None:  # only what no database can hold
        return re.compile("[\\x00\\ud800-\\udfff]")
    controls = [*range(0x20), *range(0x7F, 0xA0)]  # Unicode Cc: C0, DEL and C1
    refused = "".join(f"\\x{code:02x}" for code in controls if chr(code) not in allow)
    return re.compile(f"[{refused}\\ud800-\\udfff]")


def text_problem(text: str, allow: str | None = None) -> str | None:
    """The first character of `text` the bot refuses to store, named ("a NUL character
    (U+0000)"), or None when it may be stored.

    One rule for input and for moving rows, so both backends behave alike. Always refused: NUL
    (PostgreSQL's text cannot hold it; SQLite keeps it, so the same command used to work on one
    backend only) and a lone surrogate (neither driver can encode it). With `allow` given (the
    input check, `bot.app.checks.stored_text`), every other control character (Unicode Cc: C0,
    DEL, C1) is refused too, except those in `allow`. Format characters (zero-width joiners,
    direction marks) are text in many scripts and stay.
    """
    found = _refused(allow).search(text)
    if found is None:
        return None
    code = ord(found.group())
    if code == 0:
        return "a NUL character (U+0000)"
    if 0xD800 <= code <= 0xDFFF:
        return f"a lone surrogate (U+{code:04X})"
    return f"a control character (U+{code:04X})"


# -- rows on their way in -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Table:
    """One table's rows to write, under the schema's own column names (in the schema's order);
    `key` is its primary key, which names a row in messages."""

    columns: tuple[str, ...]
    key: tuple[str, ...]
    rows: list[tuple[Any, ...]] = field(default_factory=list)

    def name_of(self, table: str, row: tuple[Any, ...], number: int) -> str:
        """`follows follow_id=ab12`, or `follows row 3` when the key is not in the export."""
        if not self.key or any(k not in self.columns for k in self.key):
            return f"{table} row {number}"
        return f"{table} " + " ".join(f"{k}={_shown(row[self.columns.index(k)])}" for k in self.key)


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) and text_problem(value, "") else str(value)


def shapes(c: Conn) -> dict[str, Table]:
    """Each table's columns and primary key as the migrations made them (SQLite's own view
    of its schema; the scratch database is SQLite whatever the target)."""
    out = {}
    for table in TABLES:
        info = c.execute(
            "SELECT name, pk FROM pragma_table_info(?) ORDER BY cid", (table,)
        ).fetchall()
        key = sorted((int(r[1]), str(r[0])) for r in info if r[1])
        out[table] = Table(tuple(str(r[0]) for r in info), tuple(name for _, name in key))
    return out


def _columns(table: str, data: Any) -> list[str]:
    if not isinstance(data, dict) or not isinstance(data.get("rows", []), list):
        raise StorageError(f"not a valid export: {table} must hold columns and a list of rows")
    columns = data.get("columns", [])
    if not isinstance(columns, list) or not all(isinstance(n, str) for n in columns):
        raise StorageError(f"not a valid export: {table}: columns must be a list of names")
    twice = sorted({n for n in columns if columns.count(n) > 1})
    if twice:
        raise StorageError(f"not a valid export: {table}: column {twice[0]!r} given twice")
    return columns


def _value_problem(value: Any) -> str | None:
    if value is None or isinstance(value, str | float):
        return None
    if isinstance(value, int):
        return None if -BIGINT <= value < BIGINT else "is out of range (64-bit integers)"
    kind = "an object" if isinstance(value, dict) else "a list" if isinstance(value, list) else ""
    return f"is {kind or type(value).__name__}, not a plain value"


def _rows(table: str, given: list[str], rows: list[Any], shape: Table) -> Table:
    """The rows of one table reordered to the schema's columns, each value checked."""
    names = tuple(name for name in shape.columns if name in given)
    where = [given.index(name) for name in names]
    out = Table(names, shape.key)
    for number, row in enumerate(rows, 1):
        if not isinstance(row, list) or len(row) != len(given):
            count = len(row) if isinstance(row, list) else "no list of"
            raise StorageError(
                f"not a valid export: {table} row {number}: {count} values for {len(given)} columns"
            )
        for name, value in zip(given, row, strict=True):
            problem = _value_problem(value)
            if problem is not None:
                raise StorageError(f"not a valid export: {table} row {number}: {name} {problem}")
        out.rows.append(tuple(row[i] for i in where))
    return out


def plan(tables: Any, schema: dict[str, Table]) -> dict[str, Table]:
    """The export's tables checked against the schema (`shapes`), before anything is written:
    unknown tables and columns are named together and refused (never written, never in SQL)."""
    if not isinstance(tables, dict):
        raise StorageError("not a valid export: tables must be an object of tables")
    unknown = [f"unknown table {name!r}" for name in tables if name not in schema]
    given = {table: _columns(table, tables.get(table, {})) for table in schema}
    for table, names in given.items():
        unknown += [
            f"unknown column {n!r} in {table}" for n in names if n not in schema[table].columns
        ]
    if unknown:
        raise StorageError(
            f"the rows do not match this bot's schema ({'; '.join(unknown)}): nothing was written"
        )
    return {
        table: _rows(table, given[table], tables.get(table, {}).get("rows", []), shape)
        for table, shape in schema.items()
    }


def without_bad_text(plan: dict[str, Table]) -> tuple[dict[str, Table], list[str]]:
    """The plan without rows holding text no database may hold, and those rows named."""
    bad: list[str] = []
    kept: dict[str, Table] = {}
    for table, data in plan.items():
        kept[table] = Table(data.columns, data.key)
        for number, row in enumerate(data.rows, 1):
            problems = [
                f"{problem} in {name}"
                for name, value in zip(data.columns, row, strict=True)
                if isinstance(value, str) and (problem := text_problem(value)) is not None
            ]
            if problems:
                bad.append(f"{data.name_of(table, row, number)}: {', '.join(problems)}")
            else:
                kept[table].rows.append(row)
    return kept, bad


def refusal(bad: list[str]) -> str:
    """One line naming the rows `without_bad_text` found (the first few), and the way on."""
    more = len(bad) - SHOWN_BAD_ROWS
    named = "; ".join(bad[:SHOWN_BAD_ROWS]) + (f"; and {more} more" if more > 0 else "")
    return (
        f"{len(bad)} row(s) hold text a database must not store ({named}): nothing was "
        "written. Correct them in the source, or add --skip-bad to move the rest without them."
    )


def driver_errors() -> tuple[type[Exception], ...]:
    """What the drivers raise for a row they cannot write (psycopg only when installed)."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover - an install without the PostgreSQL driver
        return (sqlite3.Error,)
    return (sqlite3.Error, psycopg.Error)

"""`db copy` and `db restore` check what they move before writing anything (issue 26, items 5
and 12): rows the target cannot hold are named by table and key, names an export brings are
checked against the schema, and a refused copy or restore leaves the target as it was."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bot.storage import admin, validate
from bot.storage.schema import StorageError
from tests.storage.test_admin import NOW, ROWS, fill, snapshot

NUL_QUERY = "optimal\x00transport"


def put_nul(path: Path) -> str:
    """A NUL byte written straight into a SQLite file's follow query (SQLite accepts it, as
    older bots did); the follow's id."""
    with sqlite3.connect(path) as conn:
        (follow_id,) = conn.execute("SELECT follow_id FROM follows").fetchone()
        conn.execute("UPDATE follows SET query = ? WHERE follow_id = ?", (NUL_QUERY, follow_id))
    conn.close()
    return str(follow_id)


def nul_line(follow_id: str) -> str:
    return f"follows follow_id={follow_id}: a NUL character (U+0000) in query"


async def test_copy_to_postgresql_names_a_row_with_a_nul_byte(tmp_path, pg_server):
    source = tmp_path / "old.sqlite3"
    await fill(str(source))
    follow_id = put_nul(source)
    target = pg_server.fresh_database_url()
    with pytest.raises(StorageError) as info:
        await admin.copy(str(source), target)
    message = str(info.value)
    assert nul_line(follow_id) in message
    assert "--skip-bad" in message
    assert "\n" not in message
    assert not any((await admin.check(target)).rows.values())  # nothing written
    copied = await admin.copy(str(source), target, skip_bad=True)
    assert (copied.rows["follows"], copied.rows["picks"]) == (0, ROWS["picks"])
    assert copied.skipped == [nul_line(follow_id)]
    assert (await snapshot(target))["follows"] == []


async def test_restore_refuses_a_nul_byte_on_either_backend(tmp_path, database_url):
    """The same rule whatever the target: SQLite could hold the row, but a later copy to
    PostgreSQL could not."""
    await fill(database_url)
    before = await snapshot(database_url)
    data = await admin.export_tables(database_url)
    follows = data["tables"]["follows"]
    query = follows["columns"].index("query")
    follows["rows"][0][query] = NUL_QUERY
    path = tmp_path / "nul.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    follow_id = follows["rows"][0][follows["columns"].index("follow_id")]
    with pytest.raises(StorageError, match="U\\+0000"):
        await admin.restore(database_url, path, NOW)
    assert await snapshot(database_url) == before
    restored = await admin.restore(database_url, path, NOW, skip_bad=True)
    assert restored.skipped == [nul_line(follow_id)]
    assert restored.rows["follows"] == 0


def bad_names(data: dict[str, Any]) -> None:
    follows = data["tables"]["follows"]
    follows["columns"].append("x; DROP TABLE follows")
    for row in follows["rows"]:
        row.append(1)
    data["tables"]["bogus"] = {"columns": ["a"], "rows": [[1]]}


async def test_an_export_with_unknown_names_is_refused_and_nothing_written(tmp_path, database_url):
    await fill(database_url)
    before = await snapshot(database_url)
    data = await admin.export_tables(database_url)
    bad_names(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(StorageError) as info:
        await admin.restore(database_url, path, NOW)
    message = str(info.value)
    assert "unknown table 'bogus'" in message
    assert "unknown column 'x; DROP TABLE follows' in follows" in message
    assert "nothing was written" in message
    assert await snapshot(database_url) == before
    assert not list(tmp_path.rglob("*before-restore*"))  # the SQLite file was not set aside
    with pytest.raises(StorageError, match="unknown table 'bogus'"):
        await admin.copy(str(path), database_url, replace=True)
    assert await snapshot(database_url) == before


def _shape(data: dict[str, Any], damage: str) -> None:
    tables = data["tables"]
    follows = tables["follows"]
    if damage == "short row":
        follows["rows"][0].pop()
    elif damage == "object value":
        follows["rows"][0][0] = {"a": 1}
    elif damage == "huge integer":
        follows["rows"][0][follows["columns"].index("user_id")] = 1 << 70
    elif damage == "columns not a list":
        follows["columns"] = "follow_id"
    elif damage == "column twice":
        follows["columns"][1] = follows["columns"][0]
    elif damage == "tables not an object":
        data["tables"] = []
    elif damage == "duplicate key":
        tables["meta"]["rows"].append(list(tables["meta"]["rows"][0]))
    elif damage == "missing required column":
        at = follows["columns"].index("query")
        follows["columns"].pop(at)
        for row in follows["rows"]:
            row.pop(at)
    elif damage == "lone surrogate":
        follows["rows"][0][follows["columns"].index("query")] = "a\ud800b"


DAMAGE = {
    "short row": "follows row 1: 6 values for 7 columns",
    "object value": "follows row 1: follow_id is an object",
    "huge integer": "follows row 1: user_id is out of range",
    "columns not a list": "follows: columns must be a list of names",
    "column twice": "follows: column 'follow_id' given twice",
    "tables not an object": "tables must be an object",
    "duplicate key": "meta key=commands_hash:1:global: cannot be written",
    "missing required column": "follows follow_id=",
    "lone surrogate": "a lone surrogate (U+D800) in query",
}


@pytest.mark.parametrize("damage", list(DAMAGE))
async def test_a_malformed_export_is_one_clear_error(tmp_path, damage):
    url = str(tmp_path / "db" / "bot.sqlite3")
    await fill(url)
    before = await snapshot(url)
    data = await admin.export_tables(url)
    _shape(data, damage)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(StorageError) as info:
        await admin.restore(url, path, NOW)
    assert DAMAGE[damage] in str(info.value)
    assert "\n" not in str(info.value)
    assert await snapshot(url) == before


@pytest.mark.parametrize(
    ("text", "allow", "problem"),
    [
        ("plain words", "", None),
        ("tab\tand\nnewline\r", "\t\n\r", None),
        ("tab\there", "", "a control character (U+0009)"),
        ("a\x00b", "\t\n\r", "a NUL character (U+0000)"),
        ("bell\x07", "\t\n\r", "a control character (U+0007)"),
        ("del\x7f", "", "a control character (U+007F)"),
        ("c1\x85", "", "a control character (U+0085)"),
        ("a\ud800", "", "a lone surrogate (U+D800)"),
        ("zero\u200bwidth \u202e emoji 🚀 é", "", None),  # format characters are text
        ("bell\x07 kept", None, None),  # storable: only what no database can hold
        ("a\x00b", None, "a NUL character (U+0000)"),
    ],
)
def test_text_problem_names_the_first_refused_character(text, allow, problem):
    assert validate.text_problem(text, allow) == problem

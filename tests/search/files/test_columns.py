"""String columns: one buffer + offsets behave as the list of strings they replace."""

from __future__ import annotations

import pytest

from bot.search.files.columns import OptionalColumn, StringColumn, line_starts


@pytest.mark.parametrize(
    "strings", [[], [""], ["a"], ["", ""], ["ünï", "", "x y", "日本"], ["a", "", "", "b"]]
)
def test_column_is_the_list_it_replaces(strings: list[str]) -> None:
    column = StringColumn.of(strings)
    assert len(column) == len(strings)
    assert list(column) == strings
    assert [column[i] for i in range(len(strings))] == strings
    assert column[1:3] == strings[1:3]
    if strings:
        assert column[-1] == strings[-1]
    with pytest.raises(IndexError):
        column[len(strings)]
    optional = OptionalColumn(column)
    assert list(optional) == [s or None for s in strings]
    assert [optional[i] for i in range(len(strings))] == [s or None for s in strings]


def test_line_starts_refuse_a_wrong_count() -> None:
    with pytest.raises(ValueError, match="2 lines, expected 3"):
        line_starts(b"a\nb", 3)

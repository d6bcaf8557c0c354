"""The typed states of the daily records match what the database accepts."""

from __future__ import annotations

import re
from typing import get_args

from bot.daily.records import PickState
from bot.storage.schema import migrations


def test_pick_states_are_the_ones_the_picks_table_allows() -> None:
    sql = " ".join(" ".join(step) for step in migrations())
    check = re.search(r"state IN \(([^)]*)\)", sql)
    assert check is not None, "the picks table lost its CHECK on state"
    allowed = re.findall(r"'(\w+)'", check.group(1))
    assert allowed == list(get_args(PickState))

"""Helpers shared by several cogs (bot/app/checks.py)."""

from __future__ import annotations

from bot.app import limits
from bot.app.checks import matching_choices


def test_matching_choices_is_the_one_autocomplete_filter() -> None:
    options = [("Attention Is All You Need", "p1"), ("Diffusion", "ATTN-2"), ("Other", "p3")]
    found = matching_choices("  attn", options)
    assert [c.value for c in found] == ["ATTN-2"]  # the value matches too, case-folded
    found = matching_choices("ATTENTION", options)
    assert [(c.name, c.value) for c in found] == [("Attention Is All You Need", "p1")]


def test_matching_choices_keeps_within_discord_limits() -> None:
    too_long = "x" * (limits.CHOICE_VALUE + 1)
    options = [("long", too_long), ("t" * 500, "short")] + [(f"n{i}", f"v{i}") for i in range(40)]
    found = matching_choices("", options)
    assert too_long not in [c.value for c in found]
    assert len(found) == limits.CHOICES
    assert len(found[0].name) <= limits.CHOICE_NAME

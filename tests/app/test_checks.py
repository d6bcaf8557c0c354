"""Helpers shared by several cogs (bot/app/checks.py)."""

from __future__ import annotations

from types import SimpleNamespace

from bot.app import limits
from bot.app.checks import matching_choices, stored_autocomplete


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


async def test_stored_autocomplete_offers_nothing_without_a_database() -> None:
    read: list[object] = []

    async def options(interaction: object, storage: object) -> list[tuple[str, str]]:
        read.append(storage)
        return [("a paper", "p1")]

    complete = stored_autocomplete(options)  # type: ignore[arg-type]
    without = SimpleNamespace(client=SimpleNamespace(storage=None))
    assert await complete(without, "") == []  # type: ignore[arg-type]
    assert read == []  # nothing was asked of a database that is not there
    storage = object()
    found = await complete(SimpleNamespace(client=SimpleNamespace(storage=storage)), "PAP")  # type: ignore[arg-type]
    assert [(c.name, c.value) for c in found] == [("a paper", "p1")]
    assert read == [storage]

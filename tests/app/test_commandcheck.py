"""Discord's registration rules on the real command tree, and each rule catching its breach."""

from __future__ import annotations

import io
from dataclasses import replace
from typing import Any

import pytest

from bot.app import check, commandcheck, limits
from bot.app.client import PaperBot, cog_modules
from bot.config import Settings
from bot.search.engine import SearchEngine
from bot.storage.store import Storage


async def real_payload(engine: SearchEngine) -> list[dict[str, Any]]:
    """Every cog loaded as setup_hook loads them; the JSON a sync would send."""
    storage = await Storage.open(":memory:")
    bot = PaperBot(Settings(), engine=engine, storage=storage, shard_count=1)
    try:
        async with bot:
            for name in cog_modules():
                await bot.load_extension(name)
            payload = bot.command_payload(None)
            for name in list(bot.extensions):
                await bot.unload_extension(name)
    finally:
        await storage.close()
    return payload


async def test_real_command_tree_keeps_every_rule(icml_engine: SearchEngine) -> None:
    payload = await real_payload(icml_engine)
    assert {"search", "paper", "help", "sync", "admin"} <= {c["name"] for c in payload}
    assert commandcheck.check_commands(payload) == []
    assert all(commandcheck.command_size(c) <= limits.COMMAND_TOTAL for c in payload)


def command(**extra: Any) -> dict[str, Any]:
    return {"type": 1, "name": "search", "description": "Find papers", **extra}


def option(name: str = "query", **extra: Any) -> dict[str, Any]:
    return {"type": 3, "name": name, "description": "Words", **extra}


def fields(payload: list[dict[str, Any]]) -> list[str]:
    return [p.field for p in commandcheck.check_commands(payload)]


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (command(name="Search"), "name"),
        (command(name="two words"), "name"),
        (command(name="x" * 33), "name"),
        (command(name="a.b"), "name"),
        (command(description=""), "description"),
        (command(description="d" * 101), "description"),
        (command(name_localizations={"fr": "Chercher"}), "name_localizations[fr]"),
        (command(description_localizations={"fr": "d" * 101}), "description_localizations[fr]"),
        (command(options=[option(f"o{i}") for i in range(26)]), "options"),
        (command(options=[option("Query")]), "option 'Query' name"),
        (command(options=[option(description="")]), "option 'query' description"),
        (
            command(options=[option("a"), option("b", required=True)]),
            "option 'b' required",
        ),
        (
            command(options=[option(choices=[{"name": str(i), "value": "v"} for i in range(26)])]),
            "option 'query' choices",
        ),
        (
            command(options=[option(choices=[{"name": "", "value": "v"}])]),
            "option 'query' choice 0 name",
        ),
        (
            command(options=[option(choices=[{"name": "n", "value": "v" * 101}])]),
            "option 'query' choice 0 value",
        ),
        (command(options=[option(max_length=6001)]), "option 'query' max_length"),
        (
            command(
                options=[
                    {
                        "type": 1,
                        "name": "reload",
                        "description": "d" * 110,
                        "options": [],
                    }
                ]
            ),
            "description",
        ),
        (
            command(
                options=[
                    option(
                        f"o{i}", description="d" * 100, choices=[{"name": "n" * 100, "value": "v"}]
                    )
                    for i in range(20)
                ]
            ),
            "size",
        ),
    ],
)
def test_each_rule_names_the_field(bad: dict[str, Any], field: str) -> None:
    assert field in fields([bad])


def test_subcommands_are_named_as_typed() -> None:
    admin = command(
        name="admin",
        options=[{"type": 1, "name": "reload", "description": "d" * 110, "options": []}],
    )
    (problem,) = commandcheck.check_commands([admin])
    assert str(problem) == "/admin reload: description is 110 characters; Discord allows 1-100"


def test_scope_caps_and_duplicates() -> None:
    many = [command(name=f"c{i}") for i in range(limits.CHAT_INPUT_COMMANDS + 1)]
    assert fields(many) == ["type 1 commands"]
    assert fields([command(), command()]) == ["name"]
    menus = [{"type": 2, "name": f"User Menu {i}", "description": ""} for i in range(16)]
    assert fields(menus) == ["type 2 commands"]
    assert fields(menus[:15] + many[:100]) == []


def test_valid_names_take_any_script_in_lower_case() -> None:
    assert commandcheck.valid_name("größe-2")
    assert commandcheck.valid_name("論文")
    assert not commandcheck.valid_name("Größe")
    assert not commandcheck.valid_name("")


BAD_COG = "tests.app.badcog"


def test_check_fails_naming_command_field_and_limit(
    icml_engine: SearchEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("bot.app.client.cog_modules", lambda: [*cog_modules(), BAD_COG])
    monkeypatch.setattr(
        "bot.search.engine.SearchEngine.load", classmethod(lambda cls, settings: icml_engine)
    )
    out = io.StringIO()
    code = check.run_check(replace(Settings()), out)
    text = out.getvalue()
    assert code == 1, text
    assert "FAIL command /reload: description is 110 characters; Discord allows 1-100" in text
    assert "check failed" in text


def test_installs_and_contexts_are_checked() -> None:
    assert fields([command(integration_types=[0, 1], contexts=[0, 1, 2])]) == []
    assert fields([command(integration_types=[2])]) == ["integration_types"]
    assert fields([command(integration_types=[])]) == ["integration_types"]
    assert fields([command(contexts=[0, 0])]) == ["contexts"]
    assert fields([command(contexts=[3])]) == ["contexts"]

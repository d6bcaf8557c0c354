"""Discord's registration rules, checked on the command payload a sync would send.

Why: Discord refuses the whole bulk overwrite (400, code 50035) when one command breaks one
rule, and discord.py only learns that at sync time, on the live service. Checking the exact
JSON `CommandTree.sync` sends (`Command.to_dict`) lets `python -m bot --check` and the test
suite fail first, naming the command, the field and the limit. The numbers live in
`bot.app.limits`; nothing here imports discord.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.app import limits

CHAT_INPUT, USER, MESSAGE = 1, 2, 3
SUB_COMMAND, SUB_COMMAND_GROUP, STRING = 1, 2, 3


@dataclass(frozen=True)
class Problem:
    """One broken rule: `command` as a user types it, the `field` and what the limit is."""

    command: str
    field: str
    rule: str

    def __str__(self) -> str:
        return f"{self.command}: {self.field} {self.rule}"


def valid_name(name: str) -> bool:
    """Discord's ^[-_\\p{L}\\p{N}]{1,32}$ with every cased letter in lower case."""
    if not 1 <= len(name) <= limits.COMMAND_NAME or name != name.lower():
        return False
    return all(c in "-_" or unicodedata.category(c)[0] in "LN" for c in name)


def _length(value: Any, low: int, high: int) -> str | None:
    """The broken length rule for a string, or None when it holds."""
    size = len(value) if isinstance(value, str) else -1
    if size < 0:
        return f"must be a string of {low}-{high} characters"
    if not low <= size <= high:
        return f"is {size} characters; Discord allows {low}-{high}"
    return None


class _Checker:
    """Collects the problems of one command; `where` is the command as a user types it."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.problems: list[Problem] = []

    def add(self, field: str, rule: str) -> None:
        self.problems.append(Problem(self.where, field, rule))

    def length(self, field: str, value: Any, low: int, high: int) -> None:
        broken = _length(value, low, high)
        if broken:
            self.add(field, broken)

    def name(self, field: str, name: Any) -> None:
        if not isinstance(name, str) or not valid_name(name):
            self.add(
                field,
                f"{name!r} is not 1-{limits.COMMAND_NAME} lower-case letters, digits, - or _",
            )

    def localizations(self, field: str, table: Any, low: int, high: int, *, named: bool) -> None:
        for locale, text in (table or {}).items():
            if named:
                self.name(f"{field}[{locale}]", text)
            else:
                self.length(f"{field}[{locale}]", text, low, high)

    def described(self, prefix: str, item: Mapping[str, Any]) -> None:
        """Name, description and their localizations of a chat-input command or an option."""
        self.name(f"{prefix}name", item.get("name"))
        self.localizations(
            f"{prefix}name_localizations", item.get("name_localizations"), 1, 32, named=True
        )
        high = limits.COMMAND_DESCRIPTION
        self.length(f"{prefix}description", item.get("description"), 1, high)
        self.localizations(
            f"{prefix}description_localizations",
            item.get("description_localizations"),
            1,
            high,
            named=False,
        )

    def options(self, prefix: str, options: Sequence[Mapping[str, Any]]) -> None:
        if len(options) > limits.COMMAND_OPTIONS:
            self.add(f"{prefix}options", f"has {len(options)}; at most {limits.COMMAND_OPTIONS}")
        seen_optional = None
        for option in options:
            kind = option.get("type")
            if kind in (SUB_COMMAND, SUB_COMMAND_GROUP):  # named as typed: "/admin reload"
                sub = _Checker(f"{self.where} {option.get('name')}")
                sub.described("", option)
                sub.options("", option.get("options") or [])
                self.problems += sub.problems
                continue
            label = f"{prefix}option {option.get('name')!r} "
            self.described(label, option)
            if option.get("required"):
                if seen_optional is not None:
                    self.add(
                        f"{label}required",
                        f"comes after the optional option {seen_optional!r}; "
                        "required options go first",
                    )
            elif seen_optional is None:
                seen_optional = option.get("name")
            self.choices(label, kind, option.get("choices") or [])
            for key in ("min_length", "max_length"):
                value = option.get(key)
                if value is not None and not 0 <= value <= limits.OPTION_STRING_LENGTH:
                    self.add(f"{label}{key}", f"is {value}; 0-{limits.OPTION_STRING_LENGTH}")

    def choices(self, prefix: str, kind: Any, choices: Sequence[Mapping[str, Any]]) -> None:
        if len(choices) > limits.OPTION_CHOICES:
            self.add(f"{prefix}choices", f"has {len(choices)}; at most {limits.OPTION_CHOICES}")
        for index, choice in enumerate(choices):
            label = f"{prefix}choice {index} "
            self.length(f"{label}name", choice.get("name"), 1, limits.CHOICE_NAME)
            self.localizations(
                f"{label}name_localizations",
                choice.get("name_localizations"),
                1,
                limits.CHOICE_NAME,
                named=False,
            )
            if kind == STRING:
                self.length(f"{label}value", choice.get("value"), 0, limits.CHOICE_VALUE)


def _texts(item: Mapping[str, Any]) -> Iterable[str]:
    """Every string Discord counts toward the 4,000 characters of one command."""
    for key in ("name", "description"):
        yield str(item.get(key) or "")
    for key in ("name_localizations", "description_localizations"):
        yield from (str(v) for v in (item.get(key) or {}).values())
    for choice in item.get("choices") or []:
        yield str(choice.get("name") or "")
        yield str(choice.get("value") or "")
        yield from (str(v) for v in (choice.get("name_localizations") or {}).values())
    for option in item.get("options") or []:
        yield from _texts(option)


def command_size(command: Mapping[str, Any]) -> int:
    """Characters of a command as Discord counts them toward its 4,000 limit."""
    return sum(len(text) for text in _texts(command))


def check_command(command: Mapping[str, Any]) -> list[Problem]:
    """Every rule one command (`Command.to_dict()` JSON) breaks."""
    kind = command.get("type", CHAT_INPUT)
    checker = _Checker(f"/{command.get('name')}" if kind == CHAT_INPUT else repr(command["name"]))
    if kind == CHAT_INPUT:
        checker.described("", command)
        checker.options("", command.get("options") or [])
    else:  # context menus: any 1-32 characters, no description
        checker.length("name", command.get("name"), 1, limits.COMMAND_NAME)
        if command.get("description"):
            checker.add("description", "must be empty for a context-menu command")
    for field, allowed in (("integration_types", (0, 1)), ("contexts", (0, 1, 2))):
        values = command.get(field)
        if values is not None and (
            not values or len(set(values)) != len(values) or not set(values) <= set(allowed)
        ):
            checker.add(field, f"is {values!r}; Discord takes distinct values of {allowed}")
    size = command_size(command)
    if size > limits.COMMAND_TOTAL:
        checker.add("size", f"is {size} characters in all; Discord allows {limits.COMMAND_TOTAL}")
    return checker.problems


def check_commands(payload: Sequence[Mapping[str, Any]]) -> list[Problem]:
    """Every rule a bulk overwrite of `payload` (one scope) would break."""
    problems: list[Problem] = []
    caps = {
        CHAT_INPUT: limits.CHAT_INPUT_COMMANDS,
        USER: limits.CONTEXT_MENU_COMMANDS,
        MESSAGE: limits.CONTEXT_MENU_COMMANDS,
    }
    seen: dict[tuple[Any, Any], int] = {}
    for command in payload:
        problems += check_command(command)
        key = (command.get("type", CHAT_INPUT), command.get("name"))
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            problems.append(Problem(f"{command.get('name')!r}", "name", "is used twice"))
    for kind, cap in caps.items():
        count = sum(1 for c in payload if c.get("type", CHAT_INPUT) == kind)
        if count > cap:
            problems.append(
                Problem("(all)", f"type {kind} commands", f"are {count}; at most {cap}")
            )
    return problems

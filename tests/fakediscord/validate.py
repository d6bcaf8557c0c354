"""Every request body checked as Discord checks it, before any route handler runs.

A refusal answers 400 with code 50035 and an ``errors`` object naming the field path, exactly
as Discord does, so discord.py raises the ``HTTPException`` (or ``CommandSyncFailure``) it would
raise in production. Two layers: the request schema of the route in Discord's OpenAPI spec
(``spec.py``; every route that has a body) and the rules the spec cannot express, by hand
(here and in ``rules_messages.py``). Always on: tests that need a refused payload send one.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from typing import Any

from . import rules_commands, rules_components, rules_forum
from . import spec as spec_module
from .rules_attachments import RULES as ATTACHMENT_RULES
from .rules_messages import Path, Refusal, message_refusals, too_long

NAME, DESCRIPTION, OPTIONS, CHOICES = 32, 100, 25, 25
CHOICE_NAME, CHOICE_VALUE, COMMAND_TOTAL, CHAT_INPUT_COMMANDS = 100, 100, 4000, 100
THREAD_NAME = 100
CONTEXT_MENU_COMMANDS = 15  # of each kind (user, message) per scope (it was 5)
AUTOCOMPLETE_CHOICES = 25
#: callback types with message data, and the autocomplete result
MESSAGE_CALLBACKS, AUTOCOMPLETE_RESULT = {4, 7}, 8


def errors_object(refusals: list[Refusal]) -> dict[str, Any]:
    """Discord's nested form: {"embeds": {"0": {"title": {"_errors": [{code, message}]}}}}."""
    root: dict[str, Any] = {}
    for refusal in refusals:
        node = root
        for key in refusal.path:
            node = node.setdefault(str(key), {})
        node.setdefault("_errors", []).append({"code": refusal.code, "message": refusal.message})
    return root


def valid_name(name: Any) -> bool:
    if not isinstance(name, str) or not 1 <= len(name) <= NAME or name != name.lower():
        return False
    return all(c in "-_" or unicodedata.category(c)[0] in "LN" for c in name)


def _texts(item: dict[str, Any]) -> Iterator[str]:
    for key in ("name", "description"):
        yield str(item.get(key) or "")
    for key in ("name_localizations", "description_localizations"):
        yield from map(str, (item.get(key) or {}).values())
    for choice in item.get("choices") or []:
        yield str(choice.get("name") or "")
        yield str(choice.get("value") or "")
        yield from map(str, (choice.get("name_localizations") or {}).values())
    for option in item.get("options") or []:
        yield from _texts(option)


def option_refusals(path: Path, options: list[dict[str, Any]]) -> Iterator[Refusal]:
    yield from too_long([*path, "options"], options, OPTIONS)
    optional_seen = False
    for index, option in enumerate(options):
        where = [*path, "options", index]
        if not valid_name(option.get("name")):
            yield Refusal([*where, "name"], "APPLICATION_COMMAND_INVALID_NAME", "Invalid name")
        yield from too_long([*where, "description"], option.get("description"), DESCRIPTION, 1)
        if option.get("type") in (1, 2):
            yield from option_refusals(where, option.get("options") or [])
            continue
        if option.get("required") and optional_seen:
            yield Refusal(
                [*where, "required"],
                "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID",
                "Required options must be placed before non-required options",
            )
        optional_seen = optional_seen or not option.get("required")
        choices = option.get("choices") or []
        yield from too_long([*where, "choices"], choices, CHOICES)
        for c, choice in enumerate(choices):
            at = [*where, "choices", c]
            yield from too_long([*at, "name"], choice.get("name"), CHOICE_NAME, 1)
            if isinstance(choice.get("value"), str):
                yield from too_long([*at, "value"], choice["value"], CHOICE_VALUE)


def command_refusals(
    path: Path, command: dict[str, Any], *, partial: bool = False
) -> list[Refusal]:
    """One command (create, overwrite, or a PATCH's ``partial`` body)."""
    if not isinstance(command, dict):
        return [Refusal(path, "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")]
    found: list[Refusal] = []
    chat_input = command.get("type", 1) == 1
    if chat_input and (not partial or "name" in command) and not valid_name(command.get("name")):
        found.append(Refusal([*path, "name"], "APPLICATION_COMMAND_INVALID_NAME", "Invalid name"))
    if chat_input and (not partial or "description" in command):
        found += too_long([*path, "description"], command.get("description"), DESCRIPTION, 1)
    found += option_refusals(path, command.get("options") or [])
    if sum(len(t) for t in _texts(command)) > COMMAND_TOTAL:
        found.append(
            Refusal(path, "APPLICATION_COMMAND_TOO_LARGE", "Command exceeds maximum size (4000)")
        )
    return found


def overwrite_refusals(body: Any) -> list[Refusal]:
    commands = body if isinstance(body, list) else []
    found: list[Refusal] = []
    for index, command in enumerate(commands):
        found += command_refusals([index], command)
    chat = [c for c in commands if isinstance(c, dict) and c.get("type", 1) == 1]
    found += too_long([], chat, CHAT_INPUT_COMMANDS)
    seen: set[tuple[Any, Any]] = set()
    for index, command in enumerate(commands):
        if not isinstance(command, dict):
            continue
        kind = command.get("type", 1)
        if (kind, command.get("name")) in seen:
            found.append(
                Refusal(
                    [index, "name"],
                    "APPLICATION_COMMANDS_DUPLICATE_NAME",
                    "Application command names must be unique",
                )
            )
        seen.add((kind, command.get("name")))
    for kind in (2, 3):  # user and message context menus
        menus = [c for c in commands if isinstance(c, dict) and c.get("type") == kind]
        found += too_long([], menus, CONTEXT_MENU_COMMANDS)
    return found


def callback_refusals(body: Any) -> list[Refusal]:
    if not isinstance(body, dict):
        return []
    data = body.get("data") or {}
    if body.get("type") in MESSAGE_CALLBACKS:
        return message_refusals(data, ["data"])
    if body.get("type") != AUTOCOMPLETE_RESULT:
        return []
    choices = data.get("choices") or []
    found = list(too_long(["data", "choices"], choices, AUTOCOMPLETE_CHOICES))
    for index, choice in enumerate(choices):
        at: Path = ["data", "choices", index]
        found += too_long([*at, "name"], choice.get("name"), CHOICE_NAME, 1)
        if isinstance(choice.get("value"), str):
            found += too_long([*at, "value"], choice["value"], CHOICE_VALUE)
    return found


def thread_refusals(body: Any) -> list[Refusal]:
    name = body.get("name") if isinstance(body, dict) else None
    return list(too_long(["name"], name, THREAD_NAME, 1))


APP = r"/applications/[^/]+(?:/guilds/[^/]+)?/commands"
HAND_RULES: list[tuple[str, re.Pattern[str], Callable[[Any], list[Refusal]]]] = [
    ("PUT", re.compile(APP), overwrite_refusals),
    ("POST", re.compile(APP), lambda body: command_refusals([], body)),
    ("PATCH", re.compile(APP + r"/[^/]+"), lambda body: command_refusals([], body, partial=True)),
    ("POST", re.compile(r"/channels/[^/]+/messages"), message_refusals),
    ("PATCH", re.compile(r"/channels/[^/]+/messages/[^/]+"), message_refusals),
    ("POST", re.compile(r"/webhooks/[^/]+/[^/]+"), message_refusals),
    ("PATCH", re.compile(r"/webhooks/[^/]+/[^/]+/messages/[^/]+"), message_refusals),
    ("POST", re.compile(r"/interactions/[^/]+/[^/]+/callback"), callback_refusals),
    ("POST", re.compile(r"/channels/[^/]+(?:/messages/[^/]+)?/threads"), thread_refusals),
    *rules_components.HAND_RULES,
    ("POST", re.compile(r"/channels/[^/]+/threads"), rules_forum.thread_body_refusals),
    *rules_commands.RULES,
    *ATTACHMENT_RULES,
]


def refusals(method: str, path: str, body: Any, *, use_spec: bool = True) -> list[Refusal]:
    """Everything Discord would refuse in ``body`` sent as ``method path`` (empty: accepted)."""
    found: list[Refusal] = []
    for rule_method, regex, rule in HAND_RULES:
        if rule_method == method and regex.fullmatch(path):
            found += rule(body)
    spec = spec_module.load() if use_spec else None
    if spec is not None:
        known = {tuple(r.path) for r in found}  # one answer per field, the hand rule's first
        for where, message in spec.errors(method, path, body):
            if tuple(where) not in known:
                found.append(Refusal(list(where), "SPEC", message))
    return found

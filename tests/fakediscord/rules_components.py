"""Discord's rules for Components v2 messages (flag IS_COMPONENTS_V2, 1 << 15), by hand.

Discord's component reference: a message sent with the flag cannot have `content`, `embeds`,
`poll` or `stickers`; it holds at most 40 components, nested ones counted; its text displays
hold 4,000 characters together; a section has 1-3 text displays and exactly one accessory (a
button or a thumbnail); an action row, wherever it sits, holds 1-5 buttons or one select;
custom_ids are 1-100 characters and unique across the message. The flag can be set on an edit
(the old content and embeds then sent empty) but never removed, and the layout components
(section, text display, thumbnail, media gallery, file, separator, container) need it. The
spec says some of this per component; the counts across a message, the exclusions and the
edit rules it cannot say, and without ../shared these rules are all there is.

`refusals` is the stateless part (one line in `validate.HAND_RULES`); `edit_refusals` needs the
message as it is, so `messages.MessageStore.edit` asks it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from .rules_messages import COMPONENTS_V2, CUSTOM_ID, ROW_BUTTONS, SELECTS, Path, Refusal

TOTAL_COMPONENTS = 40
TEXT_TOTAL = 4000
SECTION_TEXTS = 3
ROW, BUTTON, SECTION, TEXT, THUMBNAIL, CONTAINER = 1, 2, 9, 10, 11, 17
LAYOUT_V2 = {SECTION, TEXT, THUMBNAIL, 12, 13, 14, CONTAINER}
LEGACY_FIELDS = ("content", "embeds", "poll", "sticker_ids")
#: callback types whose data is a message: 4 creates one, 7 edits the clicked one
CREATE_CALLBACK, UPDATE_CALLBACK = 4, 7


def is_v2(body: dict[str, Any]) -> bool:
    return bool(int(body.get("flags") or 0) & COMPONENTS_V2)


def walk(components: list[Any], path: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every component with its field path, depth first, accessories included."""
    for index, component in enumerate(components or []):
        if not isinstance(component, dict):
            continue
        where: Path = [*path, index]
        yield where, component
        yield from walk(component.get("components") or [], [*where, "components"])
        accessory = component.get("accessory")
        if isinstance(accessory, dict):
            yield [*where, "accessory"], accessory


def _set(value: Any) -> bool:
    """A field a v2 message may not carry: present and not empty (null, "" and [] clear it)."""
    return value not in (None, "", [], {})


def legacy_refusals(body: dict[str, Any], prefix: Path) -> Iterator[Refusal]:
    for key in LEGACY_FIELDS:
        if _set(body.get(key)):
            yield Refusal(
                [*prefix, key],
                "MESSAGE_COMPONENTS_V2_FIELD_NOT_ALLOWED",
                f"The {key} field cannot be used with the IS_COMPONENTS_V2 flag",
            )


def layout_refusals(body: dict[str, Any], prefix: Path) -> Iterator[Refusal]:
    """The rules of a v2 message's components: count, text, sections, rows, custom_ids."""
    found = list(walk(body.get("components") or [], [*prefix, "components"]))
    if len(found) > TOTAL_COMPONENTS:
        yield Refusal(
            [*prefix, "components"],
            "MESSAGE_COMPONENTS_TOO_MANY",
            f"Must be {TOTAL_COMPONENTS} or fewer in total (nested components count)",
        )
    text = sum(len(str(c.get("content") or "")) for _, c in found if c.get("type") == TEXT)
    if text > TEXT_TOTAL:
        yield Refusal(
            [*prefix, "components"],
            "MESSAGE_COMPONENTS_TEXT_TOO_LONG",
            f"Text display content must be {TEXT_TOTAL} or fewer in length in total",
        )
    seen: set[str] = set()
    for path, component in found:
        kind = component.get("type")
        if kind == SECTION:
            yield from section_refusals(path, component)
        elif kind == ROW and len(path) > len(prefix) + 2:
            yield from row_refusals(path, component)  # top-level rows: rules_messages
        custom_id = component.get("custom_id")
        if custom_id is None:
            continue
        if not isinstance(custom_id, str) or not 1 <= len(custom_id) <= CUSTOM_ID:
            yield Refusal(
                [*path, "custom_id"],
                "BASE_TYPE_BAD_LENGTH",
                f"Must be between 1 and {CUSTOM_ID} in length.",
            )
        elif custom_id in seen:
            yield Refusal(
                [*path, "custom_id"],
                "COMPONENT_CUSTOM_ID_DUPLICATED",
                "Component custom id cannot be duplicated",
            )
        seen.add(str(custom_id))


def section_refusals(path: Path, section: dict[str, Any]) -> Iterator[Refusal]:
    texts = section.get("components") or []
    if not 1 <= len(texts) <= SECTION_TEXTS or any(
        not isinstance(t, dict) or t.get("type") != TEXT for t in texts
    ):
        yield Refusal(
            [*path, "components"],
            "BASE_TYPE_BAD_LENGTH",
            f"A section holds 1 to {SECTION_TEXTS} text displays",
        )
    accessory = section.get("accessory")
    if not isinstance(accessory, dict) or accessory.get("type") not in (BUTTON, THUMBNAIL):
        yield Refusal(
            [*path, "accessory"],
            "BASE_TYPE_REQUIRED",
            "A section needs exactly one accessory: a button or a thumbnail",
        )


def row_refusals(path: Path, row: dict[str, Any]) -> Iterator[Refusal]:
    """An action row nested in a container (a top-level one is checked by rules_messages)."""
    children = row.get("components") or []
    selects = sum(1 for c in children if isinstance(c, dict) and c.get("type") in SELECTS)
    if not children or len(children) > ROW_BUTTONS or (selects and len(children) > 1):
        yield Refusal(
            [*path, "components"],
            "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
            "The specified component exceeds the maximum width",
        )


def top_row_refusals(body: dict[str, Any], prefix: Path) -> Iterator[Refusal]:
    """Top-level rows of a v2 message (rules_messages checks their width in classic ones)."""
    for index, row in enumerate(body.get("components") or []):
        if isinstance(row, dict) and row.get("type") == ROW:
            yield from row_refusals([*prefix, "components", index], row)


def message_refusals(body: Any, prefix: Path, *, create: bool) -> list[Refusal]:
    """A message body's v2 rules; `create`: it makes a new message, so the layout components
    need the flag in this very body (an edit may rely on the message's flag)."""
    if not isinstance(body, dict):
        return []
    if is_v2(body):
        return [
            *legacy_refusals(body, prefix),
            *layout_refusals(body, prefix),
            *top_row_refusals(body, prefix),
        ]
    if not create:
        return []
    return [
        Refusal(
            [*path, "type"],
            "COMPONENT_TYPE_INVALID",
            "This component type needs the IS_COMPONENTS_V2 message flag",
        )
        for path, component in walk(body.get("components") or [], [*prefix, "components"])
        if component.get("type") in LAYOUT_V2
    ]


def callback_refusals(body: Any) -> list[Refusal]:
    if not isinstance(body, dict) or body.get("type") not in (CREATE_CALLBACK, UPDATE_CALLBACK):
        return []
    create = body.get("type") == CREATE_CALLBACK
    return message_refusals(body.get("data") or {}, ["data"], create=create)


def edit_refusals(message: dict[str, Any], body: dict[str, Any]) -> list[Refusal]:
    """What an edit of `message` (as stored) may not do: drop the flag; or leave content or
    embeds on a message that is, or becomes, v2; or add layout components to a classic one."""
    was_v2 = bool(int(message.get("flags") or 0) & COMPONENTS_V2)
    flags = body.get("flags")
    if was_v2 and flags is not None and not int(flags) & COMPONENTS_V2:
        return [
            Refusal(
                ["flags"],
                "MESSAGE_CANNOT_REMOVE_COMPONENTS_V2_FLAG",
                "The IS_COMPONENTS_V2 flag cannot be removed from a message",
            )
        ]
    if is_v2(body):
        found = []  # the body's own rules are the stateless ones (`refusals`)
    elif was_v2:  # the flag stays: the body is held to it without saying so
        found = [
            *legacy_refusals(body, []),
            *layout_refusals(body, []),
            *top_row_refusals(body, []),
        ]
    else:
        return message_refusals(body, [], create=True)
    for key in ("content", "embeds"):
        if key not in body and _set(message.get(key)):
            found.append(
                Refusal(
                    [key],
                    "MESSAGE_COMPONENTS_V2_FIELD_NOT_ALLOWED",
                    f"The message's {key} must be cleared to use the IS_COMPONENTS_V2 flag",
                )
            )
    return found


def _route(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _creating(body: Any) -> list[Refusal]:
    return message_refusals(body, [], create=True)


def _editing(body: Any) -> list[Refusal]:
    return message_refusals(body, [], create=False)


HAND_RULES: list[tuple[str, re.Pattern[str], Callable[[Any], list[Refusal]]]] = [
    ("POST", _route(r"/channels/[^/]+/messages"), _creating),
    ("PATCH", _route(r"/channels/[^/]+/messages/[^/]+"), _editing),
    ("POST", _route(r"/webhooks/[^/]+/[^/]+"), _creating),
    ("PATCH", _route(r"/webhooks/[^/]+/[^/]+/messages/[^/]+"), _editing),
    ("POST", _route(r"/interactions/[^/]+/[^/]+/callback"), callback_refusals),
]

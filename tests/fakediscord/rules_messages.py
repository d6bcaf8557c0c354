"""Discord's message rules by hand: content, embeds, classic components.

Why by hand as well as from the spec: the spec cannot say the 6,000 characters shared by a
message's embeds, the 2,000 of a bot's content (it says 4,000), five classic action rows,
custom_id uniqueness or what a well-formed URL is; and without ../shared these rules are all
there is. The numbers are Discord's documented ones, kept apart from the bot's own
`bot.app.limits` on purpose: this module plays Discord, and a wrong number in the bot must be
refused here, not agreed with.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .spec import well_formed_url

CONTENT = 2000
EMBEDS = 10
EMBED_TOTAL = 6000
EMBED_TEXT = {"title": 256, "description": 4096}
FIELDS, FIELD_NAME, FIELD_VALUE = 25, 256, 1024
FOOTER_TEXT, AUTHOR_NAME = 2048, 256
ROWS, ROW_BUTTONS = 5, 5
CUSTOM_ID, BUTTON_LABEL, PLACEHOLDER = 100, 80, 150
SELECT_OPTIONS, OPTION_TEXT = 25, 100
LINK_STYLE = 5
SELECTS = {3, 5, 6, 7, 8}
COMPONENTS_V2 = 1 << 15

Path = list[str | int]


@dataclass
class Refusal:
    """One broken rule at a field path, worded as Discord words it."""

    path: Path
    code: str
    message: str


def too_long(path: Path, value: Any, high: int, low: int = 0) -> Iterator[Refusal]:
    """A refusal when a string (or list) is outside low..high, as Discord reports it."""
    if value is None:
        if low:
            yield Refusal(path, "BASE_TYPE_REQUIRED", "This field is required")
        return
    size = len(value)
    if size > high or size < low:
        if low:
            message = f"Must be between {low} and {high} in length."
            yield Refusal(path, "BASE_TYPE_BAD_LENGTH", message)
        else:
            yield Refusal(path, "BASE_TYPE_MAX_LENGTH", f"Must be {high} or fewer in length.")


def bad_url(path: Path, url: Any) -> Iterator[Refusal]:
    if url is not None and not well_formed_url(url):
        yield Refusal(path, "URL_TYPE_INVALID_URL", "Not a well formed URL.")


def embed_length(embed: dict[str, Any]) -> int:
    total = len(embed.get("title") or "") + len(embed.get("description") or "")
    for item in embed.get("fields") or []:
        total += len(item.get("name") or "") + len(item.get("value") or "")
    total += len((embed.get("footer") or {}).get("text") or "")
    return total + len((embed.get("author") or {}).get("name") or "")


def embed_refusals(path: Path, embed: dict[str, Any]) -> Iterator[Refusal]:
    for key, high in EMBED_TEXT.items():
        yield from too_long([*path, key], embed.get(key), high)
    yield from bad_url([*path, "url"], embed.get("url"))
    for part in ("image", "thumbnail"):
        yield from bad_url([*path, part, "url"], (embed.get(part) or {}).get("url"))
    fields = embed.get("fields") or []
    yield from too_long([*path, "fields"], fields, FIELDS)
    for index, item in enumerate(fields):
        yield from too_long([*path, "fields", index, "name"], item.get("name"), FIELD_NAME, 1)
        yield from too_long([*path, "fields", index, "value"], item.get("value"), FIELD_VALUE, 1)
    footer = embed.get("footer")
    if footer is not None:
        yield from too_long([*path, "footer", "text"], footer.get("text"), FOOTER_TEXT, 1)
        yield from bad_url([*path, "footer", "icon_url"], footer.get("icon_url"))
    author = embed.get("author")
    if author is not None:
        yield from too_long([*path, "author", "name"], author.get("name"), AUTHOR_NAME, 1)
        yield from bad_url([*path, "author", "url"], author.get("url"))
        yield from bad_url([*path, "author", "icon_url"], author.get("icon_url"))


def button_refusals(path: Path, button: dict[str, Any]) -> Iterator[Refusal]:
    yield from too_long([*path, "label"], button.get("label"), BUTTON_LABEL)
    if button.get("style") == LINK_STYLE:
        if button.get("custom_id") is not None:
            yield Refusal(
                [*path, "custom_id"],
                "BUTTON_COMPONENT_CUSTOM_ID_NOT_ALLOWED",
                "A custom id cannot be set on a link button",
            )
        if button.get("url") is None:
            yield Refusal([*path, "url"], "BASE_TYPE_REQUIRED", "This field is required")
        yield from bad_url([*path, "url"], button.get("url"))
    elif button.get("custom_id") is None:
        yield Refusal([*path, "custom_id"], "BASE_TYPE_REQUIRED", "This field is required")


def select_refusals(path: Path, select: dict[str, Any]) -> Iterator[Refusal]:
    yield from too_long([*path, "placeholder"], select.get("placeholder"), PLACEHOLDER)
    if select.get("type") != 3:
        return
    options = select.get("options")
    yield from too_long([*path, "options"], options or [], SELECT_OPTIONS, 1)
    values: set[str] = set()
    for index, option in enumerate(options or []):
        where = [*path, "options", index]
        yield from too_long([*where, "label"], option.get("label"), OPTION_TEXT, 1)
        yield from too_long([*where, "value"], option.get("value"), OPTION_TEXT, 1)
        yield from too_long([*where, "description"], option.get("description"), OPTION_TEXT)
        if option.get("value") in values:
            yield Refusal(
                [*where, "value"],
                "SELECT_COMPONENT_OPTION_VALUE_DUPLICATED",
                "Select component option values must be unique",
            )
        values.add(option.get("value"))


def component_refusals(body: dict[str, Any], prefix: Path) -> Iterator[Refusal]:
    rows = body.get("components") or []
    classic = not int(body.get("flags") or 0) & COMPONENTS_V2
    if classic:
        yield from too_long([*prefix, "components"], rows, ROWS)
    seen: set[str] = set()
    for r, row in enumerate(rows):
        children = row.get("components") or []
        row_path: Path = [*prefix, "components", r, "components"]
        if classic and row.get("type") == 1:
            selects = sum(1 for c in children if c.get("type") in SELECTS)
            if len(children) > ROW_BUTTONS or (selects and len(children) > 1) or not children:
                yield Refusal(
                    row_path,
                    "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
                    "The specified component exceeds the maximum width",
                )
        for c, child in enumerate(children):
            path: Path = [*row_path, c]
            custom_id = child.get("custom_id")
            if custom_id is not None:
                yield from too_long([*path, "custom_id"], custom_id, CUSTOM_ID, 1)
                if custom_id in seen:
                    yield Refusal(
                        [*path, "custom_id"],
                        "COMPONENT_CUSTOM_ID_DUPLICATED",
                        "Component custom id cannot be duplicated",
                    )
                seen.add(custom_id)
            if child.get("type") == 2:
                yield from button_refusals(path, child)
            elif child.get("type") in SELECTS:
                yield from select_refusals(path, child)


def message_refusals(body: Any, prefix: Path | None = None) -> list[Refusal]:
    """Every rule a create/edit-message body (or an interaction callback's data) breaks."""
    if not isinstance(body, dict):
        return []
    prefix = list(prefix or [])
    found = list(too_long([*prefix, "content"], body.get("content"), CONTENT))
    embeds = body.get("embeds") or []
    found += too_long([*prefix, "embeds"], embeds, EMBEDS)
    for index, embed in enumerate(embeds):
        found += embed_refusals([*prefix, "embeds", index], embed)
    if sum(embed_length(e) for e in embeds) > EMBED_TOTAL:
        found.append(
            Refusal(
                [*prefix, "embeds"],
                "MAX_EMBED_SIZE_EXCEEDED",
                f"Embed size exceeds maximum size of {EMBED_TOTAL}",
            )
        )
    found += component_refusals(body, prefix)
    return found

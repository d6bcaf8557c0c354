"""Every Discord length limit, and the one place that cuts text to fit them.

Discord rejects a whole message (HTTP 400) when any part is one character too long, so every
string that reaches Discord passes through here. Cuts fall on a word boundary and end with "…",
and never leave a `**bold**` run or a `[masked](link)` half open. Nothing here imports
`discord`: the functions work on plain strings and on embed dicts (`Embed.to_dict()`), so they
are easy to test exhaustively.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

EMBED_TITLE = 256
EMBED_DESCRIPTION = 4096
EMBED_FIELDS = 25
FIELD_NAME = 256
FIELD_VALUE = 1024
EMBED_FOOTER = 2048
EMBED_AUTHOR = 256
EMBED_TOTAL = 6000  # all embeds of one message together
EMBEDS_PER_MESSAGE = 10
CONTENT = 2000
CHOICES = 25
CHOICE_NAME = 100
CHOICE_VALUE = 100
CUSTOM_ID = 100
SELECT_OPTIONS = 25
OPTION_LABEL = 100
OPTION_VALUE = 100
OPTION_DESCRIPTION = 100
BUTTON_LABEL = 80
LINK_URL = 512  # a link button's url
THREAD_NAME = 100
ACTION_ROWS = 5  # classic action rows in one message
ROW_BUTTONS = 5  # buttons in one action row
SELECT_PLACEHOLDER = 150
AUTOCOMPLETE_CHOICES = 25
ELLIPSIS = "…"

# Registration rules (application commands), checked by bot.app.commandcheck. A command or
# option name is 1-32 of `-`, `_`, letters and digits (Discord: ^[-_\p{L}\p{N}]{1,32}$), in
# lower case; context-menu names may hold spaces and capitals.
COMMAND_NAME = 32
COMMAND_DESCRIPTION = 100  # and at least 1, for chat-input commands and every option
COMMAND_OPTIONS = 25  # per command, subcommand group or subcommand
OPTION_CHOICES = 25
OPTION_STRING_LENGTH = 6000  # an option's min_length / max_length
COMMAND_TOTAL = 4000  # name, description, options, choices and localizations of one command
CHAT_INPUT_COMMANDS = 100  # per scope (global, or one guild)
CONTEXT_MENU_COMMANDS = 15  # user commands, and message commands, per scope (5 before 2024)

# Never end a cut inside a masked link: drop a trailing unfinished "[text](url" piece.
_OPEN_LINK = re.compile(r"\[[^\]]*(\]\([^)]*)?$")


def _close_markup(text: str) -> str:
    """Drop a dangling `**` or an unfinished masked link left at the end of a cut.

    Each removal can expose the other (a link cut may leave a `**` unpaired), so both are
    applied until neither changes the text.
    """
    while True:
        before = text
        if text.count("**") % 2:
            text = text[: text.rfind("**")]
        match = _OPEN_LINK.search(text)
        if match and "](" in match.group(0):
            text = text[: match.start()]
        text = text.rstrip()
        if text == before:
            return text


def truncate(text: str | None, limit: int, *, markdown: bool = False) -> str:
    """`text` cut to at most `limit` characters at a word boundary, ending with "…".

    A single word longer than the room left is cut mid-word rather than dropped. With
    `markdown`, the cut also closes bold runs and drops a half masked link.
    """
    text = (text or "").strip()
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    if limit <= len(ELLIPSIS):
        return ELLIPSIS[:limit]
    room = limit - len(ELLIPSIS)
    cut = text[: room + 1]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    piece = cut[:space] if space > room // 2 else text[:room]
    piece = piece.rstrip(" \n,;:-–—(")
    if markdown:
        piece = _close_markup(piece)
    return piece + ELLIPSIS


def join_limited(
    items: Sequence[str], limit: int, sep: str = ", ", more: str = "and {n} more"
) -> str:
    """Items joined by `sep` while they fit, then "and N more" (for long author lists)."""
    out: list[str] = []
    for i, item in enumerate(items):
        rest = len(items) - i - 1
        tail = (sep + more.format(n=rest)) if rest else ""
        candidate = sep.join([*out, item])
        if len(candidate) + len(tail) <= limit:
            out.append(item)
            continue
        if not out:  # not even the first fits: cut it
            return truncate(item, limit)
        return truncate(sep.join(out) + sep + more.format(n=len(items) - i), limit)
    return sep.join(out)


def custom_id(*parts: object) -> str:
    """The custom_id `p1:p2:...` of a component: the one builder every component uses.

    Templates split on ":", so no part but the last may hold one (the last is read with `.+`).
    Raises ValueError instead of cutting: a custom_id carries state that must come back whole;
    callers that may overflow measure first with `custom_id_room`.
    """
    texts = [str(part) for part in parts]
    if any(":" in text for text in texts[:-1]):
        raise ValueError(f"custom_id part holds ':': {texts!r}")
    value = ":".join(texts)
    if not 1 <= len(value) <= CUSTOM_ID:
        raise ValueError(f"custom_id of {len(value)} characters (1-{CUSTOM_ID}): {value[:120]!r}")
    return value


def custom_id_room(*head: object) -> int:
    """Characters left for a last part after `head` (and its ":") in a custom_id."""
    return CUSTOM_ID - len(custom_id(*head)) - 1


def embed_length(embed: dict[str, Any]) -> int:
    """Characters Discord counts toward the 6000 limit (as discord.Embed.__len__ does)."""
    total = len(embed.get("title", "") or "") + len(embed.get("description", "") or "")
    for field in embed.get("fields", []) or []:
        total += len(field.get("name", "") or "") + len(field.get("value", "") or "")
    total += len((embed.get("footer") or {}).get("text", "") or "")
    total += len((embed.get("author") or {}).get("name", "") or "")
    return total


def fit_embed(embed: Mapping[str, Any], budget: int = EMBED_TOTAL) -> dict[str, Any]:
    """A copy of `embed` within every per-part limit and within `budget` characters in all.

    When over budget, the description shrinks first (it holds the abstract or the hit list),
    then fields are dropped from the end, then the footer is cut.
    """
    out = dict(embed)
    if "title" in out:
        out["title"] = truncate(out["title"], EMBED_TITLE)
    if "description" in out:
        out["description"] = truncate(out["description"], EMBED_DESCRIPTION, markdown=True)
    if out.get("footer"):
        out["footer"] = {**out["footer"], "text": truncate(out["footer"].get("text"), EMBED_FOOTER)}
    if out.get("author"):
        out["author"] = {**out["author"], "name": truncate(out["author"].get("name"), EMBED_AUTHOR)}
    fields = []
    for field in (out.get("fields") or [])[:EMBED_FIELDS]:
        fields.append(
            {
                **field,
                "name": truncate(field.get("name"), FIELD_NAME) or "\u200b",
                "value": truncate(field.get("value"), FIELD_VALUE, markdown=True) or "\u200b",
            }
        )
    if "fields" in out:
        out["fields"] = fields
    excess = embed_length(out) - budget
    if excess > 0 and out.get("description"):
        keep = max(0, len(out["description"]) - excess)
        out["description"] = truncate(out["description"], keep, markdown=True)
        excess = embed_length(out) - budget
    while excess > 0 and out.get("fields"):
        out["fields"] = out["fields"][:-1]
        excess = embed_length(out) - budget
    if excess > 0 and out.get("footer"):
        text = out["footer"].get("text", "")
        out["footer"] = {**out["footer"], "text": truncate(text, max(0, len(text) - excess))}
        excess = embed_length(out) - budget
    if excess > 0 and out.get("title"):
        out["title"] = truncate(out["title"], max(1, len(out["title"]) - excess))
    return out


def fit_embeds(embeds: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """At most 10 embeds sharing the 6000-character message budget, earlier ones first."""
    out: list[dict[str, Any]] = []
    left = EMBED_TOTAL
    for embed in list(embeds)[:EMBEDS_PER_MESSAGE]:
        fitted = fit_embed(embed, budget=left)
        left -= embed_length(fitted)
        out.append(fitted)
    return out

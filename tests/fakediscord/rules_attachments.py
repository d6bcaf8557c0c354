"""Attachment options as Discord serves and checks them.

Serving: a user's file in a slash command's attachment option (type 11) arrives as the option's
value (the attachment's id) and an attachment object in ``data.resolved.attachments`` (id,
filename, size, url, proxy_url, content_type, ephemeral), and the bot downloads it from the
CDN URL without a token. Here the file is kept in the world's file store and served on
loopback (``/cdn/attachments/...``), so discord.py's ``Attachment.read()`` runs for real.

Refusing (Discord's "Application Command Option Structure"): ``choices`` only on STRING,
INTEGER and NUMBER options; ``autocomplete`` only on those; ``min_value``/``max_value`` only on
INTEGER and NUMBER; ``min_length``/``max_length`` only on STRING; ``channel_types`` only on
CHANNEL. An attachment option carrying any of them is a 400 / 50035 on that field.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from .models import JSON, snowflake
from .rules_messages import Path, Refusal
from .world import World

ATTACHMENT = 11
#: option fields an attachment option may not carry, and the option types that may
NOT_ON_ATTACHMENTS = {
    "choices": "STRING, INTEGER and NUMBER",
    "autocomplete": "STRING, INTEGER and NUMBER",
    "min_value": "INTEGER and NUMBER",
    "max_value": "INTEGER and NUMBER",
    "min_length": "STRING",
    "max_length": "STRING",
    "channel_types": "CHANNEL",
}


@dataclass(frozen=True)
class FakeFile:
    """A file a user attaches to a slash command option: ``fake.slash(name, {"file":
    FakeFile(...)})``. ``size`` overrides the announced size (Discord announces it; the bot
    may refuse before downloading)."""

    filename: str
    data: bytes
    content_type: str = "application/octet-stream"
    size: int | None = None


def resolve_attachment(world: World, value: FakeFile, resolved: JSON) -> str:
    """Store ``value`` for download and add its attachment object to ``resolved``; the
    option's wire value (the attachment id)."""
    attachment_id = snowflake()
    url = f"{world.messages.cdn_base}/ephemeral-attachments/0/{attachment_id}/{value.filename}"
    world.messages.file_data[attachment_id] = value.data
    resolved.setdefault("attachments", {})[attachment_id] = {
        "id": attachment_id,
        "filename": value.filename,
        "size": len(value.data) if value.size is None else value.size,
        "url": url,
        "proxy_url": url,
        "content_type": value.content_type,
        "ephemeral": True,
    }
    return attachment_id


def add_cdn_route(app: web.Application, world: World) -> None:
    """GET the bytes of a user's attached file (no token, as on Discord's CDN)."""

    async def download(request: web.Request) -> web.Response:
        data = world.messages.file_data.get(request.match_info["attachment_id"])
        if data is None:
            return web.Response(status=404, text="Not Found")
        return web.Response(body=data, content_type="application/octet-stream")

    app.router.add_get("/cdn/ephemeral-attachments/{channel}/{attachment_id}/{filename}", download)


def _options(path: Path, options: Any) -> Iterator[Refusal]:
    for index, option in enumerate(options if isinstance(options, list) else []):
        if not isinstance(option, dict):
            continue
        where: Path = [*path, "options", index]
        if option.get("type") in (1, 2):
            yield from _options(where, option.get("options"))
            continue
        if option.get("type") != ATTACHMENT:
            continue
        for key, allowed in NOT_ON_ATTACHMENTS.items():
            if key in option and option[key] not in (None, False, []):
                yield Refusal(
                    [*where, key],
                    "APPLICATION_COMMAND_OPTION_INVALID",
                    f"{key} is only allowed for options of type {allowed}",
                )


def attachment_option_refusals(body: Any) -> list[Refusal]:
    """Refusals for attachment options in a command (POST/PATCH) or a list of them (PUT)."""
    if isinstance(body, list):
        return [
            r
            for i, c in enumerate(body)
            if isinstance(c, dict)
            for r in _options([i], c.get("options"))
        ]
    return list(_options([], body.get("options"))) if isinstance(body, dict) else []


APP = r"/applications/[^/]+(?:/guilds/[^/]+)?/commands"
RULES: list[tuple[str, re.Pattern[str], Callable[[Any], list[Refusal]]]] = [
    ("PUT", re.compile(APP), attachment_option_refusals),
    ("POST", re.compile(APP), attachment_option_refusals),
    ("PATCH", re.compile(APP + r"/[^/]+"), attachment_option_refusals),
]

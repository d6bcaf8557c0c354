"""Messages as Discord stores them: built from the JSON (and files) a bot sends, then edited."""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from . import rules_components
from .models import JSON, FakeChannel, FakeUser, iso_now, snowflake
from .recorder import Recorder

EPHEMERAL = 1 << 6
LOADING = 1 << 7
#: Message flags a client may set when creating or editing a message.
SETTABLE_FLAGS = (1 << 2) | EPHEMERAL | (1 << 12) | (1 << 15)


@dataclass
class Upload:
    """A file part of a multipart request."""

    field: str
    filename: str
    content_type: str
    data: bytes


def iter_components(components: list[JSON] | None) -> Iterator[JSON]:
    """Every component, depth first, including those nested in rows, sections and containers."""
    for component in components or []:
        yield component
        yield from iter_components(component.get("components"))
        accessory = component.get("accessory")
        if accessory:
            yield accessory
        inner = component.get("component")
        if inner:
            yield inner


def find_component(components: list[JSON] | None, custom_id: str) -> JSON | None:
    for component in iter_components(components):
        if component.get("custom_id") == custom_id:
            return component
    return None


def _embeds(raw: list[JSON] | None) -> list[JSON]:
    embeds = []
    for embed in raw or []:
        embed = {k: v for k, v in embed.items() if v is not None}
        embed.setdefault("type", "rich")
        embeds.append(embed)
    return embeds


NONCE_WINDOW = 300.0  # Discord: "within the past few minutes"


class MessageStore:
    """Every message in the fake world, by id, plus per-channel history in posting order."""

    def __init__(self, cdn_base: str = "http://127.0.0.1/cdn") -> None:
        self.cdn_base = cdn_base
        self.by_id: dict[str, JSON] = {}
        self.history: dict[str, Recorder[JSON]] = {}
        self.deleted: set[str] = set()
        self.file_data: dict[str, bytes] = {}
        # (channel, author, nonce) -> (message id, monotonic time): enforce_nonce's memory.
        self.nonces: dict[tuple[str, str, str], tuple[str, float]] = {}

    def channel(self, channel_id: str) -> Recorder[JSON]:
        if channel_id not in self.history:
            self.history[channel_id] = Recorder(f"message in channel {channel_id}")
        return self.history[channel_id]

    def remember_nonce(self, message: JSON, nonce: str) -> None:
        key = (message["channel_id"], message["author"]["id"], nonce)
        self.nonces[key] = (message["id"], time.monotonic())

    def by_nonce(self, channel_id: str, author_id: str, nonce: str) -> JSON | None:
        """The message created with `nonce` in the past NONCE_WINDOW seconds, if any."""
        found = self.nonces.get((channel_id, author_id, nonce))
        if found is None or time.monotonic() - found[1] > NONCE_WINDOW:
            return None
        message = self.by_id.get(found[0])
        return None if message is None or message["id"] in self.deleted else message

    def visible(self, channel_id: str) -> list[JSON]:
        return [m for m in self.channel(channel_id) if m["id"] not in self.deleted]

    def _attachments(
        self, channel_id: str, declared: list[JSON] | None, uploads: list[Upload], keep: list[JSON]
    ) -> list[JSON]:
        declared_by_index = {str(a.get("id")): a for a in declared or []}
        result = list(keep)
        for index, upload in enumerate(uploads):
            key = upload.field.removeprefix("files[").removesuffix("]")
            meta = declared_by_index.get(key) or declared_by_index.get(str(index)) or {}
            attachment_id = snowflake()
            filename = meta.get("filename") or upload.filename
            url = f"{self.cdn_base}/attachments/{channel_id}/{attachment_id}/{filename}"
            attachment: JSON = {
                "id": attachment_id,
                "filename": filename,
                "size": len(upload.data),
                "url": url,
                "proxy_url": url,
                "content_type": upload.content_type,
            }
            if meta.get("description"):
                attachment["description"] = meta["description"]
            self.file_data[attachment_id] = upload.data
            result.append(attachment)
        return result

    def create(
        self,
        body: JSON,
        *,
        channel: FakeChannel,
        author: FakeUser,
        uploads: Sequence[Upload] = (),
        type: int = 0,
        extra_flags: int = 0,
        public: bool = True,
        **extra: Any,
    ) -> JSON:
        """Store a new message built from a create-message body; ``public`` puts it in history."""
        flags = (int(body.get("flags") or 0) & SETTABLE_FLAGS) | extra_flags
        message: JSON = {
            "id": snowflake(),
            "type": type,
            "channel_id": channel.id,
            "author": author.to_json(),
            "content": body.get("content") or "",
            "timestamp": iso_now(),
            "edited_timestamp": None,
            "tts": bool(body.get("tts", False)),
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "mention_channels": [],
            "attachments": self._attachments(
                channel.id, body.get("attachments"), list(uploads), []
            ),
            "embeds": _embeds(body.get("embeds")),
            "components": copy.deepcopy(body.get("components") or []),
            "reactions": [],
            "pinned": False,
            "flags": flags,
        }
        if channel.guild_id:
            message["guild_id"] = channel.guild_id
        if body.get("poll"):
            message["poll"] = copy.deepcopy(body["poll"])
        reference = body.get("message_reference")
        if reference and reference.get("message_id"):
            message["type"] = 19
            message["message_reference"] = {
                "type": 0,
                "message_id": str(reference["message_id"]),
                "channel_id": str(reference.get("channel_id") or channel.id),
                **({"guild_id": channel.guild_id} if channel.guild_id else {}),
            }
            referenced = self.by_id.get(str(reference["message_id"]))
            message["referenced_message"] = copy.deepcopy(referenced)
        message.update(extra)
        self.by_id[message["id"]] = message
        if public and not flags & EPHEMERAL:
            channel.last_message_id = message["id"]
            self.channel(channel.id).append(message)
        return message

    def edit(self, message_id: str, body: JSON, uploads: Sequence[Upload] = ()) -> JSON:
        """Apply an edit body in place (only the keys present) and return the message."""
        message = self.by_id[message_id]
        refused = rules_components.edit_refusals(message, body)
        if refused:  # what Discord refuses given the message as it is (the v2 flag)
            from .rest import invalid_form_body  # rest imports this module

            raise invalid_form_body(refused)
        if "content" in body:
            message["content"] = body["content"] or ""
        if "embeds" in body:
            message["embeds"] = _embeds(body["embeds"])
        if "components" in body:
            message["components"] = copy.deepcopy(body["components"] or [])
        if "flags" in body and body["flags"] is not None:
            kept = message["flags"] & ~SETTABLE_FLAGS
            message["flags"] = (
                kept | (int(body["flags"]) & SETTABLE_FLAGS) | (message["flags"] & EPHEMERAL)
            )
        if "poll" in body:
            message["poll"] = body["poll"]
        if "attachments" in body or uploads:
            if "attachments" in body:
                old = {a["id"]: a for a in message["attachments"]}
                keep = [old[str(a["id"])] for a in body["attachments"] or [] if str(a["id"]) in old]
                declared = [a for a in body["attachments"] or [] if str(a["id"]) not in old]
            else:
                keep, declared = list(message["attachments"]), []
            message["attachments"] = self._attachments(
                message["channel_id"], declared, list(uploads), keep
            )
        message["flags"] &= ~LOADING
        message["edited_timestamp"] = iso_now()
        self.channel(message["channel_id"]).notify()
        return message

    def delete(self, message_id: str) -> None:
        self.deleted.add(message_id)
        message = self.by_id.get(message_id)
        if message is not None:
            self.channel(message["channel_id"]).notify()

    def get(self, message_id: str) -> JSON | None:
        if message_id in self.deleted:
            return None
        return self.by_id.get(message_id)

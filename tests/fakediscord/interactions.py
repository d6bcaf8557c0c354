"""Interaction payloads a user's action produces, and the handle a test awaits answers on."""

from __future__ import annotations

import asyncio
import copy
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import rules_commands
from .messages import EPHEMERAL, Upload, iter_components
from .models import JSON, FakeChannel, FakeGuild, FakeRole, FakeUser, snowflake
from .recorder import Recorder
from .rules_attachments import FakeFile, resolve_attachment
from .world import World

PING, COMMAND, COMPONENT, AUTOCOMPLETE, MODAL_SUBMIT = 1, 2, 3, 4, 5
# callback types
MESSAGE, DEFERRED_MESSAGE, DEFERRED_UPDATE, UPDATE_MESSAGE, AUTOCOMPLETE_RESULT, MODAL = (
    4,
    5,
    6,
    7,
    8,
    9,
)
STRING, INTEGER, BOOLEAN, USER, CHANNEL, ROLE, MENTIONABLE, NUMBER, ATTACHMENT = (
    3,
    4,
    5,
    6,
    7,
    8,
    9,
    10,
    11,
)


@dataclass
class Reply:
    """Something the bot did in answer to an interaction.

    ``kind`` is ``"callback"`` (``type`` is the callback type 4-9), ``"followup"``, ``"edit"``
    (of @original or a follow-up; ``target`` is the message id) or ``"delete"``. ``body`` is the
    exact JSON the bot sent; ``message`` a snapshot of the resulting message, if any.
    """

    kind: str
    body: JSON
    message: JSON | None = None
    type: int | None = None
    target: str | None = None
    uploads: list[Upload] = field(default_factory=list)

    @property
    def data(self) -> JSON:
        """The message-like part: ``body["data"]`` for callbacks, else the body."""
        if self.kind == "callback":
            return self.body.get("data") or {}
        return self.body

    @property
    def content(self) -> str:
        return self.data.get("content") or ""

    @property
    def embeds(self) -> list[JSON]:
        return self.data.get("embeds") or []

    @property
    def embed(self) -> JSON:
        assert self.embeds, f"reply has no embed: {self.body}"
        return self.embeds[0]

    @property
    def components(self) -> list[JSON]:
        return self.data.get("components") or []

    @property
    def custom_ids(self) -> list[str]:
        return [c["custom_id"] for c in iter_components(self.components) if "custom_id" in c]

    @property
    def flags(self) -> int:
        if self.message is not None:
            return int(self.message.get("flags") or 0)
        return int(self.data.get("flags") or 0)

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & EPHEMERAL)

    @property
    def choices(self) -> list[JSON]:
        """Autocomplete choices (callback type 8)."""
        return self.data.get("choices") or []


class InteractionHandle:
    """One interaction sent to the bot. Await its answers::

    reply = await handle.response()          # the callback (type 4..9)
    edit = await handle.edit()               # first edit of @original / a follow-up
    follow = await handle.followup()         # first follow-up message
    """

    def __init__(self, payload: JSON, user: FakeUser, channel: FakeChannel) -> None:
        self.payload = payload
        self.user = user
        self.channel = channel
        self.id: str = payload["id"]
        self.token: str = payload["token"]
        self.type: int = payload["type"]
        self.replies: Recorder[Reply] = Recorder(f"reply to interaction {self.id}")
        self.callback_type: int | None = None
        self.original_id: str | None = None
        self.source_message_id: str | None = (payload.get("message") or {}).get("id")
        self.followup_ids: list[str] = []
        self.created_at = asyncio.get_running_loop().time()

    def __repr__(self) -> str:
        return f"<InteractionHandle type={self.type} id={self.id} replies={len(self.replies)}>"

    @property
    def acknowledged(self) -> bool:
        return self.callback_type is not None

    async def wait(
        self,
        kind: str | None = None,
        *,
        index: int = 0,
        predicate: Callable[[Reply], bool] | None = None,
        timeout: float = 2.0,
    ) -> Reply:
        def match(reply: Reply) -> bool:
            return (kind is None or reply.kind == kind) and (predicate is None or predicate(reply))

        return await self.replies.wait_for(match, index=index, timeout=timeout, describe=kind or "")

    async def response(self, timeout: float = 2.0) -> Reply:
        return await self.wait("callback", timeout=timeout)

    async def followup(self, index: int = 0, timeout: float = 2.0) -> Reply:
        return await self.wait("followup", index=index, timeout=timeout)

    async def edit(self, index: int = 0, timeout: float = 2.0) -> Reply:
        return await self.wait("edit", index=index, timeout=timeout)

    async def assert_answered(
        self, timeout: float = 2.0, *, type: int | None = None, ephemeral: bool | None = None
    ) -> Reply:
        """The callback; fails if none arrives within ``timeout`` or it has the wrong type/flags."""
        reply = await self.response(timeout)
        if type is not None:
            assert reply.type == type, f"expected callback type {type}, got {reply.type}: {reply}"
        if ephemeral is not None:
            assert reply.ephemeral == ephemeral, f"expected ephemeral={ephemeral}: {reply}"
        return reply

    async def settle(self, quiet: float = 0.1, timeout: float = 3.0) -> list[Reply]:
        """All replies once none has arrived for ``quiet`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        seen = -1
        while len(self.replies) != seen and loop.time() < deadline:
            seen = len(self.replies)
            await asyncio.sleep(quiet)
        return list(self.replies)


# payload building ------------------------------------------------------------------------------


def _infer_type(value: Any) -> int:
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, int):
        return INTEGER
    if isinstance(value, float):
        return NUMBER
    if isinstance(value, FakeChannel):
        return CHANNEL
    if isinstance(value, FakeUser):
        return USER
    if isinstance(value, FakeRole):
        return ROLE
    if isinstance(value, FakeFile):
        return ATTACHMENT
    return STRING


def _resolve(world: World, guild: FakeGuild | None, otype: int, value: Any, resolved: JSON) -> Any:
    """Add the resolved object for a snowflake option; returns the option's wire value."""
    if isinstance(value, FakeChannel | FakeUser | FakeRole):
        value = value.id
    value = str(value)
    channel = world.channel(value) if otype in (CHANNEL, MENTIONABLE) else None
    user = world.user(value) if otype in (USER, MENTIONABLE) else None
    role = None
    if guild is not None and otype in (ROLE, MENTIONABLE):
        role = next((r for r in guild.roles if r.id == value), None)
    if channel is not None:
        data = channel.to_json()
        if guild is not None:
            data["permissions"] = str(guild.permissions_of(world.bot_user.id))
        resolved.setdefault("channels", {})[value] = data
    if user is not None:
        resolved.setdefault("users", {})[value] = user.to_json()
        if guild is not None and value in guild.members:
            member = guild.member_json(value, with_permissions=True)
            member.pop("user")
            resolved.setdefault("members", {})[value] = member
    if role is not None:
        resolved.setdefault("roles", {})[value] = role.to_json()
    return value


def build_options(
    world: World,
    guild: FakeGuild | None,
    values: dict[str, Any],
    definitions: list[JSON],
    resolved: JSON,
    focused: str | None = None,
) -> list[JSON]:
    options = []
    for name, value in values.items():
        definition = next((d for d in definitions if d.get("name") == name), None)
        otype = definition["type"] if definition else _infer_type(value)
        option: JSON = {"name": name, "type": otype}
        if name == focused:
            option["focused"] = True
            option["value"] = value if isinstance(value, str) else str(value)
        elif isinstance(value, FakeFile):
            option["value"] = resolve_attachment(world, value, resolved)
        elif otype in (USER, CHANNEL, ROLE, MENTIONABLE, ATTACHMENT):
            option["value"] = _resolve(world, guild, otype, value, resolved)
        elif otype == INTEGER:
            option["value"] = int(value)
        elif otype == NUMBER:
            option["value"] = float(value)
        elif otype == BOOLEAN:
            option["value"] = bool(value)
        else:
            option["value"] = str(value)
        options.append(option)
    return options


def base_payload(
    world: World,
    type: int,
    user: FakeUser,
    channel: FakeChannel,
    locale: str | None,
    *,
    user_install: bool = False,
) -> JSON:
    guild = rules_commands.guild_of(world, channel)
    payload: JSON = {
        "id": snowflake(),
        "application_id": world.application_id,
        "type": type,
        "token": f"fake-interaction-{secrets.token_urlsafe(24)}",
        "version": 1,
        "channel_id": channel.id,
        "channel": channel.to_json(),
        "app_permissions": str(world.app_permissions(guild)),
        "locale": locale or user.locale,
        "entitlements": [],
        "entitlement_sku_ids": [],
        "attachment_size_limit": 10 * 1024 * 1024,
    }
    if guild is not None:
        if user.id not in guild.members:
            guild.add_member(user)
        payload["channel"]["permissions"] = str(guild.permissions_of(user.id))
    payload.update(
        rules_commands.place_fields(world, channel, user, user_install=user_install, guild=guild)
    )
    return payload


def command_payload(
    world: World,
    type: int,
    path: list[str],
    options: dict[str, Any],
    user: FakeUser,
    channel: FakeChannel,
    *,
    locale: str | None = None,
    focused: str | None = None,
    command_guild_id: str | None = None,
    user_install: bool = False,
) -> JSON:
    """A type 2 (slash) or type 4 (autocomplete) payload for ``path`` = [command, group?, sub?]."""
    payload = base_payload(world, type, user, channel, locale, user_install=user_install)
    guild = world.guild_of(channel)
    command = world.find_command(path[0], guild.id if guild else None)
    if command_guild_id is None and command is not None:
        command_guild_id = command.get("guild_id")
    definitions: list[JSON] = command["options"] if command else []
    kinds: list[int] = []
    for name in path[1:]:
        definition = next((d for d in definitions if d.get("name") == name), None)
        kinds.append(definition["type"] if definition else 0)
        definitions = (definition or {}).get("options") or []
    if kinds and 0 in kinds:
        kinds = [2, 1] if len(kinds) == 2 else [1]
    resolved: JSON = {}
    wire = build_options(world, guild, options, definitions, resolved, focused)
    for name, kind in reversed(list(zip(path[1:], kinds, strict=True))):
        wire = [{"name": name, "type": kind, "options": wire}]
    data: JSON = {
        "id": command["id"] if command else world.stable_command_id(path[0]),
        "name": path[0],
        "type": 1,
        "options": wire,
    }
    if resolved:
        data["resolved"] = resolved
    if command_guild_id:
        data["guild_id"] = command_guild_id
    payload["data"] = data
    return payload


def component_payload(
    world: World,
    message: JSON,
    custom_id: str,
    component_type: int,
    user: FakeUser,
    values: list[str] | None,
    *,
    locale: str | None = None,
) -> JSON:
    channel = world.channel(message["channel_id"]) or rules_commands.outside_channel(
        world, message["channel_id"]
    )
    assert channel is not None, f"unknown channel {message['channel_id']}"
    payload = base_payload(world, COMPONENT, user, channel, locale)
    payload["message"] = copy.deepcopy(message)
    data: JSON = {"custom_id": custom_id, "component_type": component_type}
    if values is not None:
        data["values"] = [str(v) for v in values]
        if component_type in (5, 6, 7, 8):
            resolved: JSON = {}
            kind = {5: USER, 6: ROLE, 7: MENTIONABLE, 8: CHANNEL}[component_type]
            guild = world.guild_of(channel)
            for value in values:
                _resolve(world, guild, kind, value, resolved)
            data["resolved"] = resolved
    payload["data"] = data
    return payload


def modal_components(modal: JSON, values: dict[str, Any]) -> list[JSON]:
    """The submitted components for a modal the bot opened (callback type 9 data)."""

    def submitted(component: JSON) -> JSON | None:
        custom_id = component.get("custom_id")
        if custom_id is None:
            return None
        value = values.get(custom_id, component.get("value", ""))
        out: JSON = {"type": component["type"], "custom_id": custom_id}
        if component["type"] == 4:
            out["value"] = str(value)
        else:
            out["values"] = [str(v) for v in (value if isinstance(value, list) else [value])]
        return out

    result = []
    for row in modal.get("components") or []:
        if row.get("type") == 1:
            inner = [s for c in row.get("components") or [] if (s := submitted(c))]
            result.append({"type": 1, "components": inner})
        elif row.get("type") == 18 and row.get("component"):
            item = submitted(row["component"])
            if item is not None:
                result.append({"type": 18, "component": item})
    return result

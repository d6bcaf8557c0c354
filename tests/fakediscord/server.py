"""``FakeDiscord``: the loopback REST + Gateway server and the test-facing API."""

from __future__ import annotations

import copy
import logging
from typing import Any

from aiohttp import web

from . import routes_app, routes_channels, routes_interactions, rules_attachments, rules_commands
from .faults import Faults
from .gateway import Gateway
from .interactions import (
    AUTOCOMPLETE,
    COMMAND,
    MODAL,
    MODAL_SUBMIT,
    InteractionHandle,
    Reply,
    base_payload,
    command_payload,
    component_payload,
    modal_components,
)
from .messages import find_component, iter_components
from .models import JSON, FakeChannel, FakeGuild, FakeUser
from .rest import Call, RestServer
from .world import CommandSync, World

log = logging.getLogger(__name__)
INTERACTION_TIMEOUT = 3.0

MessageRef = JSON | Reply | str | int


class FakeDiscord:
    """A Discord stand-in on 127.0.0.1: REST API v10 at ``url`` and a Gateway at ``gateway_url``.

    ``world`` holds users/guilds/channels (``fake.guild``, ``fake.alice``, ``fake.channel``...),
    ``faults`` arms failures, ``gateway`` drops/counts connections, ``requests`` logs every call.
    """

    def __init__(self, *, echo_events: bool = True, bot_name: str = "PaperBot") -> None:
        self.world = World(bot_name=bot_name)
        self.faults = Faults()
        self.gateway = Gateway(self.world)
        self.rest = RestServer(self.faults)
        self.echo_events = echo_events
        #: seconds a bot has for the first callback before it gets 10062 (Discord: 3)
        self.interaction_timeout: float | None = INTERACTION_TIMEOUT
        self.port = 0
        self._runner: web.AppRunner | None = None
        routes_app.register(self.rest.router, self)
        routes_channels.register(self.rest.router, self)
        routes_interactions.register(self.rest.router, self)

    # lifecycle --------------------------------------------------------------------------------

    async def start(self) -> FakeDiscord:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/gateway-ws", self.gateway.handle)
        rules_attachments.add_cdn_route(app, self.world)  # users' attached files
        app.router.add_route("*", "/{tail:.*}", self.rest.handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        assert server.sockets
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        self.world.messages.cdn_base = f"http://127.0.0.1:{self.port}/cdn"
        self.gateway.url = self.gateway_url
        return self

    async def close(self) -> None:
        await self.gateway.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeDiscord:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def url(self) -> str:
        """Base URL for ``discord.http.Route.BASE``."""
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway-ws"

    def accept_only_tokens(self, *tokens: str) -> None:
        """Reject other tokens: REST 401 and gateway close 4004 (default: accept any)."""
        self.rest.valid_tokens = set(tokens)
        self.gateway.valid_tokens = set(tokens)

    # the world --------------------------------------------------------------------------------

    @property
    def application_id(self) -> str:
        return self.world.application_id

    @property
    def bot_user(self) -> FakeUser:
        return self.world.bot_user

    @property
    def guild(self) -> FakeGuild:
        return self.world.guild

    @property
    def channel(self) -> FakeChannel:
        """The main guild's ``general`` text channel (default for interactions)."""
        return self.world.guild.channel("general")

    @property
    def alice(self) -> FakeUser:
        return self.world.alice

    @property
    def admin(self) -> FakeUser:
        return self.world.admin

    @property
    def owner(self) -> FakeUser:
        return self.world.owner

    @property
    def requests(self) -> list[Call]:
        return self.rest.requests.items

    def calls(self, method: str | None = None, pattern: str | None = None) -> list[Call]:
        return self.rest.calls(method, pattern)

    async def wait_for_request(
        self,
        method: str | None = None,
        pattern: str | None = None,
        *,
        status: int | None = None,
        index: int = 0,
        timeout: float = 2.0,
    ) -> Call:
        """Wait until a matching request has been answered (e.g. a callback that got 404)."""
        return await self.rest.wait_for(
            method, pattern, status=status, index=index, timeout=timeout
        )

    @property
    def unknown_routes(self) -> list[Call]:
        return self.rest.unknown

    @property
    def command_syncs(self) -> list[CommandSync]:
        return self.world.command_syncs.items

    def commands(self, guild: FakeGuild | None = None) -> dict[str, JSON]:
        """Registered commands by name (global, or of ``guild``)."""
        table = self.world.commands.get(guild.id if guild else None, {})
        return {c["name"]: c for c in table.values()}

    @property
    def threads(self) -> list[JSON]:
        return self.world.threads.items

    def channel_messages(self, channel: FakeChannel | str | None = None) -> list[JSON]:
        """Current (edited, not deleted, not ephemeral) messages of a channel, oldest first."""
        return self.world.messages.visible(_channel_id(channel or self.channel))

    async def wait_for_message(
        self, channel: FakeChannel | str | None = None, *, index: int = 0, timeout: float = 2.0
    ) -> JSON:
        """The ``index``-th message posted to a channel, waiting for it if needed."""
        recorder = self.world.messages.channel(_channel_id(channel or self.channel))
        return await recorder.wait_for(index=index, timeout=timeout)

    def message(self, message: MessageRef) -> JSON:
        """The current JSON of a message (by JSON, Reply, or id)."""
        if isinstance(message, Reply):
            assert message.message is not None, f"reply created no message: {message}"
            message = message.message
        message_id = str(message["id"] if isinstance(message, dict) else message)
        found = self.world.messages.get(message_id)
        assert found is not None, f"unknown or deleted message {message_id}"
        return found

    def file_bytes(self, attachment: JSON) -> bytes:
        return self.world.messages.file_data[attachment["id"]]

    # gateway ----------------------------------------------------------------------------------

    async def dispatch(self, event: str, data: Any) -> None:
        await self.gateway.dispatch(event, data)

    async def echo(self, event: str, data: JSON) -> None:
        """Mirror a REST effect as a gateway event, like Discord does (if ``echo_events``)."""
        if self.echo_events and self.gateway.connected:
            await self.gateway.dispatch(event, copy.deepcopy(data))

    async def user_message(
        self, content: str, *, user: FakeUser | None = None, channel: FakeChannel | None = None
    ) -> JSON:
        """A user posts a message: stored, and sent to the bot as MESSAGE_CREATE."""
        user, channel = user or self.alice, channel or self.channel
        message = self.world.messages.create({"content": content}, channel=channel, author=user)
        guild = self.world.guild_of(channel)
        data = copy.deepcopy(message)
        if guild is not None:
            data["member"] = guild.member_json(user.id)
            data["member"].pop("user")
        await self.dispatch("MESSAGE_CREATE", data)
        return message

    # interactions -----------------------------------------------------------------------------

    async def _send(self, payload: JSON, user: FakeUser, channel: FakeChannel) -> InteractionHandle:
        rules_commands.check_offered(self.world, payload)  # NotOffered: Discord would not show it
        handle = InteractionHandle(payload, user, channel)
        self.world.interactions[handle.token] = handle
        await self.dispatch("INTERACTION_CREATE", payload)
        return handle

    async def slash(
        self,
        name: str,
        options: dict[str, Any] | None = None,
        *,
        user: FakeUser | None = None,
        channel: FakeChannel | None = None,
        subcommand: str | None = None,
        locale: str | None = None,
        command_guild: FakeGuild | None = None,
        user_install: bool = False,
    ) -> InteractionHandle:
        """Invoke ``/name`` (``"group sub"`` or ``subcommand=`` for subcommands) as ``user``
        (default alice) in ``channel`` (default #general). Option types come from the synced
        command when known, else from the Python values (FakeChannel/FakeUser/FakeRole resolve).
        ``command_guild`` marks an unsynced command as a guild command. ``user_install``: the
        user added the app to their account (implied where the bot is not a member)."""
        path = name.split() + (subcommand.split() if subcommand else [])
        user, channel = user or self.alice, channel or self.channel
        payload = command_payload(
            self.world,
            COMMAND,
            path,
            options or {},
            user,
            channel,
            locale=locale,
            command_guild_id=command_guild.id if command_guild else None,
            user_install=user_install,
        )
        return await self._send(payload, user, channel)

    async def message_command(
        self,
        name: str,
        message: JSON,
        *,
        user: FakeUser | None = None,
        channel: FakeChannel | None = None,
        user_install: bool = False,
    ) -> InteractionHandle:
        """Choose the message context-menu command ``name`` on ``message`` (a stored message,
        e.g. from ``user_message``; ``channel`` defaults to the message's own)."""
        user = user or self.alice
        channel = channel or self.world.channel(message["channel_id"])
        channel = channel or rules_commands.outside_channel(self.world, message["channel_id"])
        assert channel is not None, f"unknown channel {message['channel_id']}"
        payload = base_payload(self.world, COMMAND, user, channel, None, user_install=user_install)
        payload["data"] = rules_commands.message_command_data(
            self.world, name, copy.deepcopy(message), payload.get("guild_id")
        )
        return await self._send(payload, user, channel)

    def outside_guild(self, name: str = "Elsewhere") -> FakeGuild:
        """A server the bot is not in; its members may use the app through a user install."""
        return rules_commands.outside_guild(self.world, name)

    def user_dm(self, other: FakeUser) -> FakeChannel:
        """A DM with ``other`` (not the bot), where only a user install reaches."""
        return rules_commands.user_dm(self.world, other)

    def group_dm(self, *users: FakeUser) -> FakeChannel:
        """A group DM without the bot (default: alice and admin)."""
        return rules_commands.group_dm(self.world, *users)

    async def autocomplete(
        self,
        name: str,
        options: dict[str, Any],
        *,
        focused: str | None = None,
        user: FakeUser | None = None,
        channel: FakeChannel | None = None,
        subcommand: str | None = None,
        locale: str | None = None,
        command_guild: FakeGuild | None = None,
    ) -> InteractionHandle:
        """Autocomplete for ``focused`` (default: the last option) while typing ``/name``."""
        path = name.split() + (subcommand.split() if subcommand else [])
        user, channel = user or self.alice, channel or self.channel
        focused = focused or list(options)[-1]
        payload = command_payload(
            self.world,
            AUTOCOMPLETE,
            path,
            options,
            user,
            channel,
            locale=locale,
            focused=focused,
            command_guild_id=command_guild.id if command_guild else None,
        )
        return await self._send(payload, user, channel)

    async def click(
        self, message: MessageRef, custom_id: str, *, user: FakeUser | None = None
    ) -> InteractionHandle:
        """Press the button ``custom_id`` on a message the bot posted (current version)."""
        return await self._component(message, custom_id, 2, None, user)

    async def select(
        self,
        message: MessageRef,
        custom_id: str,
        values: list[str],
        *,
        user: FakeUser | None = None,
    ) -> InteractionHandle:
        """Choose ``values`` in the select menu ``custom_id`` (its own component type is used)."""
        return await self._component(message, custom_id, None, values, user)

    async def _component(
        self,
        message: MessageRef,
        custom_id: str,
        component_type: int | None,
        values: list[str] | None,
        user: FakeUser | None,
    ) -> InteractionHandle:
        current = self.message(message)
        component = find_component(current.get("components"), custom_id)
        if component is None:
            ids = [c.get("custom_id") for c in iter_components(current.get("components"))]
            raise AssertionError(f"no component {custom_id!r} on message; have {ids}")
        if component.get("disabled"):
            raise AssertionError(f"component {custom_id!r} is disabled")
        ctype = component_type or int(component["type"])
        user = user or self.alice
        channel = self.world.channel(current["channel_id"])
        channel = channel or rules_commands.outside_channel(self.world, current["channel_id"])
        assert channel is not None
        payload = component_payload(self.world, current, custom_id, ctype, user, values)
        return await self._send(payload, user, channel)

    async def submit_modal(
        self,
        opened: InteractionHandle | Reply,
        values: dict[str, Any],
        *,
        user: FakeUser | None = None,
    ) -> InteractionHandle:
        """Submit the modal the bot opened (callback type 9) with ``values`` by custom_id."""
        reply = opened if isinstance(opened, Reply) else await opened.response()
        assert reply.kind == "callback", f"not a modal: {reply}"
        assert reply.type == MODAL, f"not a modal: {reply}"
        source = opened if isinstance(opened, InteractionHandle) else None
        user = user or (source.user if source else self.alice)
        channel = source.channel if source else self.channel
        payload = base_payload(self.world, MODAL_SUBMIT, user, channel, None)
        payload["data"] = {
            "custom_id": reply.data["custom_id"],
            "components": modal_components(reply.data, values),
        }
        if source is not None and source.payload.get("message"):
            payload["message"] = copy.deepcopy(self.message(source.payload["message"]))
        return await self._send(payload, user, channel)


def _channel_id(channel: FakeChannel | str) -> str:
    return channel.id if isinstance(channel, FakeChannel) else str(channel)

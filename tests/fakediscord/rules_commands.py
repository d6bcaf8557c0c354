"""Discord's rules for where commands live: installs, contexts, context menus, user installs.

What Discord refuses or does, by hand (the OpenAPI spec holds the enum values and ``minItems``
but not the rest, and without ../shared these rules are all there is):

* ``integration_types`` (0 guild install, 1 user install) and ``contexts`` (0 guild, 1 the
  bot's DM, 2 group DMs and DMs between users): arrays of known values, at least one, no
  repeats.
* Message and user commands (types 3 and 2): a name of 1-32 characters of any case with
  spaces, no description (Discord: "Empty string for USER and MESSAGE commands"), no options,
  and at most 15 of each type per scope (Discord raised it from 5; the bulk overwrite counts
  them in ``validate.overwrite_refusals`` with ``CONTEXT_MENU_COMMANDS``).
* Where a command is offered: a user sees a command only in a context its ``contexts``
  lists, and only through an install its ``integration_types`` lists (``offered``). The fake
  refuses to send an interaction Discord would never produce (``NotOffered``).
* A user-installed app outside a server it is in (no guild owner in
  ``authorizing_integration_owners``, or a group DM) gets at most 5 follow-ups per
  interaction; the sixth is refused (``followup_refusal``, code 40094).

The interaction's place (``place_fields``) is built as Discord sends it: ``context``,
``authorizing_integration_owners`` (``{"0": guild_id}`` for a guild install, ``{"1": user_id}``
for a user install, ``{"0": "0"}`` for the bot's DM), and ``guild_id``/``member`` or ``user``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .models import JSON, FakeChannel, FakeGuild, FakeUser
from .rules_messages import Path, Refusal, too_long

if TYPE_CHECKING:
    from .interactions import InteractionHandle
    from .world import World

GUILD_INSTALL, USER_INSTALL = 0, 1
GUILD, BOT_DM, PRIVATE_CHANNEL = 0, 1, 2
INTEGRATION_TYPES = {GUILD_INSTALL, USER_INSTALL}
CONTEXTS = {GUILD, BOT_DM, PRIVATE_CHANNEL}
MENU_NAME = 32
FOLLOWUPS_OUTSIDE = 5
MAX_FOLLOWUPS = 40094  # Discord's JSON error code for the sixth follow-up


class NotOffered(AssertionError):
    """Discord would not show this command here: a test asked for an impossible interaction."""


def _enum_list(path: Path, value: Any, allowed: set[int]) -> list[Refusal]:
    if value is None:
        return []
    if not isinstance(value, list):
        return [Refusal(path, "BASE_TYPE_BAD_TYPE", "Must be a list.")]
    found = list(too_long(path, value, len(allowed), 1))
    for index, item in enumerate(value):
        if isinstance(item, bool) or item not in allowed:
            found.append(
                Refusal(
                    [*path, index], "ENUM_TYPE_COERCE", f'Value "{item}" is not a valid enum value.'
                )
            )
    if len(set(map(repr, value))) != len(value):
        found.append(Refusal(path, "LIST_ITEM_VALUE_DUPLICATE", "Must not contain duplicates."))
    return found


def place_refusals(path: Path, command: Any, *, partial: bool = False) -> list[Refusal]:
    """The install/context fields of one command, and a context menu's own shape."""
    if not isinstance(command, dict):
        return []
    found = _enum_list(
        [*path, "integration_types"], command.get("integration_types"), INTEGRATION_TYPES
    )
    found += _enum_list([*path, "contexts"], command.get("contexts"), CONTEXTS)
    if command.get("type", 1) in (2, 3):
        if not partial or "name" in command:
            found += too_long([*path, "name"], command.get("name"), MENU_NAME, 1)
        if command.get("description"):
            found.append(
                Refusal(
                    [*path, "description"],
                    "APPLICATION_COMMAND_CONTEXT_MENU_DESCRIPTION",
                    "Context menu commands cannot have a description",
                )
            )
        if command.get("options"):
            found.append(
                Refusal(
                    [*path, "options"],
                    "APPLICATION_COMMAND_CONTEXT_MENU_OPTIONS",
                    "Context menu commands cannot have options",
                )
            )
    return found


def overwrite_place_refusals(body: Any) -> list[Refusal]:
    commands = body if isinstance(body, list) else []
    found: list[Refusal] = []
    for index, command in enumerate(commands):
        found += place_refusals([index], command)
    return found


APP = r"/applications/[^/]+(?:/guilds/[^/]+)?/commands"
RULES: list[tuple[str, re.Pattern[str], Callable[[Any], list[Refusal]]]] = [
    ("PUT", re.compile(APP), overwrite_place_refusals),
    ("POST", re.compile(APP), lambda body: place_refusals([], body)),
    ("PATCH", re.compile(APP + r"/[^/]+"), lambda body: place_refusals([], body, partial=True)),
]


# -- where an interaction happens ---------------------------------------------------------------


def outside_guild(world: World, name: str = "Elsewhere") -> FakeGuild:
    """A server the bot is not in (alice and admin are members): no GUILD_CREATE, and its
    channels are unknown to the REST API, as for a real server the app was never added to."""
    guild = FakeGuild(name, owner_id=world.owner.id)
    for user in (world.owner, world.alice, world.admin):
        guild.add_member(user)
    guild.add_channel("chat", topic="A server without the bot")
    world.outside_guilds.append(guild)
    return guild


def guild_of(world: World, channel: FakeChannel) -> FakeGuild | None:
    """The server of `channel`, whether or not the bot is in it."""
    found = world.guild_of(channel)
    if found is None and channel.guild_id is not None:
        found = next((g for g in world.outside_guilds if g.id == channel.guild_id), None)
    return found


def group_dm(world: World, *users: FakeUser) -> FakeChannel:
    """A group DM of `users` (the bot is no member; the REST API does not know it)."""
    people = list(users) or [world.alice, world.admin]
    channel = FakeChannel("group", type=3, recipients=people, owner_id=people[0].id)
    world.outside_channels.append(channel)
    return channel


def user_dm(world: World, other: FakeUser) -> FakeChannel:
    """A DM between the acting user and `other` (not the bot): context 2, bot no member."""
    channel = FakeChannel(other.username, type=1, recipients=[other])
    world.outside_channels.append(channel)
    return channel


def outside_channel(world: World, channel_id: str) -> FakeChannel | None:
    """A channel the bot cannot see (a group DM, or one of a server it is not in)."""
    channels = [*world.outside_channels, *(c for g in world.outside_guilds for c in g.channels)]
    return next((c for c in channels if c.id == channel_id), None)


def place_fields(
    world: World,
    channel: FakeChannel,
    user: FakeUser,
    *,
    user_install: bool,
    guild: FakeGuild | None,
) -> JSON:
    """`context`, `authorizing_integration_owners` and the guild/member or user fields of an
    interaction by `user` in `channel` (`guild`: its server, whether or not the bot is in it)."""
    owners: JSON = {}
    if guild is not None:
        member = guild.member_json(user.id, with_permissions=True)
        inside = guild in world.guilds
        if inside:
            owners[str(GUILD_INSTALL)] = guild.id
        if user_install or not inside:
            owners[str(USER_INSTALL)] = user.id
        return {
            "guild_id": guild.id,
            "guild": {"id": guild.id, "locale": guild.locale, "features": []},
            "guild_locale": guild.locale,
            "member": member,
            "authorizing_integration_owners": owners,
            "context": GUILD,
        }
    if channel.type == 1 and channel.recipients == [user]:  # the DM with the bot
        owners = {str(USER_INSTALL): user.id} if user_install else {str(GUILD_INSTALL): "0"}
        context = BOT_DM
    else:  # a group DM, or a DM between two users: only a user install reaches it
        owners = {str(USER_INSTALL): user.id}
        context = PRIVATE_CHANNEL
    return {"user": user.to_json(), "authorizing_integration_owners": owners, "context": context}


def is_outside(payload: JSON) -> bool:
    """The bot is not a member where this interaction happened."""
    owners = payload.get("authorizing_integration_owners") or {}
    if payload.get("context") == PRIVATE_CHANNEL:
        return True
    return payload.get("guild_id") is not None and str(GUILD_INSTALL) not in owners


def offered(command: JSON, payload: JSON) -> bool:
    """Whether Discord shows `command` to the user of this interaction (its place)."""
    context = payload.get("context", GUILD)
    contexts = command.get("contexts")
    if contexts is None:  # before contexts: servers, and the bot's DM unless dm_permission false
        contexts = [GUILD] + ([BOT_DM] if command.get("dm_permission") is not False else [])
    installs = command.get("integration_types") or [GUILD_INSTALL]
    owners = payload.get("authorizing_integration_owners") or {}
    used = {int(k) for k in owners}
    return context in contexts and bool(used & set(installs))


def check_offered(world: World, payload: JSON) -> None:
    """Raise `NotOffered` when the synced command of this interaction is not shown here."""
    data = payload.get("data") or {}
    if payload.get("type") not in (2, 4) or "name" not in data:
        return
    command = world.find_command(data["name"], payload.get("guild_id"), data.get("type", 1))
    if command is not None and not offered(command, payload):
        raise NotOffered(
            f"Discord does not offer {data['name']!r} in context {payload.get('context')} to "
            f"installs {sorted(payload.get('authorizing_integration_owners') or {})}"
        )


def followup_refusal(handle: InteractionHandle) -> None:
    """The sixth follow-up of a user-installed app outside a server it is in is refused."""
    from .rest import ApiError  # rest imports validate, which imports this module

    if is_outside(handle.payload) and len(handle.followup_ids) >= FOLLOWUPS_OUTSIDE:
        raise ApiError(
            400, MAX_FOLLOWUPS, "This interaction has hit the maximum number of follow up messages"
        )


def message_command_data(world: World, name: str, message: JSON, guild_id: str | None) -> JSON:
    """`data` of a message context-menu interaction: the target and its resolved message
    (its content is there without the Message Content intent)."""
    command = world.find_command(name, guild_id, 3)
    data: JSON = {
        "id": command["id"] if command else world.stable_command_id(f"3:{name}"),
        "name": name,
        "type": 3,
        "target_id": message["id"],
        "resolved": {"messages": {message["id"]: message}},
    }
    if command is not None and command.get("guild_id"):
        data["guild_id"] = command["guild_id"]
    return data

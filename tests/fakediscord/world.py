"""The fake world's state: application, users, guilds, channels, commands and messages."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import discord

from .messages import MessageStore
from .models import (
    DEFAULT_BOT_PERMISSIONS,
    JSON,
    FakeChannel,
    FakeGuild,
    FakeRole,
    FakeUser,
    perm_value,
    snowflake,
)
from .recorder import Recorder

if TYPE_CHECKING:
    from .interactions import InteractionHandle


@dataclass
class CommandSync:
    """One application-command write: PUT (bulk overwrite), POST, PATCH or DELETE."""

    method: str
    guild_id: str | None
    commands: list[JSON] = field(default_factory=list)


class World:
    """Users, guilds, channels, commands and messages. Built with one ready-to-use guild:

    ``guild`` ("Test Guild") with text channels ``general`` and ``papers``, a voice channel, users
    ``owner`` (guild owner), ``alice`` (ordinary member) and ``admin`` (administrator role), and
    the bot as a member holding a ``Bot`` role with :data:`DEFAULT_BOT_PERMISSIONS`.
    """

    def __init__(self, *, bot_name: str = "PaperBot") -> None:
        self.application_id = snowflake()
        self.bot_user = FakeUser(bot_name, id=self.application_id, bot=True)
        self.owner = FakeUser("owner")
        self.alice = FakeUser("alice", global_name="Alice")
        self.admin = FakeUser("admin")
        self.users: dict[str, FakeUser] = {}
        for user in (self.bot_user, self.owner, self.alice, self.admin):
            self.users[user.id] = user
        self.guilds: list[FakeGuild] = []
        self.outside_guilds: list[FakeGuild] = []  # servers the bot is not in (rules_commands)
        self.outside_channels: list[FakeChannel] = []  # group DMs without the bot
        self.dm_channels: dict[str, FakeChannel] = {}
        self.bot_roles: dict[str, FakeRole] = {}
        self.messages = MessageStore()
        self.commands: dict[str | None, dict[str, JSON]] = {}
        self.command_syncs: Recorder[CommandSync] = Recorder("command sync")
        self.threads: Recorder[JSON] = Recorder("thread")
        self.interactions: dict[str, InteractionHandle] = {}
        self._unsynced_ids: dict[str, str] = {}
        self.guild = self.add_guild("Test Guild", owner=self.owner)
        self.guild.add_channel("general", topic="General chat")
        self.guild.add_channel("papers", topic="Paper of the day")
        self.guild.add_channel("Voice", type=2)
        self.guild.add_member(self.alice)
        admin_role = self.guild.add_role("Admin", discord.Permissions(administrator=True))
        self.guild.add_member(self.admin, [admin_role])

    # people and places ------------------------------------------------------------------------

    def add_guild(
        self,
        name: str,
        *,
        owner: FakeUser | None = None,
        bot_permissions: int | discord.Permissions = DEFAULT_BOT_PERMISSIONS,
        shard: tuple[int, int] | None = None,
    ) -> FakeGuild:
        """A server the bot is in; `shard` (id, count) picks an id Discord routes to that shard."""
        owner = owner or self.owner
        guild = FakeGuild(name, owner_id=owner.id, id=snowflake(shard))
        guild.add_member(owner)
        bot_role = guild.add_role("Bot", bot_permissions)
        self.bot_roles[guild.id] = bot_role
        guild.add_member(self.bot_user, [bot_role])
        self.guilds.append(guild)
        return guild

    def add_user(
        self,
        username: str,
        *,
        guild: FakeGuild | None = None,
        roles: list[FakeRole] | None = None,
        permissions: int | discord.Permissions | None = None,
        bot: bool = False,
    ) -> FakeUser:
        """A new user, made a member of ``guild`` (default: the main guild). ``permissions``
        gives them a personal role with exactly those extra permissions."""
        user = FakeUser(username, bot=bot)
        self.users[user.id] = user
        guild = guild or self.guild
        member_roles = list(roles or [])
        if permissions is not None:
            member_roles.append(guild.add_role(f"{username}-role", perm_value(permissions)))
        guild.add_member(user, member_roles)
        return user

    def set_bot_permissions(
        self, permissions: int | discord.Permissions, guild: FakeGuild | None = None
    ) -> FakeRole:
        role = self.bot_roles[(guild or self.guild).id]
        role.permissions = perm_value(permissions)
        return role

    def dm_channel(self, user: FakeUser) -> FakeChannel:
        if user.id not in self.dm_channels:
            self.dm_channels[user.id] = FakeChannel(user.username, type=1, recipients=[user])
        return self.dm_channels[user.id]

    def channel(self, channel_id: str) -> FakeChannel | None:
        for guild in self.guilds:
            for channel in guild.channels:
                if channel.id == channel_id:
                    return channel
        for channel in self.dm_channels.values():
            if channel.id == channel_id:
                return channel
        return None

    def guild_by_id(self, guild_id: str | None) -> FakeGuild | None:
        return next((g for g in self.guilds if g.id == guild_id), None)

    def guild_of(self, channel: FakeChannel) -> FakeGuild | None:
        return self.guild_by_id(channel.guild_id)

    def user(self, user_id: str) -> FakeUser | None:
        return self.users.get(user_id)

    def app_permissions(self, guild: FakeGuild | None) -> int:
        if guild is None:
            return DEFAULT_BOT_PERMISSIONS
        return guild.permissions_of(self.bot_user.id)

    # application commands ---------------------------------------------------------------------

    def _complete_command(self, data: JSON, guild_id: str | None, old: JSON | None) -> JSON:
        command = copy.deepcopy(data)
        command["id"] = old["id"] if old else snowflake()
        command["application_id"] = self.application_id
        command["version"] = snowflake()
        command.setdefault("type", 1)
        command.setdefault("description", "")
        command.setdefault("options", [])
        command.setdefault("default_member_permissions", None)
        command.setdefault("nsfw", False)
        if guild_id:
            command["guild_id"] = guild_id
        return command

    def overwrite_commands(self, guild_id: str | None, payload: list[JSON]) -> list[JSON]:
        old = self.commands.get(guild_id, {})
        new: dict[str, JSON] = {}
        for data in payload:
            key = f"{data.get('type', 1)}:{data['name']}"
            new[key] = self._complete_command(data, guild_id, old.get(key))
        self.commands[guild_id] = new
        self.command_syncs.append(CommandSync("PUT", guild_id, list(new.values())))
        return list(new.values())

    def upsert_command(self, guild_id: str | None, data: JSON) -> JSON:
        table = self.commands.setdefault(guild_id, {})
        key = f"{data.get('type', 1)}:{data['name']}"
        command = self._complete_command(data, guild_id, table.get(key))
        table[key] = command
        self.command_syncs.append(CommandSync("POST", guild_id, [command]))
        return command

    def command_by_id(self, guild_id: str | None, command_id: str) -> tuple[str, JSON] | None:
        for key, command in self.commands.get(guild_id, {}).items():
            if command["id"] == command_id:
                return key, command
        return None

    def find_command(self, name: str, guild_id: str | None, type: int = 1) -> JSON | None:
        """The registered command a user in ``guild_id`` would see: guild commands first."""
        key = f"{type}:{name}"
        if guild_id and key in self.commands.get(guild_id, {}):
            return self.commands[guild_id][key]
        return self.commands.get(None, {}).get(key)

    def stable_command_id(self, name: str) -> str:
        """An id for a command that was never synced (the same one every time)."""
        return self._unsynced_ids.setdefault(name, snowflake())

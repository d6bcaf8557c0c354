"""Plain records for the fake Discord world: users, roles, channels, guilds and their JSON."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import discord

JSON = dict[str, Any]

DISCORD_EPOCH_MS = 1_420_070_400_000
_counter = itertools.count()

#: Permissions given to the bot by default: everything a text bot needs, no administrator.
DEFAULT_BOT_PERMISSIONS = (
    discord.Permissions.text() | discord.Permissions(view_channel=True, embed_links=True)
).value
#: Permissions of the @everyone role by default (what an ordinary member can do).
DEFAULT_EVERYONE_PERMISSIONS = discord.Permissions(
    view_channel=True,
    send_messages=True,
    read_message_history=True,
    use_application_commands=True,
    embed_links=True,
    attach_files=True,
    add_reactions=True,
).value
ALL_PERMISSIONS = discord.Permissions.all().value


def snowflake(shard: tuple[int, int] | None = None) -> str:
    """A fresh, time-ordered Discord snowflake as a string. With `shard` (id, count), one whose
    server would be routed to that shard: its timestamp moved up to the next fitting millisecond.
    """
    ms = int(time.time() * 1000) - DISCORD_EPOCH_MS
    if shard is not None:
        shard_id, count = shard
        ms += (shard_id - ms) % count
    return str((ms << 22) | (next(_counter) % (1 << 22)))


def iso_now() -> str:
    return datetime.now(UTC).isoformat()


def perm_value(value: int | discord.Permissions) -> int:
    return value.value if isinstance(value, discord.Permissions) else int(value)


@dataclass
class FakeUser:
    """A Discord user. ``bot`` marks bot accounts."""

    username: str
    id: str = field(default_factory=snowflake)
    global_name: str | None = None
    bot: bool = False
    locale: str = "en-US"

    def to_json(self) -> JSON:
        return {
            "id": self.id,
            "username": self.username,
            "global_name": self.global_name,
            "discriminator": "0",
            "avatar": None,
            "bot": self.bot,
            "public_flags": 0,
        }

    @property
    def mention(self) -> str:
        return f"<@{self.id}>"


@dataclass
class FakeRole:
    name: str
    permissions: int = 0
    id: str = field(default_factory=snowflake)
    position: int = 1

    def to_json(self) -> JSON:
        return {
            "id": self.id,
            "name": self.name,
            "color": 0,
            "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
            "hoist": False,
            "icon": None,
            "unicode_emoji": None,
            "position": self.position,
            "permissions": str(self.permissions),
            "managed": False,
            "mentionable": False,
            "flags": 0,
        }


@dataclass
class FakeChannel:
    """A guild text/voice/category channel, a thread (type 11/12) or a DM (type 1)."""

    name: str
    type: int = 0
    id: str = field(default_factory=snowflake)
    guild_id: str | None = None
    parent_id: str | None = None
    position: int = 0
    topic: str | None = None
    nsfw: bool = False
    owner_id: str | None = None
    recipients: list[FakeUser] = field(default_factory=list)
    last_message_id: str | None = None
    flags: int = 0
    available_tags: list[JSON] = field(default_factory=list)  # a forum's (type 15) tags

    @property
    def is_thread(self) -> bool:
        return self.type in (10, 11, 12)

    @property
    def mention(self) -> str:
        return f"<#{self.id}>"

    def to_json(self) -> JSON:
        if self.type in (1, 3):
            return {
                "id": self.id,
                "type": self.type,
                "last_message_id": self.last_message_id,
                "recipients": [u.to_json() for u in self.recipients],
                "flags": 0,
            }
        data: JSON = {
            "id": self.id,
            "type": self.type,
            "guild_id": self.guild_id,
            "name": self.name,
            "parent_id": self.parent_id,
            "nsfw": self.nsfw,
            "flags": self.flags,
            "rate_limit_per_user": 0,
            "last_message_id": self.last_message_id,
        }
        if self.is_thread:
            data.update(
                owner_id=self.owner_id,
                message_count=0,
                member_count=1,
                total_message_sent=0,
                thread_metadata={
                    "archived": False,
                    "auto_archive_duration": 1440,
                    "archive_timestamp": iso_now(),
                    "locked": False,
                    "create_timestamp": iso_now(),
                },
            )
        else:
            data.update(position=self.position, permission_overwrites=[], topic=self.topic)
            if self.type == 15:
                data.update(
                    available_tags=self.available_tags,
                    default_auto_archive_duration=1440,
                    default_thread_rate_limit_per_user=0,
                    default_reaction_emoji=None,
                    default_sort_order=None,
                    default_forum_layout=0,
                )
            if self.type == 2:
                data.update(bitrate=64000, user_limit=0, rtc_region=None)
        return data


@dataclass
class FakeMember:
    user: FakeUser
    roles: list[FakeRole] = field(default_factory=list)
    nick: str | None = None
    joined_at: str = field(default_factory=iso_now)

    def to_json(self) -> JSON:
        return {
            "user": self.user.to_json(),
            "nick": self.nick,
            "avatar": None,
            "roles": [r.id for r in self.roles],
            "joined_at": self.joined_at,
            "premium_since": None,
            "deaf": False,
            "mute": False,
            "flags": 0,
            "pending": False,
            "communication_disabled_until": None,
        }


@dataclass
class FakeGuild:
    name: str
    owner_id: str
    id: str = field(default_factory=snowflake)
    channels: list[FakeChannel] = field(default_factory=list)
    roles: list[FakeRole] = field(default_factory=list)
    members: dict[str, FakeMember] = field(default_factory=dict)
    locale: str = "en-US"

    def __post_init__(self) -> None:
        if not self.roles:
            everyone = FakeRole("@everyone", DEFAULT_EVERYONE_PERMISSIONS, id=self.id, position=0)
            self.roles.append(everyone)

    @property
    def everyone(self) -> FakeRole:
        return self.roles[0]

    def add_role(self, name: str, permissions: int | discord.Permissions = 0) -> FakeRole:
        role = FakeRole(name, perm_value(permissions), position=len(self.roles))
        self.roles.append(role)
        return role

    def add_channel(self, name: str, type: int = 0, **kwargs: Any) -> FakeChannel:
        channel = FakeChannel(name, type, guild_id=self.id, position=len(self.channels), **kwargs)
        self.channels.append(channel)
        return channel

    def add_member(self, user: FakeUser, roles: list[FakeRole] | None = None) -> FakeMember:
        member = FakeMember(user, list(roles or []))
        self.members[user.id] = member
        return member

    def channel(self, name_or_id: str) -> FakeChannel:
        for channel in self.channels:
            if name_or_id in (channel.id, channel.name):
                return channel
        raise KeyError(f"no channel {name_or_id!r} in guild {self.name!r}")

    @property
    def text_channel(self) -> FakeChannel:
        return next(c for c in self.channels if c.type == 0)

    def permissions_of(self, user_id: str) -> int:
        """Guild-level permissions (roles OR-ed; owner and administrator get everything)."""
        if user_id == self.owner_id:
            return ALL_PERMISSIONS
        value = self.everyone.permissions
        member = self.members.get(user_id)
        for role in member.roles if member else []:
            value |= role.permissions
        if value & discord.Permissions(administrator=True).value:
            return ALL_PERMISSIONS
        return value

    def member_json(self, user_id: str, *, with_permissions: bool = False) -> JSON:
        data = self.members[user_id].to_json()
        if with_permissions:
            data["permissions"] = str(self.permissions_of(user_id))
        return data

    def create_json(self) -> JSON:
        """The GUILD_CREATE payload."""
        return {
            "id": self.id,
            "name": self.name,
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "banner": None,
            "description": None,
            "owner_id": self.owner_id,
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "nsfw_level": 0,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "premium_progress_bar_enabled": False,
            "preferred_locale": self.locale,
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "public_updates_channel_id": None,
            "safety_alerts_channel_id": None,
            "vanity_url_code": None,
            "max_members": 500000,
            "features": [],
            "emojis": [],
            "stickers": [],
            "roles": [r.to_json() for r in self.roles],
            "joined_at": iso_now(),
            "large": False,
            "unavailable": False,
            "member_count": len(self.members),
            "voice_states": [],
            "members": [m.to_json() for m in self.members.values()],
            "channels": [c.to_json() for c in self.channels if not c.is_thread],
            "threads": [c.to_json() for c in self.channels if c.is_thread],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
        }

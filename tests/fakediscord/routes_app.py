"""REST routes for login/startup: users, gateway, application info, commands, guilds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .models import JSON, FakeGuild
from .rest import NO_CONTENT, ApiError, Call, Router
from .world import CommandSync

if TYPE_CHECKING:
    from .server import FakeDiscord

GUILDS_PER_RECOMMENDED_SHARD = 1000
SESSION_STARTS_PER_DAY = 1000  # a bot's usual session_start_limit.total


def register(router: Router, fake: FakeDiscord) -> None:
    world = fake.world

    async def me(call: Call) -> JSON:
        return {**world.bot_user.to_json(), "verified": True, "mfa_enabled": False, "flags": 0}

    async def get_user(call: Call) -> JSON:
        user = world.user(call.params["user_id"])
        if user is None:
            raise ApiError(404, 10013, "Unknown User")
        return user.to_json()

    async def gateway(call: Call) -> JSON:
        return {"url": fake.gateway_url}

    async def gateway_bot(call: Call) -> JSON:
        # Discord recommends a shard per 1,000 servers; every IDENTIFY spends one session start.
        started = len(fake.gateway.identifies)
        return {
            "url": fake.gateway_url,
            "shards": max(1, -(-len(world.guilds) // GUILDS_PER_RECOMMENDED_SHARD)),
            "session_start_limit": {
                "total": SESSION_STARTS_PER_DAY,
                "remaining": max(0, SESSION_STARTS_PER_DAY - started),
                "reset_after": 86_400_000,
                "max_concurrency": fake.gateway.max_concurrency,
            },
        }

    async def application(call: Call) -> JSON:
        return {
            "id": world.application_id,
            "name": world.bot_user.username,
            "description": "",
            "icon": None,
            "bot_public": True,
            "bot_require_code_grant": False,
            "owner": world.owner.to_json(),
            "team": None,
            "verify_key": "0" * 64,
            "flags": 1 << 23,
            "bot": world.bot_user.to_json(),
            "interactions_endpoint_url": None,
            "approximate_guild_count": len(world.guilds),
        }

    def guild_id_of(call: Call) -> str | None:
        if call.params.get("app_id") != world.application_id:
            raise ApiError(404, 10002, "Unknown Application")
        guild_id = call.params.get("guild_id")
        if guild_id is not None and world.guild_by_id(guild_id) is None:
            raise ApiError(403, 50001, "Missing Access")
        return guild_id

    async def list_commands(call: Call) -> list[JSON]:
        return list(world.commands.get(guild_id_of(call), {}).values())

    async def put_commands(call: Call) -> list[JSON]:
        return world.overwrite_commands(guild_id_of(call), call.json or [])

    async def post_command(call: Call) -> JSON:
        return world.upsert_command(guild_id_of(call), call.json)

    def one_command(call: Call) -> tuple[str | None, str, JSON]:
        guild_id = guild_id_of(call)
        found = world.command_by_id(guild_id, call.params["command_id"])
        if found is None:
            raise ApiError(404, 10063, "Unknown application command")
        return guild_id, *found

    async def get_command(call: Call) -> JSON:
        return one_command(call)[2]

    async def patch_command(call: Call) -> JSON:
        guild_id, _, command = one_command(call)
        command.update(call.json or {})
        world.command_syncs.append(CommandSync("PATCH", guild_id, [command]))
        return command

    async def delete_command(call: Call) -> object:
        guild_id, key, command = one_command(call)
        del world.commands[guild_id][key]
        world.command_syncs.append(CommandSync("DELETE", guild_id, [command]))
        return NO_CONTENT

    async def command_permissions(call: Call) -> list[JSON]:
        guild_id_of(call)
        return []

    def guild_of(call: Call) -> FakeGuild:
        guild = world.guild_by_id(call.params["guild_id"])
        if guild is None:
            raise ApiError(404, 10004, "Unknown Guild")
        return guild

    async def get_guild(call: Call) -> JSON:
        data = guild_of(call).create_json()
        for key in ("members", "channels", "threads", "presences", "voice_states"):
            data.pop(key)
        return data

    async def guild_channels(call: Call) -> list[JSON]:
        return [c.to_json() for c in guild_of(call).channels if not c.is_thread]

    async def guild_roles(call: Call) -> list[JSON]:
        return [r.to_json() for r in guild_of(call).roles]

    async def guild_member(call: Call) -> JSON:
        guild = guild_of(call)
        if call.params["user_id"] not in guild.members:
            raise ApiError(404, 10007, "Unknown Member")
        return guild.member_json(call.params["user_id"])

    async def guild_members(call: Call) -> list[JSON]:
        return [m.to_json() for m in guild_of(call).members.values()]

    add = router.add
    add("GET", "/users/@me", me)
    add("GET", "/users/{user_id}", get_user)
    add("GET", "/gateway", gateway)
    add("GET", "/gateway/bot", gateway_bot)
    add("GET", "/oauth2/applications/@me", application)
    add("GET", "/applications/@me", application)
    add("GET", "/applications/{app_id}/guilds/{guild_id}/commands/permissions", command_permissions)
    for base in ("/applications/{app_id}", "/applications/{app_id}/guilds/{guild_id}"):
        add("GET", base + "/commands", list_commands)
        add("PUT", base + "/commands", put_commands)
        add("POST", base + "/commands", post_command)
        add("GET", base + "/commands/{command_id}", get_command)
        add("PATCH", base + "/commands/{command_id}", patch_command)
        add("DELETE", base + "/commands/{command_id}", delete_command)
    add("GET", "/guilds/{guild_id}", get_guild)
    add("GET", "/guilds/{guild_id}/channels", guild_channels)
    add("GET", "/guilds/{guild_id}/roles", guild_roles)
    add("GET", "/guilds/{guild_id}/members", guild_members)
    add("GET", "/guilds/{guild_id}/members/{user_id}", guild_member)

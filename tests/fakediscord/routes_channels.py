"""REST routes for channels: messages, edits, deletes, threads, reactions, typing, DMs."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

import discord

from .models import JSON, FakeChannel, snowflake
from .rest import NO_CONTENT, ApiError, Call, Router, invalid_form_body, require_message_body
from .rules_forum import FORUM, TAG_REQUIRED, forum_refusals, missing_required_tag

if TYPE_CHECKING:
    from .server import FakeDiscord

SEND = discord.Permissions(send_messages=True).value
SEND_IN_THREADS = discord.Permissions(send_messages_in_threads=True).value
CREATE_THREADS = discord.Permissions(create_public_threads=True).value
VIEW = discord.Permissions(view_channel=True).value


def register(router: Router, fake: FakeDiscord) -> None:
    world = fake.world
    store = world.messages

    def channel_of(call: Call, *, need: int = 0) -> FakeChannel:
        channel = world.channel(call.params["channel_id"])
        if channel is None:
            raise ApiError(404, 10003, "Unknown Channel")
        guild = world.guild_of(channel)
        if guild is not None:
            have = world.app_permissions(guild)
            if not have & VIEW:
                raise ApiError(403, 50001, "Missing Access")
            if need and (have & need) != need:
                raise ApiError(403, 50013, "Missing Permissions")
        return channel

    def message_of(call: Call, channel: FakeChannel) -> JSON:
        message = store.get(call.params["message_id"])
        if message is None or message["channel_id"] != channel.id:
            raise ApiError(404, 10008, "Unknown Message")
        return message

    async def get_channel(call: Call) -> JSON:
        return channel_of(call).to_json()

    async def post_message(call: Call) -> JSON:
        probe = world.channel(call.params["channel_id"])
        need = SEND_IN_THREADS if probe is not None and probe.is_thread else SEND
        channel = channel_of(call, need=need)
        body = require_message_body(call)
        nonce = body.get("nonce")
        if nonce is not None and body.get("enforce_nonce"):
            # Discord: with enforce_nonce, a nonce seen from the same author within the past
            # few minutes returns that message and creates none.
            earlier = store.by_nonce(channel.id, world.bot_user.id, str(nonce))
            if earlier is not None:
                return copy.deepcopy(earlier)
        message = store.create(body, channel=channel, author=world.bot_user, uploads=call.uploads)
        if nonce is not None:
            message["nonce"] = nonce
            store.remember_nonce(message, str(nonce))
        await fake.echo("MESSAGE_CREATE", message)
        return copy.deepcopy(message)

    async def list_messages(call: Call) -> list[JSON]:
        channel = channel_of(call)
        messages = store.visible(channel.id)
        limit = int(call.query.get("limit", 50))
        if "before" in call.query:
            messages = [m for m in messages if int(m["id"]) < int(call.query["before"])]
        if "after" in call.query:
            messages = [m for m in messages if int(m["id"]) > int(call.query["after"])]
            return copy.deepcopy(list(reversed(messages[:limit])))
        return copy.deepcopy(list(reversed(messages))[:limit])

    async def get_message(call: Call) -> JSON:
        return copy.deepcopy(message_of(call, channel_of(call)))

    async def edit_message(call: Call) -> JSON:
        message = message_of(call, channel_of(call))
        if message["author"]["id"] != world.bot_user.id:
            raise ApiError(403, 50005, "Cannot edit a message authored by another user")
        message = store.edit(message["id"], call.json or {}, call.uploads)
        await fake.echo("MESSAGE_UPDATE", message)
        return copy.deepcopy(message)

    async def delete_message(call: Call) -> object:
        channel = channel_of(call)
        message = message_of(call, channel)
        store.delete(message["id"])
        deleted = {"id": message["id"], "channel_id": channel.id}
        if channel.guild_id:
            deleted["guild_id"] = channel.guild_id
        await fake.echo("MESSAGE_DELETE", deleted)
        return NO_CONTENT

    async def make_thread(channel: FakeChannel, body: JSON, thread_id: str | None) -> JSON:
        guild = world.guild_of(channel)
        if guild is None or channel.is_thread:
            raise ApiError(400, 50024, "Cannot execute action on this channel type")
        thread = FakeChannel(
            str(body.get("name") or "thread"),
            type=int(body.get("type") or 11),
            id=thread_id or snowflake(),
            guild_id=guild.id,
            parent_id=channel.id,
            owner_id=world.bot_user.id,
        )
        guild.channels.append(thread)
        data = thread.to_json()
        data["thread_metadata"]["auto_archive_duration"] = body.get("auto_archive_duration") or 1440
        data["member"] = {
            "id": thread.id,
            "user_id": world.bot_user.id,
            "flags": 1,
            "join_timestamp": data["thread_metadata"]["create_timestamp"],
        }
        world.threads.append(data)
        await fake.echo("THREAD_CREATE", {**data, "newly_created": True})
        return data

    async def thread_from_message(call: Call) -> JSON:
        channel = channel_of(call, need=CREATE_THREADS)
        message = message_of(call, channel)
        if message.get("thread"):
            raise ApiError(400, 160004, "A thread has already been created for this message")
        data = await make_thread(channel, call.json or {}, message["id"])
        message["thread"] = data
        return data

    async def thread_without_message(call: Call) -> JSON:
        probe = world.channel(call.params["channel_id"])
        if probe is None or probe.type != FORUM:
            return await make_thread(channel_of(call, need=CREATE_THREADS), call.json or {}, None)
        return await forum_post(call, channel_of(call, need=SEND))

    async def forum_post(call: Call, forum: FakeChannel) -> JSON:
        """A forum thread and its starter message (the message's id is the thread's)."""
        body = call.json or {}
        refused = forum_refusals(forum, body)
        if refused:
            fake.rest.refused.append(call)
            raise invalid_form_body(refused)
        if missing_required_tag(forum, body):
            raise ApiError(400, *TAG_REQUIRED)
        thread_id = snowflake()
        data = await make_thread(forum, body, thread_id)
        data["applied_tags"] = [str(t) for t in body.get("applied_tags") or []]
        thread = world.channel(thread_id)
        assert thread is not None
        message = store.create(body["message"], channel=thread, author=world.bot_user, id=thread_id)
        await fake.echo("MESSAGE_CREATE", message)
        return {**data, "message": copy.deepcopy(message)}

    async def active_threads(call: Call) -> JSON:
        guild = world.guild_by_id(call.params["guild_id"])
        if guild is None:
            raise ApiError(404, 10004, "Unknown Guild")
        ids = {c.id for c in guild.channels if c.is_thread}
        threads = [copy.deepcopy(t) for t in world.threads.items if t["id"] in ids]
        return {"threads": threads, "members": [t["member"] for t in threads if "member" in t]}

    async def no_content(call: Call) -> object:
        channel_of(call)
        return NO_CONTENT

    async def react(call: Call) -> object:
        message = message_of(call, channel_of(call))
        emoji = call.params["emoji"]
        for reaction in message["reactions"]:
            if reaction["emoji"]["name"] == emoji:
                reaction["count"] += 1
                return NO_CONTENT
        message["reactions"].append(
            {
                "count": 1,
                "me": True,
                "emoji": {"id": None, "name": emoji},
                "burst_colors": [],
                "count_details": {"burst": 0, "normal": 1},
                "me_burst": False,
            }
        )
        return NO_CONTENT

    async def open_dm(call: Call) -> JSON:
        user = world.user(str((call.json or {}).get("recipient_id")))
        if user is None:
            raise ApiError(400, 50033, "Invalid Recipients")
        return world.dm_channel(user).to_json()

    add = router.add
    base = "/channels/{channel_id}"
    add("GET", base, get_channel)
    add("POST", base + "/messages", post_message)
    add("GET", base + "/messages", list_messages)
    add("GET", base + "/messages/{message_id}", get_message)
    add("PATCH", base + "/messages/{message_id}", edit_message)
    add("DELETE", base + "/messages/{message_id}", delete_message)
    add("POST", base + "/messages/{message_id}/threads", thread_from_message)
    add("POST", base + "/threads", thread_without_message)
    add("GET", "/guilds/{guild_id}/threads/active", active_threads)
    add("POST", base + "/typing", no_content)
    add("PUT", base + "/messages/{message_id}/reactions/{emoji}/@me", react)
    add("DELETE", base + "/messages/{message_id}/reactions/{emoji}/@me", no_content)
    add("PUT", base + "/pins/{message_id}", no_content)
    add("PUT", base + "/messages/pins/{message_id}", no_content)
    add("DELETE", base + "/pins/{message_id}", no_content)
    add("DELETE", base + "/messages/pins/{message_id}", no_content)
    add("POST", "/users/@me/channels", open_dm)

"""REST routes for interactions: the callback, follow-ups, and @original/message edits."""

from __future__ import annotations

import asyncio
import copy
from typing import TYPE_CHECKING

from . import rules_commands
from .interactions import (
    AUTOCOMPLETE,
    AUTOCOMPLETE_RESULT,
    COMMAND,
    COMPONENT,
    DEFERRED_MESSAGE,
    DEFERRED_UPDATE,
    MESSAGE,
    MODAL,
    MODAL_SUBMIT,
    UPDATE_MESSAGE,
    InteractionHandle,
    Reply,
)
from .messages import EPHEMERAL, LOADING
from .models import JSON
from .rest import NO_CONTENT, ApiError, Call, Router, invalid_form_body, require_message_body
from .rules_messages import Refusal

if TYPE_CHECKING:
    from .server import FakeDiscord

ALLOWED_CALLBACKS = {
    COMMAND: {MESSAGE, DEFERRED_MESSAGE, MODAL},
    COMPONENT: {MESSAGE, DEFERRED_MESSAGE, DEFERRED_UPDATE, UPDATE_MESSAGE, MODAL},
    AUTOCOMPLETE: {AUTOCOMPLETE_RESULT},
    MODAL_SUBMIT: {MESSAGE, DEFERRED_MESSAGE, DEFERRED_UPDATE, UPDATE_MESSAGE},
}


def register(router: Router, fake: FakeDiscord) -> None:
    world = fake.world
    store = world.messages

    def metadata(handle: InteractionHandle) -> JSON:
        data: JSON = {
            "id": handle.id,
            "type": handle.type,
            "user": handle.user.to_json(),
            "authorizing_integration_owners": handle.payload["authorizing_integration_owners"],
        }
        if handle.type == COMMAND:
            data["name"] = handle.payload["data"]["name"]
        if handle.source_message_id:
            data["interacted_message_id"] = handle.source_message_id
        return data

    def new_message(
        handle: InteractionHandle, body: JSON, call: Call, extra_flags: int = 0
    ) -> JSON:
        return store.create(
            body,
            channel=handle.channel,
            author=world.bot_user,
            uploads=call.uploads,
            type=20 if handle.type == COMMAND else 0,
            extra_flags=extra_flags,
            webhook_id=world.application_id,
            application_id=world.application_id,
            interaction_metadata=metadata(handle),
        )

    async def callback(call: Call) -> JSON:
        handle = world.interactions.get(call.params["token"])
        if handle is None or handle.id != call.params["interaction_id"]:
            raise ApiError(404, 10062, "Unknown interaction")
        loop = asyncio.get_running_loop()
        if fake.interaction_timeout is not None and (
            loop.time() - handle.created_at > fake.interaction_timeout
        ):
            raise ApiError(404, 10062, "Unknown interaction")
        if handle.acknowledged:
            raise ApiError(400, 40060, "Interaction has already been acknowledged.")
        body = call.json or {}
        ctype = int(body.get("type", 0))
        if ctype not in ALLOWED_CALLBACKS.get(handle.type, set()):
            raise invalid_form_body(
                [
                    Refusal(
                        ["type"],
                        "INTERACTION_RESPONSE_TYPE_INVALID",
                        f"Callback type {ctype} is not valid for interaction type {handle.type}",
                    )
                ]
            )
        data = body.get("data") or {}
        message: JSON | None = None
        if ctype == MESSAGE:
            message = new_message(handle, data, call)
            handle.original_id = message["id"]
        elif ctype == DEFERRED_MESSAGE:
            message = new_message(handle, {"flags": data.get("flags", 0)}, call, LOADING)
            handle.original_id = message["id"]
        elif ctype in (DEFERRED_UPDATE, UPDATE_MESSAGE):
            if handle.source_message_id is None:
                raise invalid_form_body(
                    [Refusal(["type"], "INTERACTION_RESPONSE_TYPE_INVALID", "No message to update")]
                )
            handle.original_id = handle.source_message_id
            if ctype == UPDATE_MESSAGE:
                message = store.edit(handle.source_message_id, data, call.uploads)
        handle.callback_type = ctype
        snapshot = copy.deepcopy(message)
        handle.replies.append(
            Reply("callback", body, snapshot, ctype, handle.original_id, list(call.uploads))
        )
        if message is not None and not message["flags"] & EPHEMERAL:
            await fake.echo(
                "MESSAGE_UPDATE" if ctype == UPDATE_MESSAGE else "MESSAGE_CREATE", message
            )
        answer: JSON = {
            "interaction": {
                "id": handle.id,
                "type": handle.type,
                "response_message_id": handle.original_id,
                "response_message_loading": ctype == DEFERRED_MESSAGE,
                "response_message_ephemeral": bool(message and message["flags"] & EPHEMERAL),
            }
        }
        if message is not None:
            answer["resource"] = {"type": ctype, "message": copy.deepcopy(message)}
        return answer

    def webhook_handle(call: Call) -> InteractionHandle:
        handle = world.interactions.get(call.params["token"])
        if handle is None or call.params["app_id"] != world.application_id:
            raise ApiError(404, 10015, "Unknown Webhook")
        if not handle.acknowledged:
            raise ApiError(404, 10015, "Unknown Webhook")
        return handle

    def target(handle: InteractionHandle, call: Call) -> str:
        message_id = call.params["message_id"]
        if message_id == "@original":
            message_id = handle.original_id or ""
        elif message_id not in handle.followup_ids:
            raise ApiError(404, 10008, "Unknown Message")
        if store.get(message_id) is None:
            raise ApiError(404, 10008, "Unknown Message")
        return message_id

    async def followup(call: Call) -> object:
        handle = webhook_handle(call)
        body = require_message_body(call)
        rules_commands.followup_refusal(handle)  # a user install outside: 5 at most
        message = new_message(handle, body, call)
        handle.followup_ids.append(message["id"])
        handle.replies.append(
            Reply("followup", body, copy.deepcopy(message), None, message["id"], list(call.uploads))
        )
        if not message["flags"] & EPHEMERAL:
            await fake.echo("MESSAGE_CREATE", message)
        if call.query.get("wait", "false").lower() in ("true", "1"):
            return copy.deepcopy(message)
        return NO_CONTENT

    async def get_webhook_message(call: Call) -> JSON:
        handle = webhook_handle(call)
        return copy.deepcopy(store.get(target(handle, call)))

    async def edit_webhook_message(call: Call) -> JSON:
        handle = webhook_handle(call)
        message_id = target(handle, call)
        message = store.edit(message_id, call.json or {}, call.uploads)
        handle.replies.append(
            Reply(
                "edit",
                call.json or {},
                copy.deepcopy(message),
                None,
                message_id,
                list(call.uploads),
            )
        )
        if not message["flags"] & EPHEMERAL:
            await fake.echo("MESSAGE_UPDATE", message)
        return copy.deepcopy(message)

    async def delete_webhook_message(call: Call) -> object:
        handle = webhook_handle(call)
        message_id = target(handle, call)
        store.delete(message_id)
        handle.replies.append(Reply("delete", {}, None, None, message_id))
        return NO_CONTENT

    add = router.add
    add("POST", "/interactions/{interaction_id}/{token}/callback", callback)
    hook = "/webhooks/{app_id}/{token}"
    add("POST", hook, followup)
    add("GET", hook + "/messages/{message_id}", get_webhook_message)
    add("PATCH", hook + "/messages/{message_id}", edit_webhook_message)
    add("DELETE", hook + "/messages/{message_id}", delete_webhook_message)

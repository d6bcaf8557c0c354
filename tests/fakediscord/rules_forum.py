"""Discord's rules for forum channels (type 15) and the posts (threads) started in them.

From Discord's docs (Channel resource: "Start Thread in Forum or Media Channel", "Forum Tag
object") and ../shared/discord/openapi.json:

* a forum thread is created together with its first message (`message`, required; a message
  with nothing in it is refused like any empty message), by POST /channels/{id}/threads;
* its `name` is 1-100 characters (checked for every thread by `validate.thread_refusals`);
* `applied_tags` holds at most 5 tag ids, each one of the forum's `available_tags`;
* `auto_archive_duration` is one of 60, 1440, 4320, 10080 minutes;
* a forum whose flags include REQUIRE_TAG (1 << 4) refuses a post without a tag: 400, code
  40067 "A tag is required to create a forum post in this channel".

Body rules (`thread_body_refusals`) run for every request like the other hand rules; the rules
needing the channel (`forum_refusals`, `missing_required_tag`) are called by the thread route,
which knows it.
"""

from __future__ import annotations

from typing import Any

from .models import FakeChannel
from .rules_messages import Path, Refusal, message_refusals, too_long

FORUM = 15
MAX_APPLIED_TAGS = 5
ARCHIVE_DURATIONS = (60, 1440, 4320, 10080)
REQUIRE_TAG = 1 << 4
TAG_REQUIRED = (40067, "A tag is required to create a forum post in this channel")
MESSAGE_PARTS = ("content", "embeds", "components", "sticker_ids", "attachments", "poll")


def thread_body_refusals(body: Any) -> list[Refusal]:
    """What Discord refuses in any start-thread body, whatever the channel."""
    if not isinstance(body, dict):
        return []
    found: list[Refusal] = []
    tags = body.get("applied_tags")
    if tags is not None:
        found += too_long(["applied_tags"], tags, MAX_APPLIED_TAGS)
    duration = body.get("auto_archive_duration")
    if duration is not None and duration not in ARCHIVE_DURATIONS:
        found.append(
            Refusal(
                ["auto_archive_duration"],
                "BASE_TYPE_CHOICES",
                f"Value must be one of {set(ARCHIVE_DURATIONS)}.",
            )
        )
    message = body.get("message")
    if isinstance(message, dict):
        found += message_refusals(message, ["message"])
    return found


def forum_refusals(channel: FakeChannel, body: Any) -> list[Refusal]:
    """What a forum refuses in a start-thread body: no starter message, an empty one, a tag
    that is not the forum's."""
    if channel.type != FORUM or not isinstance(body, dict):
        return []
    found: list[Refusal] = []
    message = body.get("message")
    if not isinstance(message, dict):
        found.append(Refusal(["message"], "BASE_TYPE_REQUIRED", "This field is required"))
    elif not any(message.get(part) for part in MESSAGE_PARTS):
        found.append(Refusal(["message"], "MESSAGE_EMPTY", "Cannot send an empty message"))
    known = {str(tag["id"]) for tag in channel.available_tags}
    for index, tag in enumerate(body.get("applied_tags") or []):
        if str(tag) not in known:
            where: Path = ["applied_tags", index]
            found.append(Refusal(where, "FORUM_TAG_UNKNOWN", f"Unknown tag {tag}"))
    return found


def missing_required_tag(channel: FakeChannel, body: Any) -> bool:
    """A post without a tag in a forum that requires one."""
    tags = body.get("applied_tags") if isinstance(body, dict) else None
    return channel.type == FORUM and bool(channel.flags & REQUIRE_TAG) and not tags

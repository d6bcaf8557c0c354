"""The daily post in a forum channel, and finding a post again by its marker.

In a forum each day's paper is a post: a thread created together with its starter message (the
paper). Discord's rules for it: a forum thread must be created with a message; its name is at
most 100 characters; `applied_tags` are at most 5 and must be tags of that forum; a forum that
requires a tag refuses a post without one. The post is tagged with the schedule's topic when the
forum has a tag by that name (the bot never creates tags: that needs Manage Channels).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

import discord

from bot.app.results.citing import carries_marker

MAX_TAGS = 5  # applied_tags on one forum thread (Discord)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# What a topic (search syntax) leaves out or filters on: `-word`, `-"a phrase"`, `venue:icml`.
_NOT_TOPIC = re.compile(r'(?:(?<=\s)|^)-(?:"[^"]*"?|\S+)|\b\w+:(?:"[^"]*"?|\S+)')


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def topic_tag(tags: Sequence[discord.ForumTag], topic: str | None) -> discord.ForumTag | None:
    """The forum tag naming the topic: the same words (case and punctuation aside), else the
    tag whose words all appear in the topic in order. Moderated tags need Manage Threads, which
    the bot is not asked for: never chosen."""
    want = _words(_NOT_TOPIC.sub(" ", topic or ""))
    if not want:
        return None
    usable = [t for t in tags if not t.moderated and _words(t.name)]
    for tag in usable:
        if _words(tag.name) == want:
            return tag
    joined = f" {' '.join(want)} "
    inside = [t for t in usable if f" {' '.join(_words(t.name))} " in joined]
    return max(inside, key=lambda t: len(_words(t.name)), default=None)


def forum_tags(forum: discord.ForumChannel, topic: str | None) -> list[discord.ForumTag]:
    """The tags to apply to today's post (at most `MAX_TAGS`, all the forum's own)."""
    tag = topic_tag(forum.available_tags, topic)
    return [tag][:MAX_TAGS] if tag is not None else []


def tag_problem(forum: discord.ForumChannel, topic: str | None) -> str | None:
    """Why posts cannot go to `forum` (it requires a tag and none names the topic), or None."""
    if not forum.flags.require_tag or forum_tags(forum, topic):
        return None
    names = ", ".join(f"“{t.name}”" for t in forum.available_tags if not t.moderated) or "none"
    about = f"the topic “{topic}”" if topic else "posts without a topic"
    return (
        f"{forum.mention} requires a tag on every post, and none of its tags names {about} "
        f"(its tags: {names}). Add a tag named like the topic, or choose another channel."
    )


def custom_ids(message: discord.Message) -> list[str]:
    """Every custom_id on a message's components (action rows and their children)."""
    found: list[str] = []
    for row in message.components:
        for child in getattr(row, "children", [row]):
            custom_id = getattr(child, "custom_id", None)
            if custom_id:
                found.append(custom_id)
    return found


def carries(message: discord.Message, marker: str) -> bool:
    """Whether `message` is the post with `marker`: in a custom_id (this version), or in an
    embed footer (posts made before the marker left the footer)."""
    if any(carries_marker(custom_id, marker) for custom_id in custom_ids(message)):
        return True
    return any(marker in (embed.footer.text or "") for embed in message.embeds)


def thread_created_after(thread_id: int, since: datetime | None) -> bool:
    """Whether the thread (its id is a snowflake of its creation) is from `since` on."""
    return since is None or discord.utils.snowflake_time(thread_id) >= since

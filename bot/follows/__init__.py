"""Follows, discord-free: a member's or a channel's saved queries, what each has been told, and
which new papers match them; how each feed is delivered (`feeds`). Other features use the
names below."""

from bot.follows.feeds import FeedError, Feeds, FeedSettings
from bot.follows.store import FOR_YOU, Follow, Follows

__all__ = ["FOR_YOU", "FeedError", "FeedSettings", "Feeds", "Follow", "Follows"]

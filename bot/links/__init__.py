"""Papers named in messages, discord-free: finding them (`lookup`), fetching the ones the
corpus lacks (`fetching`), and which servers want link replies (`store`). "Find papers", the
link replies (bot/app/exts/links) and the console's `find` use the names below."""

from bot.links.fetching import Fetched, OnDemand
from bot.links.lookup import CORPUS, Finding, Found, find_papers, in_corpus
from bot.links.store import LinkReplies

__all__ = [
    "CORPUS",
    "Fetched",
    "Finding",
    "Found",
    "LinkReplies",
    "OnDemand",
    "find_papers",
    "in_corpus",
]

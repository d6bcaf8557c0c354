"""Short, stable stand-ins for paper ids and venue names too long to travel whole.

A Discord custom_id holds 100 characters and an autocomplete value 100, but a paper id can be
longer (a BEIR `_id`, a URL-like id) and so can a venue name. Such a value travels as its
key, `~` and 12 hex digits of its BLAKE2b hash, and is resolved back through the engine.

Why a hash and not a row number: a key depends only on the id (or venue name) itself, so it
means the same paper after a restart and after a corpus reload or rebuild that keeps the paper,
whatever its position. A key whose paper (or venue) is no longer in the corpus is answered with
`StaleRef`, a message for the user, never with another paper. 48 bits make a collision
between two ids of a 100,000-paper corpus about one chance in 50,000; the first id wins.
"""

from __future__ import annotations

import hashlib
import re
import threading
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from bot.papers.records import Paper
from bot.search.results import SearchError, UnknownPaper

if TYPE_CHECKING:
    from bot.search.engine import SearchEngine

KEY_PREFIX = "~"
KEY_LENGTH = 13
_KEY = re.compile(r"~[0-9a-f]{12}")
_paper_keys: WeakKeyDictionary[SearchEngine, dict[str, str]] = WeakKeyDictionary()
_lock = threading.Lock()


class StaleRef(SearchError):
    """A key from an older message whose paper or venue the corpus no longer holds."""


def key_of(text: str) -> str:
    return KEY_PREFIX + hashlib.blake2b(text.encode("utf-8"), digest_size=6).hexdigest()


def is_key(ref: str) -> bool:
    return _KEY.fullmatch(ref) is not None


def ref_for(text: str, room: int) -> str:
    """`text` itself when it fits in `room` characters (and cannot be mistaken for a key),
    else its key."""
    return text if len(text) <= room and not is_key(text) else key_of(text)


def _keys(engine: SearchEngine) -> dict[str, str]:
    """key -> id for every paper of `engine`, built once per engine (a reload makes a new
    engine, hence a new table) on the first key that needs it."""
    table = _paper_keys.get(engine)
    if table is None:
        built: dict[str, str] = {}
        for paper_id in engine.ids:
            built.setdefault(key_of(paper_id), paper_id)
        with _lock:
            table = _paper_keys.setdefault(engine, built)
    return table


def find_paper(engine: SearchEngine, ref: str) -> Paper:
    """The paper `ref` names: a key, or whatever `SearchEngine.paper` accepts (id, title)."""
    if is_key(ref.strip()):
        paper_id = _keys(engine).get(ref.strip())
        if paper_id is not None:
            return engine.paper(paper_id)
        try:
            return engine.paper(ref)
        except UnknownPaper:
            raise StaleRef(
                "That paper is no longer in the corpus (it changed since this message was "
                "sent). Try /search."
            ) from None
    return engine.paper(ref)


def find_venue(engine: SearchEngine, ref: str) -> str:
    """The venue `ref` names: a key of a venue name, else `ref` itself (a venue filter)."""
    ref = ref.strip()
    if not is_key(ref):
        return ref
    for venue in engine.venues():
        if key_of(venue) == ref:
            return venue
    raise StaleRef(
        "That venue is no longer in the corpus (it changed since this message was sent). "
        "Pick one from the suggestions."
    )


def canonical_venue(engine: SearchEngine, venue: str) -> str:
    """The corpus's own spelling of `venue` when it names one venue exactly (case and spaces
    aside), else `venue` as given (a filter matching every venue containing it)."""
    want = venue.casefold().replace(" ", "")
    for name in engine.venues():
        if name.casefold().replace(" ", "") == want:
            return name
    return venue

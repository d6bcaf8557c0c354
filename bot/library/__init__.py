"""A reader's library, discord-free: its tables (`store`), what a reader can do with it
(`actions`) and its file formats (`export`). Other features (follows, the server's /top) use
the names below, never the modules inside."""

from bot.library.actions import (
    PERIODS,
    TOP_SIZE,
    LibraryPage,
    Refused,
    citation,
    export_file,
    find,
    library_of,
    load_page,
    now,
    resolve_saved,
    since,
)
from bot.library.store import Library, SavedPaper, TopEntry

__all__ = [
    "PERIODS",
    "TOP_SIZE",
    "Library",
    "LibraryPage",
    "Refused",
    "SavedPaper",
    "TopEntry",
    "citation",
    "export_file",
    "find",
    "library_of",
    "load_page",
    "now",
    "resolve_saved",
    "since",
]

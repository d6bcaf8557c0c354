"""The library and follows in the console, for its single local reader.

The same storage, rules and embeds as on Discord (`bot.library.actions`,
`bot.follows.notices`): saving is
`/save` (the paper on screen, or hit N), a follow's notices are printed after `/reload` instead
of sent by DM. The console is synchronous; storage is async, so each call runs to completion on
the console's database loop (`bot.console.localdb`).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from bot.app.checks import WORDS, stored_text
from bot.app.exts.follows.embeds import follows_embed, notice_title
from bot.app.exts.follows.notify import notice_message
from bot.app.exts.follows.views import NOTICE_PAGE
from bot.app.exts.library.embeds import library_embed
from bot.app.results.saving import save, saved_text
from bot.config import LibrarySettings
from bot.console.localdb import ConsoleContext
from bot.follows.feeds import FeedError, Feeds, tune_options, tuned
from bot.follows.notices import Notice, deliver, plan
from bot.follows.store import FOR_YOU, FollowRefused, Follows
from bot.library import actions as library
from bot.library import find, importing
from bot.library.store import Library
from bot.storage.store import Storage

if TYPE_CHECKING:
    from datetime import datetime

    from bot.papers.records import Paper
    from bot.search.engine import SearchEngine

T = TypeVar("T")
LOCAL_USER = 0  # the console's one reader
LIBRARY_HELP = """Library and follows (stored in the bot's database):
  /save [N]               save the paper on screen, or hit N of the results
  /library show [PAGE]    saved papers, newest first    /library read|unread ID
  /library remove ID      /library export bibtex|ris|csljson|markdown|csv [FILE]
  /library import FILE    add the papers of a .bib, .ris or CSL-JSON file (Zotero...)
  /library clear          delete everything stored about you (asks first)
  /follow add QUERY       /follow list    /follow remove ID   (new papers show after /reload)
  /follow foryou          your For you papers (see /foryou) as they arrive, like a follow
  /follow tune ID frequency=refresh|daily|weekly time=HH:MM day=monday timezone=Europe/Paris
                cap=1-10 exclude="survey benchmark" min_score=0-100   (any of them)
"""


class LocalLibrary:
    """Library and follow commands of the console; opens the database on first use."""

    def __init__(
        self, context: ConsoleContext, max_saved: int = LibrarySettings().max_saved
    ) -> None:
        self.db = context.db
        self.max_saved = max_saved
        self.engine = context.engine
        self.show = context.show
        self.write = context.write
        self._confirm_clear = False

    def _run(self, make: Callable[[Storage], Coroutine[Any, Any, T]]) -> T:
        return self.db.run(make)

    def close(self) -> None:
        """Kept for callers of the library alone: the console closes its database once."""
        self.db.close()

    def save(self, paper: Paper) -> None:
        async def go(storage: Storage) -> tuple[Paper, bool]:
            return await save(
                Library(storage), self.engine(), LOCAL_USER, paper.id, max_saved=self.max_saved
            )

        saved, new = self._run(go)
        self.write(saved_text(saved, new).replace("**", "") + "\n")

    def handle(self, name: str, rest: str) -> None:
        verb, _, arg = rest.partition(" ")
        verb, arg = verb.lower(), arg.strip()
        if name == "library":
            self._library(verb, arg)
        else:
            self._follow(verb, arg)

    def _library(self, verb: str, arg: str) -> None:
        engine = self.engine()
        if verb != "clear":
            self._confirm_clear = False
        if verb in ("", "show"):
            page = int(arg) if arg.isdigit() else 1
            view = self._run(lambda s: library.load_page(Library(s), LOCAL_USER, page))
            self.show(library_embed(view, engine))
        elif verb in ("read", "unread", "remove"):
            self._change(verb, arg)
        elif verb == "export":
            fmt, _, target = arg.partition(" ")
            fmt = fmt.lower() or "bibtex"
            stored_text(target, "the file name")
            name, data, count, _missing = self._run(
                lambda s: library.export_file(Library(s), engine, LOCAL_USER, fmt)
            )
            if target.strip():
                path = Path(target.strip()).expanduser()
                path.write_bytes(data)
                self.write(f"Wrote {count} paper(s) to {path}.\n")
            else:
                self.write(f"--- {name} ({count} papers)\n{data.decode('utf-8')}")
        elif verb == "import":
            self.write(self.import_file(Path(arg.strip()).expanduser()) + "\n")
        elif verb == "clear":
            if arg.lower() != "yes":
                self.write(
                    "This deletes your library, follows and everything stored about you. "
                    "Type `/library clear yes` to confirm.\n"
                )
                return
            counts = self._run(lambda s: Library(s).forget_user(LOCAL_USER))
            self.write("Deleted: " + ", ".join(f"{n} {k}" for k, n in counts.items()) + ".\n")
        else:
            self.write(f"Unknown /library command {verb!r}.\n" + LIBRARY_HELP)

    def import_file(self, path: Path) -> str:
        """`/library import FILE`: the same matching, saving and answer as on Discord."""
        stored_text(str(path), "the file name")
        engine = self.engine()
        prepared = importing.prepare(engine, path.name, importing.read_path(path))

        async def go(storage: Storage) -> str:
            report = await importing.save_matched(
                Library(storage), engine, LOCAL_USER, path.name, prepared, max_saved=self.max_saved
            )
            return report.text().replace("`", "")

        return self._run(go)

    def _change(self, verb: str, ref: str) -> None:
        stored_text(ref, "the paper")
        engine = self.engine()

        async def go(storage: Storage) -> str:
            store = Library(storage)
            paper_id = await library.resolve_saved(store, engine, LOCAL_USER, ref)
            if verb == "remove":
                await store.remove(LOCAL_USER, paper_id)
                return f"Removed {paper_id} from your library."
            await store.mark_read(LOCAL_USER, paper_id, library.now(), verb == "read")
            return f"Marked {paper_id} as {verb}."

        self.write(self._run(go) + "\n")

    def _follow(self, verb: str, arg: str) -> None:
        if verb in ("add", "foryou"):
            # `/follow foryou`: the For you feed, a follow whose query is `FOR_YOU` (as on Discord).
            query = FOR_YOU if verb == "foryou" else " ".join(arg.split())
            if verb == "add":
                stored_text(query, "the query", WORDS)
                self.engine().search(query, limit=1)  # bad syntax: a clear message, nothing kept

            async def add(storage: Storage) -> str | None:
                follows = Follows(storage)
                await follows.record_corpus((p.id for p in self.engine().papers), library.now())
                try:
                    made = await follows.add(LOCAL_USER, query, now=library.now())
                except FollowRefused:
                    return None
                return made.follow_id

            follow_id = self._run(add)
            shown = "For you" if query == FOR_YOU else repr(query)
            if follow_id is None:
                self.write(f"Already following {shown} (see /follow list).\n")
                return
            self.write(f"Following {shown} ({follow_id}): new matches show after /reload.\n")
        elif verb in ("", "list"):
            found = self._run(lambda s: Follows(s).personal(LOCAL_USER))
            self.show(follows_embed(found, "🔔 Your follows", "this console"))
        elif verb == "remove":
            stored_text(arg, "the follow id")
            removed = self._run(lambda s: Follows(s).remove(arg.strip()))
            self.write(
                "Follow removed.\n" if removed else f"No follow {arg!r} (see /follow list).\n"
            )
        elif verb == "tune":
            self._tune(arg)
        else:
            self.write(f"Unknown /follow command {verb!r}.\n" + LIBRARY_HELP)

    def _tune(self, arg: str) -> None:
        """`/follow tune ID KEY=VALUE ...`: the same settings and checks as Discord's."""
        stored_text(arg, "the options")
        follow_id, _, rest = arg.strip().partition(" ")
        try:
            options = tune_options(rest)
        except FeedError as exc:
            self.write(f"{exc}\n")
            return

        async def go(storage: Storage) -> str:
            found = await Follows(storage).get(follow_id)
            if found is None or found.user_id != LOCAL_USER or found.channel_id is not None:
                return f"No follow {follow_id!r} of yours (see /follow list)."
            feeds = Feeds(storage)
            try:
                settings = tuned(await feeds.get(found.follow_id, found.user_id), **options)
            except FeedError as exc:
                return str(exc)
            await feeds.put(settings, library.now())
            return f"{notice_title(found)}: {settings.describe()}."

        self.write(self._run(go) + "\n")

    def after_reload(self) -> None:
        """Print what each follow gets from the papers the reload added (the console's notices
        go through the same claim and confirm as the bot's DMs)."""
        if not self.db.exists():
            return  # no database yet: no follows to tell
        engine = self.engine()

        async def go(storage: Storage) -> list[tuple[Notice, list[Paper]]]:
            await plan(storage, engine, library.now())
            printer = NoticePrinter(storage, engine)
            await deliver(
                storage,
                engine,
                printer,
                now=library.now,
                owner="console",
                page=NOTICE_PAGE,
                console=True,
            )
            return printer.printed

        for notice, more in self._run(go):
            self.show(notice_message(notice)[0])
            for paper in more:
                self.write(f"  {paper.id}  {paper.title}\n")


class NoticePrinter:
    """`bot.follows.notices.Sender` for the console: keeps each notice, with the papers past
    its first page, to print once the database call returns (printing cannot fail)."""

    def __init__(self, storage: Storage, engine: SearchEngine) -> None:
        self.storage = storage
        self.engine = engine
        self.printed: list[tuple[Notice, list[Paper]]] = []

    async def send(self, notice: Notice) -> int:
        rest = await Follows(self.storage).batch_page(notice.batch, notice.per_page, notice.total)
        more = [p for p in (find(self.engine, pid) for pid in rest) if p is not None]
        self.printed.append((notice, more))
        return 0

    async def find_sent(self, notice: Notice, since: datetime | None) -> int | None:
        return None

"""For you in the terminal: `python -m bot foryou --user ID` (a member's page from the bot's
database, what `/foryou` would show them; looking marks nothing as shown to them) and the
console's `/foryou [PAGE]`, `/foryou up N` and `/foryou down N` (👍 / 👎 for paper N of the page
on screen) for its local reader.

The same ranking (`bot.foryou.load_page`), embed (`bot.app.exts.foryou.embeds`) and ratings
as on Discord; printed through the console's embed text.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, TextIO

from bot.app.exts.foryou.embeds import foryou_embed
from bot.app.results.rating import rated_text
from bot.console.localdb import ConsoleContext
from bot.console.text import embed_text
from bot.follows import FOR_YOU, Follows
from bot.foryou import DOWN, PAGE, UP, ForYouPage, Ratings, load_page
from bot.library import Library, now
from bot.storage.store import Storage

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.search.engine import SearchEngine

FORYOU_HELP = """For you (from what you /save and rate):
  /foryou [PAGE]          new papers ranked for you      /foryou up N | down N   👍 / 👎 paper N
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = sub.add_parser("foryou", help="a member's For you page, from the bot's database")
    cmd.add_argument("--user", type=int, required=True, help="the member's Discord id")
    cmd.add_argument("--page", type=int, default=1, help="which page (default 1)")
    cmd.add_argument("--url", help="database URL (default: DATABASE_URL, else [storage] url)")


async def member_page(
    storage: Storage, engine: SearchEngine, user_id: int, page: int, *, remember: bool = True
) -> tuple[ForYouPage, bool]:
    """The member's page (remembered as shown to them when `remember`) and whether they have
    follows."""
    follows = await Follows(storage).personal(user_id)
    queries = [f.query for f in follows if f.query != FOR_YOU]
    found = await load_page(
        Library(storage),
        Ratings(storage),
        engine,
        user_id,
        queries,
        max(1, page),
        now(),
        remember=remember,
    )
    return found, bool(queries)


def run(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from bot.search.engine import SearchEngine

    engine = SearchEngine.load(settings)

    async def go() -> tuple[ForYouPage, bool]:
        storage = await Storage.open(args.url or settings.storage.database)
        try:
            return await member_page(storage, engine, args.user, args.page, remember=False)
        finally:
            await storage.close()

    found, follows = asyncio.run(go())
    out.write(embed_text(foryou_embed(found, follows)) + "\n")
    return 0


class ConsoleForYou:
    """`/foryou` in the console, for its one local reader (`user_id`)."""

    def __init__(self, context: ConsoleContext, user_id: int) -> None:
        self.db = context.db
        self.engine = context.engine
        self.show = context.show
        self.write = context.write
        self.user_id = user_id
        self.page: ForYouPage | None = None

    def handle(self, rest: str) -> None:
        verb, _, arg = rest.strip().partition(" ")
        if verb in ("up", "down"):
            self._rate(UP if verb == "up" else DOWN, arg.strip())
            return
        if verb and not verb.isdigit():
            self.write(FORYOU_HELP)
            return
        engine = self.engine()
        page = int(verb) if verb else 1
        found, follows = self.db.run(lambda s: member_page(s, engine, self.user_id, page))
        self.page = found
        self.show(foryou_embed(found, follows))

    def hidden(self) -> set[str]:
        """What the reader said 👎 to (left out of `/new`)."""
        return self.db.run(lambda s: Ratings(s).rejected(self.user_id))

    def remember(self, paper_ids: list[str], via: str) -> None:
        """Papers the reader was shown (`/new`): no feed pushes them again."""
        self.db.run(lambda s: Ratings(s).mark_shown(self.user_id, paper_ids, via, now()))

    def _rate(self, rating: int, which: str) -> None:
        items = self.page.items if self.page is not None else []
        first = (self.page.page - 1) * PAGE + 1 if self.page is not None else 1
        numbered = {str(i): item.paper for i, item in enumerate(items, start=first)}
        paper = numbered.get(which)
        if paper is None:
            shown = ", ".join(numbered) or "none: run /foryou first"
            self.write(f"Rate which paper? Give its number on the For you page ({shown}).\n")
            return
        stored = self.db.run(lambda s: Ratings(s).rate(self.user_id, paper.id, rating, now()))
        self.write(rated_text(paper, stored).replace("**", "").replace("`", "") + "\n")

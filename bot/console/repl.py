"""The token-less console: the bot's slash commands served on the terminal, as text.

A newcomer without a Discord token can try every command at once: `/search optimal transport`,
`/paper <title or id>`, `/similar ...`, `/random [venue]`, `/help`, and `next`, `prev`,
`open N`, `more`, `/save` in place of the buttons; `/library ...` and `/follow ...` work on the
bot's database for one local reader (`bot.console.library`), `/daily ...` and `/today` for the
console's own server, whose post prints here when due (`bot.console.daily`). The answers come
from the same
engine, page logic
(`bot.app.results.pages.PageState`) and embeds (`bot.app.render`) as in Discord. When stdin is not a
terminal (CI, a pipe) it reads commands without prompting and stops at end of input.
"""

from __future__ import annotations

import random
import shlex
import sys
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TextIO

import discord

from bot.app import render
from bot.app.checks import WORDS, stored_text
from bot.app.results.embeds import page_of, results_embed
from bot.app.results.pages import PageState, page_limit
from bot.config import DailySettings, LibrarySettings, Settings
from bot.console.daily import DAILY_HELP, LocalDaily
from bot.console.foryou import FORYOU_HELP, ConsoleForYou
from bot.console.library import LIBRARY_HELP, LOCAL_USER, LocalLibrary
from bot.console.links import FIND_HELP, finding_for, finding_text
from bot.console.localdb import ConsoleContext, LocalDatabase
from bot.console.text import embed_text, paper_actions, result_notes
from bot.library import citation
from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from bot.search.results import SearchError, SearchResult
from bot.timing import Clock, SystemClock

PROMPT = "paperbot> "
CONSOLE_HELP = """Console commands (the Discord buttons are words here):
  /search QUERY      ranked papers        next, prev    other pages
  /paper TITLE|ID    one paper in full    open N        open hit N of this page
  /similar TITLE|ID  papers like it       more          papers like the last opened one
  /random [VENUE]    a random paper       /help, quit
  /cite [N|TITLE|ID] the BibTeX of the paper on screen (or hit N), as /library export writes it
  /new [DAYS] [VENUE] papers added in the last DAYS days (default 7), newest first
  /reload            re-read the settings and corpus files (the old ones stay if broken)
"""


class Console:
    """Holds the current page and paper so `next`, `open N` and `more` work like the buttons."""

    def __init__(
        self,
        engine: SearchEngine,
        out: TextIO,
        *,
        page_size: int = 5,
        color: bool = False,
        rng: random.Random | None = None,
        settings: Settings | None = None,
        corpus_files: Sequence[Path] | None = None,
        database: str | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.engine = engine
        self.settings = settings  # for /reload; None when embedded without settings
        self.corpus_files = corpus_files
        self.out = out
        self.page_size = page_limit(page_size)
        self.color = color
        self.rng = rng or random.Random()
        self.state: PageState | None = None
        self.result: SearchResult | None = None
        self.paper: Paper | None = None
        if database is None:
            database = settings.storage.database if settings is not None else ":memory:"
        self.clock: Clock = clock or SystemClock()
        self._out_lock = threading.Lock()  # the daily post prints from the console's loop thread
        self._at_prompt = False
        self.db = LocalDatabase(database)
        limit = (settings.library if settings is not None else LibrarySettings()).max_saved
        context = ConsoleContext(self.db, lambda: self.engine, self.show, self.write)
        self.library = LocalLibrary(context, max_saved=limit)
        self.foryou = ConsoleForYou(context, LOCAL_USER)
        self.daily = LocalDaily(
            context,
            self.announce,
            settings=settings.daily if settings is not None else DailySettings(),
            clock=self.clock,
            rng=rng,
        )

    def write(self, text: str) -> None:
        with self._out_lock:
            self.out.write(text)
            self.out.flush()

    def show(self, embed: discord.Embed) -> None:
        """One answer, followed by a blank line so consecutive answers stay apart."""
        self.write(embed_text(embed, color=self.color, now=self.clock.now()) + "\n")

    def announce(self, embed: discord.Embed, note: str) -> None:
        """A post arriving on its own (the paper of the day): printed at once, on a line of its
        own even when the prompt is waiting, and the prompt shown again after it."""
        text = embed_text(embed, color=self.color, now=self.clock.now()) + note + "\n"
        with self._out_lock:
            if self._at_prompt:
                text = "\n" + text + PROMPT
            self.out.write(text)
            self.out.flush()

    def show_page(self, state: PageState) -> None:
        personal = state.kind == "n" and self.db.exists()  # /new: without the reader's 👎
        hidden = self.foryou.hidden() if personal else set()
        result = state.run(self.engine, hidden)
        if personal:
            self.foryou.remember([hit.paper.id for hit in result.hits], "new")
        self.state, self.result = replace(state, page=page_of(result)[0]), result
        embed = results_embed(
            result,
            heading=state.heading(self.engine),
            venue=state.venue or None,
            empty=state.empty_text(),
        )
        self.write(result_notes(result))  # a dropped phrase, weak matches, the order
        self.show(embed)
        if result.suggestion:
            # Discord offers a button; here the corrected command is one copy away.
            self.write(f"Did you mean: /search {result.suggestion}\n\n")

    def show_paper(self, paper: Paper) -> None:
        self.paper = paper
        self.show(render.paper_embed(paper))
        self.write(paper_actions() + "\n")

    def handle(self, line: str) -> bool:
        """Run one command line; False means quit. User mistakes print a short message."""
        line = line.strip()
        if not line or line.startswith("#"):
            return True
        name, _, rest = line.partition(" ")
        name, rest = name.lstrip("/").lower(), rest.strip()
        try:
            return self._dispatch(name, rest)
        except SearchError as exc:
            self.write(f"{exc}\n")
        return True

    def _dispatch(self, name: str, rest: str) -> bool:
        if name in ("quit", "exit", "q"):
            return False
        if name == "search":
            self.show_page(PageState(kind="s", ref=rest, limit=self.page_size))
        elif name == "paper":
            self.show_paper(self.engine.paper(_unquote(rest)))
        elif name == "similar":
            paper = self.engine.paper(_unquote(rest))
            self.show_page(PageState(kind="l", ref=paper.id, limit=self.page_size))
        elif name == "random":
            self.show_paper(self.engine.random(_unquote(rest) or None, self.rng))
        elif name == "new":
            days, _, venue = rest.partition(" ")
            if not days.isdigit():
                days, venue = "7", rest
            state = PageState(kind="n", ref=days, limit=self.page_size, venue=_unquote(venue))
            self.show_page(state)
        elif name == "reload":
            self._reload()
        elif name in ("library", "follow"):
            self.library.handle(name, rest)
        elif name == "foryou":
            self.foryou.handle(rest)
        elif name in ("daily", "today"):
            stored_text(rest, f"the /{name} line", WORDS)  # a /daily set topic is stored
            today = self.daily.handle(name, rest)
            if today is not None:
                self.paper = today
        elif name == "find":
            self.write(finding_text(finding_for(self.engine, rest, self.settings)))
        elif name == "save":
            self._save(rest)
        elif name == "cite":
            chosen = self._chosen(rest)
            if chosen is not None:
                self.write(citation(chosen) + "\n")
        elif name == "help":
            self.show(render.help_embed(self.engine.venues(), ephemeral=None))
            self.write(CONSOLE_HELP + FIND_HELP + LIBRARY_HELP + FORYOU_HELP + DAILY_HELP)
        elif name in ("next", "prev"):
            if self.state is None or self.result is None:
                self.write("No results yet: try /search optimal transport\n")
                return True
            page = self.state.page + (1 if name == "next" else -1)
            if not 1 <= page <= self.result.pages:
                self.write(f"No {'next' if name == 'next' else 'previous'} page.\n")
                return True
            self.show_page(replace(self.state, page=page))
        elif name == "open":
            hits = self.result.hits if self.result else []
            ranks = {str(hit.rank): hit.paper for hit in hits}
            if rest not in ranks:
                shown = ", ".join(ranks) or "none on screen"
                self.write(f"Open which hit? Give its number ({shown}).\n")
                return True
            self.show_paper(ranks[rest])
        elif name == "more":
            if self.paper is None:
                self.write("Open a paper first (/paper, /random or open N).\n")
                return True
            self.show_page(PageState(kind="l", ref=self.paper.id, limit=self.page_size))
        else:
            self.write(f"Unknown command {name!r}.\n" + CONSOLE_HELP)
        return True

    def _chosen(self, rest: str) -> Paper | None:
        """The paper a button would act on: hit N of the results, a title or id, else the
        paper on screen (None, said, when there is none)."""
        if rest:
            ranks = {str(hit.rank): hit.paper for hit in (self.result.hits if self.result else [])}
            return ranks.get(rest) or self.engine.paper(_unquote(rest))
        if self.paper is None:
            self.write("Open a paper first (/paper, /random or open N), or give a hit number.\n")
        return self.paper

    def _save(self, rest: str) -> None:
        """`/save` the paper on screen, or `/save N` hit N of the results (the Save button)."""
        paper = self._chosen(rest)
        if paper is not None:
            self.library.save(paper)

    def _reload(self) -> None:
        """The same load-validate-swap as /admin reload, in the foreground (no event loop)."""
        if self.settings is None:
            self.write("Reload is not available here: start the console with python -m bot.\n")
            return
        from bot.app.reload import reload_now

        self.write("Reloading the corpus…\n")
        outcome = reload_now(self, "console", self.corpus_files)  # type: ignore[arg-type]  # settings set
        if outcome.ok:
            self.state = self.result = self.paper = None  # pages of the old corpus
        self.write(outcome.summary() + "\n")
        if outcome.ok:
            self.library.after_reload()

    def run(self, stdin: TextIO) -> int:
        interactive = stdin.isatty()
        if interactive:
            self.write(
                f"{len(self.engine.papers):,} papers loaded. Try: /search optimal "
                "transport   (/help for more, quit to leave)\n"
            )
        try:
            self.daily.start()
        except SearchError as exc:  # the database cannot be opened: say so, search still works
            self.write(f"{exc}\n")
        try:
            while True:
                try:
                    line = self._read(stdin, interactive)
                except (EOFError, KeyboardInterrupt):  # Ctrl-D / Ctrl-C at the prompt
                    if interactive:
                        self.write("\n")
                    return 0
                if not self.handle(line):
                    return 0
        finally:
            self.close()

    def close(self) -> None:
        """Stop the daily scheduler, then close the database and its loop."""
        self.daily.close()
        self.db.close()

    def _read(self, stdin: TextIO, interactive: bool) -> str:
        self._at_prompt = interactive
        try:
            if interactive and stdin is sys.stdin:
                return input(PROMPT)  # line editing and history when readline is available
            if interactive:
                self.write(PROMPT)
            line = stdin.readline()
        finally:
            self._at_prompt = False
        if not line:
            raise EOFError
        return line


def _unquote(text: str) -> str:
    """`"a title"` as typed in a shell habit, without the quotes."""
    try:
        parts = shlex.split(text)
    except ValueError:
        return text.strip()
    return " ".join(parts) if len(parts) != 1 else parts[0]


def run_console(
    engine: SearchEngine,
    *,
    page_size: int = 5,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
    settings: Settings | None = None,
    corpus_files: Sequence[Path] | None = None,
) -> int:
    out = out or sys.stdout
    stdin = stdin or sys.stdin
    color = out.isatty() and stdin.isatty()
    return Console(
        engine, out, page_size=page_size, color=color, settings=settings, corpus_files=corpus_files
    ).run(stdin)

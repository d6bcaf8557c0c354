"""The follows bot on the loopback Discord, shared by the follows tests: start, stop, reload
with a grown corpus, and wait until the notice passes are done."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.app.client import PaperBot
from bot.config import SearchSettings
from bot.papers.records import Link, Paper
from bot.search.engine import SearchEngine
from bot.storage.store import Storage
from bot.timing import Clock
from tests.app.exts.daily.support import until
from tests.app.helpers import TOKEN, answered, make_bot, make_settings
from tests.fakediscord import BotConnection, FakeDiscord

QUERY = "hyperbolic embeddings"


def new_paper(n: int, title: str, abstract: str) -> Paper:
    return Paper(
        id=f"new/{n:03d}",
        title=title,
        abstract=abstract,
        venue="NeurIPS 2026",
        year=2026,
        authors=(f"Author {n}",),
        links=(Link("page", f"https://example.org/paper/{n}"),),
    )


MATCHING = [
    new_paper(1, "Hyperbolic Embeddings for Trees", "Trees embed well in curved space."),
    new_paper(2, "Fast Graph Embeddings", "Hyperbolic geometry makes graph layouts cheap."),
]
OTHER = [new_paper(3, "A Study of Rainfall", "Weather records from ten cities.")]


def grown(base: SearchEngine, *papers: Paper) -> SearchEngine:
    return SearchEngine([*base.papers, *papers], settings=SearchSettings())


@dataclass
class Env:
    fake: FakeDiscord
    path: Path
    connect: Callable[..., Awaitable[BotConnection]]
    engine: SearchEngine
    storage: Storage | None = None
    connection: BotConnection | None = None

    @property
    def bot(self) -> PaperBot:
        assert self.connection is not None
        return self.connection.bot  # type: ignore[return-value]

    @property
    def follows_storage(self) -> Storage:
        assert self.storage is not None
        return self.storage

    async def start(
        self, engine: SearchEngine | None = None, *, clock: Clock | None = None
    ) -> PaperBot:
        """Start the bot on the same database; `clock` drives the notices' retries."""
        self.storage = await Storage.open(str(self.path))
        bot = make_bot(make_settings(self.fake), engine or self.engine, self.storage)
        bot.clock = clock
        self.connection = await self.connect(bot, TOKEN)
        await self.settled()
        return bot

    async def settled(self) -> None:
        """Wait until the follows cog's notice passes (start or reload) are done."""
        cog: Any = self.bot.get_cog("Follows")

        async def idle() -> bool:
            return not cog._tasks and not cog._lock.locked()

        await asyncio.sleep(0.05)
        await until(idle, what="follow notices to finish")

    async def stop(self) -> None:
        if self.connection is not None:
            await self.connection.close()
            self.connection = None
        if self.storage is not None:
            await self.storage.close()
            self.storage = None

    async def reload(self, engine: SearchEngine) -> None:
        self.bot.reloader.load = lambda settings: engine
        outcome = await self.bot.reloader.reload("test")
        assert outcome.ok, outcome.reasons
        await self.settled()

    async def slash(self, name: str, options: dict[str, Any] | None = None, **kw: Any) -> Any:
        return await answered(await self.fake.slash(name, options, **kw), type=4, ephemeral=True)

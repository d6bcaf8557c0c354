"""Cite under a paper, through the real discord.py client and the loopback Discord: the BibTeX
`/library export` writes, ephemeral; in a code block when it fits a message, else as a `.bib`
file (a long abstract makes entries of many KB)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bot.config import SearchSettings
from bot.library import citation
from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from tests.app.helpers import TOKEN, answered, make_bot, make_settings
from tests.fakediscord import BotConnection, FakeDiscord

SHORT = Paper(
    id="c/1",
    title="Short {Braces} & 100% Sure",
    abstract="Brief.",
    venue="ICML 2026",
    year=2026,
    authors=("Ada Lovelace",),
)
LONG = Paper(
    id="c/2",
    title="A Paper With A Long Abstract",
    abstract="Many words about transport plans. " * 200,
    venue="ICML 2026",
    year=2026,
    authors=("Grace Hopper",),
)


async def test_cite_answers_the_exports_bibtex_as_text_or_as_a_file(
    fake_discord: FakeDiscord, connect_bot: Callable[..., Awaitable[BotConnection]]
) -> None:
    engine = SearchEngine([SHORT, LONG], settings=SearchSettings())
    await connect_bot(make_bot(make_settings(fake_discord), engine, None), TOKEN)
    fake = fake_discord

    detail = await answered(await fake.slash("paper", {"paper": SHORT.id}), type=4)
    assert f"pb:cite:{SHORT.id}" in detail.custom_ids
    short = await answered(await fake.click(detail, f"pb:cite:{SHORT.id}"), type=4)
    assert short.ephemeral
    assert short.content == f"```bibtex\n{citation(SHORT)}```"
    assert r"\textbraceleft{}Braces\textbraceright{} \& 100\% Sure" in short.content

    detail = await answered(await fake.slash("paper", {"paper": LONG.id}), type=4)
    long = await answered(await fake.click(detail, f"pb:cite:{LONG.id}"), type=4)
    assert long.ephemeral
    assert "attached: too long to show" in long.content
    [attachment] = long.message["attachments"]  # type: ignore[index]
    assert attachment["filename"].endswith(".bib")
    assert fake.file_bytes(attachment).decode() == citation(LONG)

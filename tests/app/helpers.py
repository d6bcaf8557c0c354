"""Shared helpers for the loopback bot tests: building a PaperBot and checking Discord's limits.

The fake Discord refuses what Discord refuses (400 / 50035, tests/fakediscord/validate.py);
`assert_within_limits` checks a rendered body directly, for unit tests of the renderers that
run without the stand-in and to name the broken limit at the assertion.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from bot.app import limits
from bot.app.client import PaperBot
from bot.config import DiscordSettings, Secrets, Settings
from bot.papers.links import clean_url
from bot.search.engine import SearchEngine
from bot.storage.store import Storage
from tests.fakediscord import (
    BotConnection,
    FakeDiscord,
    InteractionHandle,
    iter_components,
    rules_components,
)
from tests.fakediscord.rules_messages import COMPONENTS_V2

TOKEN = "fake-token.Sup3rSecretValue.DoNotLog"


def make_settings(fake: FakeDiscord, *, guild: bool = False, **discord_options: Any) -> Settings:
    base = Settings()
    options = {"search_cooldown_uses": 50, "search_cooldown_seconds": 30.0, **discord_options}
    # A bot built without a Storage opens the configured database: never the project's own
    # state/ (a reader's real database), one folder per fake Discord instead, so a restart
    # within a test (the same `fake`) finds the same database.
    state = getattr(fake, "state_dir", None)
    if state is None:
        state = Path(tempfile.mkdtemp(prefix="paperbot-state-"))
        fake.state_dir = state
    storage = replace(
        base.storage, database=str(state / "paperbot.sqlite3"), backup_dir=state / "backups"
    )
    return replace(
        base,
        storage=storage,
        discord=replace(DiscordSettings(), **options),
        secrets=Secrets(
            discord_token=TOKEN,
            owner_ids=(int(fake.owner.id),),
            guild_id=int(fake.guild.id) if guild else None,
        ),
    )


def make_bot(
    settings: Settings, engine: SearchEngine, storage: Storage | None, **options: Any
) -> PaperBot:
    bot = PaperBot(settings, engine=engine, storage=storage, shard_count=1, **options)
    bot.defer_after = 1.0
    return bot


@asynccontextmanager
async def bot_on_sqlite(
    fake: FakeDiscord,
    connect_bot: Callable[..., Awaitable[BotConnection]],
    engine: SearchEngine,
    path: Path,
) -> AsyncIterator[PaperBot]:
    """A bot on its own SQLite database at `path`, connected to the loopback Discord."""
    storage = await Storage.open(str(path))
    try:
        bot = make_bot(make_settings(fake), engine, storage)
        await connect_bot(bot, TOKEN)
        yield bot
    finally:
        await storage.close()


async def ephemeral_reply(
    fake: FakeDiscord, name: str, options: dict[str, Any] | None = None, **kw: Any
) -> Any:
    """The answer to `/name options`, which must be the first, ephemeral response."""
    return await answered(await fake.slash(name, options, **kw), type=4, ephemeral=True)


def assert_within_limits(body: dict[str, Any]) -> None:
    """Every Discord length/count limit on a message or callback body."""
    data = body.get("data", body) if "type" in body and "data" in body else body
    if not isinstance(data, dict):
        return
    assert len(data.get("content") or "") <= limits.CONTENT
    embeds = data.get("embeds") or []
    assert len(embeds) <= limits.EMBEDS_PER_MESSAGE
    assert sum(limits.embed_length(e) for e in embeds) <= limits.EMBED_TOTAL
    for embed in embeds:
        assert len(embed.get("title") or "") <= limits.EMBED_TITLE
        assert len(embed.get("description") or "") <= limits.EMBED_DESCRIPTION
        assert len((embed.get("footer") or {}).get("text") or "") <= limits.EMBED_FOOTER
        assert len(embed.get("fields") or []) <= limits.EMBED_FIELDS
        for field in embed.get("fields") or []:
            assert 0 < len(field["name"]) <= limits.FIELD_NAME
            assert 0 < len(field["value"]) <= limits.FIELD_VALUE
    rows = data.get("components") or []
    if int(data.get("flags") or 0) & COMPONENTS_V2:
        assert not rules_components.message_refusals(data, [], create=True)
    else:
        assert len(rows) <= 5
        for row in rows:
            assert len(row.get("components") or []) <= 5
    for component in iter_components(rows):
        if "custom_id" in component:
            assert len(component["custom_id"]) <= limits.CUSTOM_ID, component["custom_id"]
        if "label" in component:
            assert len(component["label"]) <= limits.BUTTON_LABEL
        for option in component.get("options") or []:
            assert len(option["label"]) <= limits.OPTION_LABEL
            assert len(option["value"]) <= limits.OPTION_VALUE
            assert len(option.get("description") or "") <= limits.OPTION_DESCRIPTION
        assert len(component.get("options") or []) <= limits.SELECT_OPTIONS
    choices = data.get("choices") or []
    assert len(choices) <= limits.CHOICES
    for choice in choices:
        assert 1 <= len(choice["name"]) <= limits.CHOICE_NAME
        assert len(str(choice["value"])) <= limits.CHOICE_VALUE


def page_texts(data: dict[str, Any]) -> list[str]:
    """A v2 message's text displays, in order (a results page: its heading, then each hit)."""
    return [c["content"] for c in iter_components(data.get("components") or []) if c["type"] == 10]


def page_heading(data: dict[str, Any]) -> str:
    """A results page's title line ("🔎 query"), without the markdown header mark."""
    return page_texts(data)[0].split("\n")[0].removeprefix("### ")


def page_footer(data: dict[str, Any]) -> str:
    """A results page's small print: "page 1/2 · 10 matches for “query”"."""
    return page_texts(data)[0].split("\n")[1].removeprefix("-# ")


def page_hits(data: dict[str, Any]) -> str:
    """The hits of a results page, one block each, as an embed's description held them."""
    return "\n\n".join(page_texts(data)[1:])


async def answered(handle: InteractionHandle, **expect: Any) -> Any:
    """The callback, checked against Discord's limits, plus all later replies checked too."""
    reply = await handle.assert_answered(**expect)
    for item in await handle.settle(quiet=0.05):
        assert_within_limits(item.body)
    return reply


# Discord constructs paper text must never produce once escaped (`bot.app.markdown`): an
# opening character counts when no odd run of backslashes precedes it. Bare URLs are left
# as written (Discord shows them as links to themselves), so they are blanked first.
_UNESCAPED = r"(?<!\\)(?:\\\\)*"
MARKUP = {
    "masked link": re.compile(_UNESCAPED + r"\[[^\]]*\]\("),
    "mention, timestamp or emoji": re.compile(_UNESCAPED + r"<[@#:at/]"),
    "code": re.compile(_UNESCAPED + r"`"),
    "header or subtext": re.compile(r"(?m)^[ \t]*(?:#|-#)"),
    "quote": re.compile(r"(?m)^[ \t]*>"),
    "spoiler": re.compile(_UNESCAPED + r"\|\|"),
    "everyone": re.compile(r"@(?:everyone|here)"),
}
_BARE_URL = re.compile(r"https?://[^\s<>]+")


def markup_in(text: str) -> list[str]:
    """The names of the Discord constructs `text` would render (empty: inert)."""
    text = _BARE_URL.sub("url", text)  # a word: what follows is not at a line start
    return [name for name, pattern in MARKUP.items() if pattern.search(text)]


def assert_urls_well_formed(body: dict[str, Any]) -> None:
    """Every embed url and link button URL is one `clean_url` keeps as is (http(s), a real
    host, no space), and every masked link in a description or field targets one too."""
    data = body.get("data", body) if "type" in body and "data" in body else body
    urls = [e["url"] for e in data.get("embeds") or [] if e.get("url")]
    urls += [c["url"] for c in iter_components(data.get("components") or []) if c.get("url")]
    for embed in data.get("embeds") or []:
        texts = [embed.get("description") or ""]
        texts += [f.get("value") or "" for f in embed.get("fields") or []]
        urls += [m for text in texts for m in re.findall(r"\]\((https?://[^)\s]*)\)", text)]
    for url in urls:
        assert clean_url(url) == url, url

"""Shared helpers for the loopback bot tests: building a PaperBot and checking Discord's limits.

The fake Discord refuses what Discord refuses (400 / 50035, tests/fakediscord/validate.py);
`assert_within_limits` checks a rendered body directly, for unit tests of the renderers that
run without the stand-in and to name the broken limit at the assertion.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bot.app import limits
from bot.app.client import PaperBot
from bot.config import DiscordSettings, Secrets, Settings
from bot.search.engine import SearchEngine
from bot.storage.sqlite import Storage
from tests.fakediscord import FakeDiscord, InteractionHandle, iter_components

TOKEN = "fake-token.Sup3rSecretValue.DoNotLog"


def make_settings(fake: FakeDiscord, *, guild: bool = False, **discord_options: Any) -> Settings:
    base = Settings()
    options = {"search_cooldown_uses": 50, "search_cooldown_seconds": 30.0, **discord_options}
    return replace(
        base,
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


async def answered(handle: InteractionHandle, **expect: Any) -> Any:
    """The callback, checked against Discord's limits, plus all later replies checked too."""
    reply = await handle.assert_answered(**expect)
    for item in await handle.settle(quiet=0.05):
        assert_within_limits(item.body)
    return reply

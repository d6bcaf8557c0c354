"""The base of every persistent component of the bot (`bot.app.components`, `bot.app.saving`).

Kept apart so both modules can build on it without importing each other.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Self, TypeVar

import discord

from bot.app import respond

if TYPE_CHECKING:
    from bot.app.client import PaperBot

ItemT = TypeVar("ItemT", bound=discord.ui.Item[Any], covariant=True)
Match = re.Match[str]


class BotItem(discord.ui.DynamicItem[ItemT], template=r"(?!)"):
    """A persistent component of this bot: discord.py's two hooks, typed for `PaperBot`.

    discord.py types an item's interaction for any client; these items are only ever registered
    on a `PaperBot` (its setup_hook), so the narrowing is said once here. Subclasses rebuild
    themselves from a clicked custom_id in `restore` and do their work in `answer`, whose
    failures `respond.guarded` turns into a reply. The base's template matches nothing.
    """

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[PaperBot],  # type: ignore[override]  # see class doc
        item: discord.ui.Item[Any],
        match: Match,
        /,
    ) -> Self:
        return cls.restore(interaction, item, match)

    @classmethod
    def restore(
        cls, interaction: discord.Interaction[PaperBot], item: discord.ui.Item[Any], match: Match
    ) -> Self:
        raise NotImplementedError

    async def callback(
        self,
        interaction: discord.Interaction[PaperBot],  # type: ignore[override]  # see class doc
    ) -> None:
        await respond.guarded(interaction, self.answer(interaction))

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        raise NotImplementedError

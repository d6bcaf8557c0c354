"""The base of every persistent component of the bot (`bot.app.results.views`, each
feature's `views`): how one is rebuilt from a click, how a button is built from its class's
look, and the button about one paper whose custom_id carries the paper's id or key.

Kept apart so both modules can build on it without importing each other.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar

import discord

from bot.app import limits, refs, respond

if TYPE_CHECKING:
    from bot.app.client import PaperBot

ItemT = TypeVar("ItemT", bound=discord.ui.Item[Any], covariant=True)
Match = re.Match[str]
Button = discord.ui.Button[discord.ui.View]


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
        """The item that was clicked. Most are rebuilt from their custom_id alone (`from_match`);
        an item that needs the clicked component or message overrides this instead."""
        return cls.from_match(match)

    @classmethod
    def from_match(cls, match: Match) -> Self:
        """The item whose custom_id gave `match` (the groups of its class's template)."""
        raise NotImplementedError

    @classmethod
    def kept(cls, item: discord.ui.Item[Any]) -> Self:
        """An instance around the clicked item with its custom_id kept as sent (it may hold a
        key, not the id it stands for), for `restore`."""
        rebuilt = cls.__new__(cls)
        discord.ui.DynamicItem.__init__(rebuilt, item)
        return rebuilt

    async def callback(
        self,
        interaction: discord.Interaction[PaperBot],  # type: ignore[override]  # see class doc
    ) -> None:
        await respond.guarded(interaction, self.answer(interaction))

    async def answer(self, interaction: discord.Interaction[PaperBot]) -> None:
        raise NotImplementedError


class BotButton(BotItem[Button], template=r"(?!)"):
    """A persistent button: its look is declared on the class, its custom_id per instance."""

    LABEL: ClassVar[str] = ""
    STYLE: ClassVar[discord.ButtonStyle] = discord.ButtonStyle.secondary
    EMOJI: ClassVar[str | None] = None

    def __init__(self, custom_id: str, *, label: str | None = None, row: int | None = None) -> None:
        super().__init__(
            discord.ui.Button(
                label=label or self.LABEL,
                custom_id=custom_id,
                style=self.STYLE,
                emoji=self.EMOJI,
                row=row,
            )
        )


class PaperButton(BotButton, template=r"(?!)"):
    """A button about one paper, custom_id `pb:{HEAD}:{paper}`: the paper's id, or its key when
    the id is too long (`bot.app.refs`). Subclasses set HEAD and a template reading `ref`."""

    HEAD: ClassVar[str]

    def __init__(self, paper_id: str) -> None:
        head = ("pb", self.HEAD)
        ref = refs.ref_for(paper_id, limits.custom_id_room(*head))
        super().__init__(limits.custom_id(*head, ref))
        self.paper_ref = paper_id

    @classmethod
    def restore(
        cls, interaction: discord.Interaction[PaperBot], item: discord.ui.Item[Any], match: Match
    ) -> Self:
        button = cls.kept(item)
        button.paper_ref = match["ref"]
        return button


class PaperMenu(BotItem[discord.ui.Select[discord.ui.View]], template=r"(?!)"):
    """A persistent menu of papers (open one, save one, pick one): built from its options,
    rebuilt from the click as sent; `chosen` is the value picked (a paper id or key)."""

    def __init__(
        self, custom_id: str, options: list[discord.SelectOption], placeholder: str
    ) -> None:
        select: discord.ui.Select[discord.ui.View] = discord.ui.Select(
            custom_id=custom_id,
            placeholder=placeholder,
            row=0,
            options=options or [discord.SelectOption(label="(no papers)", value="-")],
        )
        super().__init__(select)

    @classmethod
    def restore(
        cls, interaction: discord.Interaction[PaperBot], item: discord.ui.Item[Any], match: Match
    ) -> Self:
        return cls.kept(item)

    @staticmethod
    def chosen(interaction: discord.Interaction[PaperBot]) -> str:
        values = respond.data_of(interaction).get("values") or []
        return str(values[0]) if values else ""


def pager(
    make: Callable[[int, str], BotItem[Button]], page: int, pages: int, *, row: int = 0
) -> list[BotItem[Button]]:
    """◀ ▶ for page `page` of `pages`, built by `make(target page, label)`; disabled at the ends."""
    buttons = []
    for target, label in ((page - 1, "◀"), (page + 1, "▶")):
        button = make(max(0, min(target, pages + 1)), label)
        button.item.disabled = not 1 <= target <= pages
        button.item.row = row
        buttons.append(button)
    return buttons

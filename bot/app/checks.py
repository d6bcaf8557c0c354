"""Checks and autocompletes shared by several cogs (cogs never import each other)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from bot.app import limits, refs
from bot.app.respond import NotOwner
from bot.app.results.pages import VENUE_MAX
from bot.library.store import Library
from bot.search.results import SearchError

Choice = app_commands.Choice[str]
ALL_VENUES = "all"  # `venue: all` searches every venue despite a server default

if TYPE_CHECKING:
    from bot.app.client import PaperBot
    from bot.storage.store import Storage

    # (label, value) pairs a database read offers to an autocomplete (`stored_autocomplete`).
    Options = Callable[
        [discord.Interaction[PaperBot], Storage], Awaitable[Iterable[tuple[str, str]]]
    ]
    Autocomplete = Callable[[discord.Interaction[PaperBot], str], Coroutine[Any, Any, list[Choice]]]


async def owner_only(interaction: discord.Interaction[PaperBot]) -> bool:
    """The owner is DISCORD_OWNER_IDS, or else the application's owner (or team) on Discord."""
    if await interaction.client.is_owner(interaction.user):
        return True
    raise NotOwner()


def manager_group(name: str, description: str) -> app_commands.Group:
    """A command group for server managers, never in DMs: Discord hides it from members
    without Manage Server (`default_permissions`); `manager_only` checks it again."""
    return app_commands.Group(
        name=name,
        description=description,
        guild_only=True,
        default_permissions=discord.Permissions(manage_guild=True),
    )


async def manager_only(interaction: discord.Interaction[PaperBot]) -> bool:
    """Manage Server, checked by us too: a server can show the command to anyone it likes."""
    if interaction.guild is None:
        raise app_commands.NoPrivateMessage()
    if interaction.permissions.manage_guild:
        return True
    raise app_commands.MissingPermissions(["Manage Server"])


async def venue_autocomplete(
    interaction: discord.Interaction[PaperBot], current: str
) -> list[app_commands.Choice[str]]:
    """Venues of the corpus containing what was typed (memory only, no I/O); every command
    with a `venue` option registers it (`@app_commands.autocomplete(venue=...)`).

    Each value is one `/search` and `/random` accept and that names that venue alone: the
    name itself, or its key (`bot.app.refs`) when the name is longer than a value may be.
    """
    want = current.casefold().replace(" ", "")
    venues = interaction.client.engine.venues()
    names = [v for v in venues if want in v.casefold().replace(" ", "")]
    return [
        app_commands.Choice(
            name=limits.truncate(v, limits.CHOICE_NAME), value=refs.ref_for(v, VENUE_MAX)
        )
        for v in names[: limits.CHOICES]
    ]


def matching_choices(current: str, options: Iterable[tuple[str, str]]) -> list[Choice]:
    """The first 25 (label, value) options whose label or value contains what was typed
    (case-folded); values longer than Discord accepts are left out, labels truncated."""
    want = current.casefold().strip()
    choices: list[Choice] = []
    for label, value in options:
        if len(value) > limits.CHOICE_VALUE:
            continue
        if want in label.casefold() or want in value.casefold():
            name = limits.truncate(label, limits.CHOICE_NAME) or value
            choices.append(app_commands.Choice(name=name, value=value))
            if len(choices) == limits.CHOICES:
                break
    return choices


def stored_autocomplete(options: Options) -> Autocomplete:
    """An autocomplete over what the database holds for the user typing (their saved papers,
    their follows): `options` reads the (label, value) pairs, `matching_choices` filters them.
    A bot running without a database offers nothing instead of failing at every keystroke.
    Register it with `@app_commands.autocomplete(option=...)`."""

    async def complete(interaction: discord.Interaction[PaperBot], current: str) -> list[Choice]:
        storage = interaction.client.storage
        if storage is None:
            return []
        return matching_choices(current, await options(interaction, storage))

    return complete


async def effective_venue(
    bot: PaperBot, interaction: discord.Interaction[PaperBot], venue: str | None
) -> str | None:
    """The venue a command looks in: the one given (`all`: every venue), else the server's
    default from `/server venue`, unless a reload dropped that venue from the corpus."""
    if venue is not None:
        venue = venue.strip()
        return None if venue.casefold() == ALL_VENUES else venue
    if interaction.guild_id is None or bot.storage is None:
        return None
    default = await Library(bot.storage).default_venue(interaction.guild_id)
    if not default:
        return None
    try:
        bot.engine.resolve_venues(default)
    except SearchError:
        return None
    return default

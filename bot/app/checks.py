"""Checks and autocompletes shared by several cogs (cogs never import each other), and the one
input check of text the bot stores or looks up in its database (`stored_text`), which the
console calls too."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from bot.app import installs, limits, refs
from bot.app.respond import NotOwner
from bot.app.results.pages import VENUE_MAX
from bot.library.store import Library
from bot.search.results import SearchError
from bot.storage.core import DatabaseBusy
from bot.storage.validate import text_problem

Choice = app_commands.Choice[str]
ALL_VENUES = "all"  # `venue: all` searches every venue despite a server default
# Control characters a field may hold (`stored_text`). Search words (a follow query, a daily
# topic, a console /daily line) may hold tab, LF and CR: they only separate words, and the
# command folds them into spaces. Names and ids (a venue, a paper, a follow id, a file name)
# hold none.
WORDS = "\t\n\r"
NAME = ""

if TYPE_CHECKING:
    from bot.app.client import PaperBot
    from bot.storage.store import Storage

    # (label, value) pairs a database read offers to an autocomplete (`stored_autocomplete`).
    Options = Callable[
        [discord.Interaction[PaperBot], Storage], Awaitable[Iterable[tuple[str, str]]]
    ]
    Autocomplete = Callable[[discord.Interaction[PaperBot], str], Coroutine[Any, Any, list[Choice]]]

log = logging.getLogger(__name__)
# The last default venue read per server, so a search still honours it while the database is
# busy (bounded: servers beyond this many fall back to every venue until read again).
DEFAULT_VENUES_KEPT = 10_000
_DEFAULT_VENUES: dict[int, str | None] = {}


class BadText(SearchError):
    """User text with a character the bot does not store: refused before any database call,
    with the same words on Discord and in the console (a SearchError: both show the message)."""


def stored_text(value: str | None, what: str, allow: str = NAME) -> None:
    """Refuse `value` (named `what`, as in "the query") if it holds a control character not in
    `allow` (`WORDS` or `NAME`), or a NUL or lone surrogate whatever `allow` says.

    Every command that stores user text, or looks it up in the database, calls this first. It
    makes the two backends answer alike: SQLite kept a NUL byte that PostgreSQL refuses, so one
    `/follow add` was stored on one and "Something went wrong" on the other, and the stored row
    later broke `db copy`. The rule is `bot.storage.validate.text_problem`, which `db copy` and
    `db restore` apply to the rows they move.
    """
    problem = None if value is None else text_problem(value, allow)
    if problem is not None:
        raise BadText(
            f"{what[:1].upper()}{what[1:]} holds {problem}, which the bot does not accept; "
            "nothing was changed."
        )


async def owner_only(interaction: discord.Interaction[PaperBot]) -> bool:
    """The owner is DISCORD_OWNER_IDS, or else the application's owner (or team) on Discord."""
    if await interaction.client.is_owner(interaction.user):
        return True
    raise NotOwner()


def manager_group(name: str, description: str) -> app_commands.Group:
    """A command group for server managers, never in DMs: Discord hides it from members
    without Manage Server (`default_permissions`); `manager_only` checks it again."""
    return installs.server_only(
        app_commands.Group(
            name=name,
            description=description,
            guild_only=True,
            default_permissions=discord.Permissions(manage_guild=True),
        )
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
    try:
        default = await Library(bot.storage).default_venue(interaction.guild_id)
    except DatabaseBusy:
        # /search and /random need no database: a busy one leaves the default as last read.
        default = _DEFAULT_VENUES.get(interaction.guild_id)
        log.warning(
            "default venue of server %s: database busy, using the last one read",
            interaction.guild_id,
        )
    else:
        _DEFAULT_VENUES[interaction.guild_id] = default
        while len(_DEFAULT_VENUES) > DEFAULT_VENUES_KEPT:  # oldest first: a dict keeps order
            del _DEFAULT_VENUES[next(iter(_DEFAULT_VENUES))]
    if not default:
        return None
    try:
        bot.engine.resolve_venues(default)
    except SearchError:
        return None
    return default

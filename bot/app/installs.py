"""Where each command is offered (guild install, user install; servers, DMs, group DMs), and
what the bot may do where it is not a member.

Discord's model (API `integration_types` and `contexts`; discord.py 2.4+ `allowed_installs`,
`allowed_contexts`): a member can add the app to their own account (a user install) and use its
commands in any server, DM or group DM, including places the bot never joined. There the bot
has no channel access at all: it may answer the interaction and send follow-ups (at most 5 per
interaction outside a server it is in), nothing else. So:

* `anywhere` marks the reader's commands (`/search`, `/paper`, `/similar`, `/random`,
  `/library`, `/follow`, Find papers): guild and user installs, every context.
* `server_only` marks what only makes sense for a server (`/daily`, `/server`, `/top`,
  `/today`): guild install, servers only (`guild_only` keeps the old `dm_permission: false`).
* Every other command takes the tree's default (`TREE_INSTALLS`, `TREE_CONTEXTS`): guild
  install, servers and the DM with the bot, as before user installs existed.
* `outside(interaction)`: the bot is not a member where the interaction happened. Answers
  there are ephemeral (`respond.send` forces it) and carry no Share button (its post would be
  public in a place the bot cannot read or moderate).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

import discord
from discord import app_commands

if TYPE_CHECKING:
    from bot.app.client import PaperBot

T = TypeVar("T")

TREE_INSTALLS = app_commands.AppInstallationType(guild=True, user=False)
TREE_CONTEXTS = app_commands.AppCommandContext(guild=True, dm_channel=True, private_channel=False)
# Discord's cap on follow-ups of one interaction by a user-installed app outside a server it is in.
FOLLOWUPS_OUTSIDE = 5
# Components that post publicly through the channel's webhook (the Share button).
PUBLIC_POSTING = frozenset({"pb:share"})


def anywhere(command: T) -> T:
    """Offer `command` to guild and user installs, in servers, the bot's DM and group DMs."""
    command = app_commands.allowed_installs(guilds=True, users=True)(command)
    return app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)(command)


def server_only(command: T) -> T:
    """Offer `command` to guild installs in servers only (never a DM, never a user install).

    `allowed_contexts` first, then `guild_only`: the former clears discord.py's guild-only
    flag, the latter sets it again (`dm_permission: false`) on the same contexts object."""
    command = app_commands.allowed_installs(guilds=True, users=False)(command)
    command = app_commands.allowed_contexts(guilds=True, dms=False, private_channels=False)(command)
    return app_commands.guild_only()(command)


def outside(interaction: discord.Interaction[PaperBot]) -> bool:
    """The bot is not a member where `interaction` happened: a group DM or a DM between
    users (context 2), or a server that did not install the app (a user install there: no
    guild owner in `authorizing_integration_owners`). The DM with the bot is not outside."""
    if interaction.context.private_channel:
        return True
    if interaction.guild_id is not None:
        return not interaction.is_guild_integration()
    return False


def reachable(interaction: discord.Interaction[PaperBot], view: Any) -> Any:
    """`view` without its public-posting buttons when the bot is `outside` (else unchanged)."""
    if view is None or not outside(interaction):
        return view
    _strip(view)
    return view


def _strip(holder: Any) -> None:
    """Remove the public-posting buttons from `holder` and the rows, sections and containers
    inside it (a Components v2 page keeps Share in an action row); a row left empty goes too,
    as Discord refuses an empty one."""
    for item in list(holder.children):
        if getattr(item, "custom_id", None) in PUBLIC_POSTING:
            holder.remove_item(item)
        elif isinstance(item, discord.ui.ActionRow | discord.ui.Container):
            _strip(item)
            if not item.children:
                holder.remove_item(item)

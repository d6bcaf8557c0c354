"""Answering interactions on time, and turning failures into a short message for the user.

Discord gives an interaction 3 seconds for its first response. `soon` awaits the work (and
`compute` runs CPU work in a thread through it), deferring only when it is still running after
`defer_after` seconds, so fast answers cost one request and slow ones never miss the deadline.
`send` then picks the right endpoint (initial response, follow-up, or edit) for whatever state
the interaction is in.

A database call is bounded by storage (`DatabaseBusy`: "The database is busy; try again in a
moment.") but may still outlast Discord's 3 s, and it often comes before any `soon` (the
server's default venue read by /search, a library page). So every interaction's task is
watched (`watch_database`, from the command tree's check and `guarded`): a database call still
running `defer_after` s after the interaction arrived has it acknowledged first
(`acknowledge_early`), whichever command or component made the call.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import discord
from discord import app_commands

from bot.app import installs, render
from bot.app.workers import off_loop
from bot.search.results import SearchError
from bot.storage.core import WHEN_SLOW, DatabaseBusy, WhenSlow

if TYPE_CHECKING:
    from bot.app.client import PaperBot

log = logging.getLogger(__name__)
T = TypeVar("T")
DEFER_AFTER = 2.0
GENERIC_ERROR = "Something went wrong on my side; it has been logged. Please try again."
RESTARTING = "The bot is restarting: try again in a minute."


class Restarting(Exception):
    """The bot is shutting down and this work cannot finish in time; the user is told so."""

    def __init__(self) -> None:
        super().__init__(RESTARTING)


def data_of(interaction: discord.Interaction[PaperBot]) -> Mapping[str, Any]:
    """The interaction's payload (`custom_id`, `values`, ...), empty when Discord sent none."""
    return interaction.data or {}


class NotOwner(app_commands.CheckFailure):
    """Raised by owner-only commands; its message is shown to the user."""

    def __init__(self) -> None:
        super().__init__("Only the bot's owner can do that.")


async def soon(
    interaction: discord.Interaction[PaperBot],
    work: Awaitable[T],
    *,
    ephemeral: bool = True,
    edit: bool = False,
) -> T:
    """Await `work`, deferring the interaction only if it still runs after `defer_after` s.

    A deferral made for an edit (a component on a message) is an update; otherwise it shows
    "thinking…", ephemeral or not as the answer will be. When the bot shuts down before the
    work is done (the client's `restarting` event), this raises `Restarting`, which the error
    handlers turn into an answer, so no user is left with "The application did not respond"
    and the exit never waits for slow work.
    """
    task = asyncio.ensure_future(work)
    done, _pending = await asyncio.wait({task}, timeout=interaction.client.defer_after)
    if not done:
        await acknowledge(interaction, ephemeral=ephemeral, edit=edit)
    return await unless_restarting(interaction.client, task)


async def acknowledge(
    interaction: discord.Interaction[PaperBot], *, ephemeral: bool = True, edit: bool = False
) -> bool:
    """Defer `interaction` unless it is answered already; True if this call deferred it.

    One at a time per interaction: `soon`'s work and a slow database call inside it may both
    want to defer at once, and Discord refuses the second (40060)."""
    lock = interaction.extras.setdefault("acknowledging", asyncio.Lock())
    ephemeral = ephemeral or installs.outside(interaction)
    async with lock:
        if interaction.response.is_done():
            return False
        if edit:
            await interaction.response.defer()
        else:
            await interaction.response.defer(ephemeral=ephemeral, thinking=True)
        return True


def watch_database(interaction: discord.Interaction[PaperBot]) -> None:
    """For the rest of the task answering `interaction`: a database call still running
    `defer_after` s from now has the interaction acknowledged first (`acknowledge_early`).
    Half the storage timeout if that is sooner: a call ends as "busy" no sooner than the
    timeout, so the acknowledgement always comes first."""
    client = interaction.client
    wait = min(client.defer_after, client.settings.storage.timeout_seconds / 2)
    at = asyncio.get_running_loop().time() + wait
    WHEN_SLOW.set(WhenSlow(at, lambda: acknowledge_early(interaction)))


async def acknowledge_early(interaction: discord.Interaction[PaperBot]) -> None:
    """Acknowledge before the answer is known, the way that suits every answer: empty choices
    for an autocomplete; a deferred update for a component (the answer may edit its message or
    come as a new one); "thinking…" only the user sees for a command, which `send` swaps for a
    public message if the answer is public. A failure here is logged: the work goes on.

    An autocomplete answered so has nothing left to do (one answer per keystroke): its task
    ends here, cancelled, and so does the database call, which would otherwise end in a busy
    error that discord.py logs as a traceback."""
    try:
        if interaction.type is discord.InteractionType.autocomplete:
            if not interaction.response.is_done():
                await interaction.response.autocomplete([])
            raise asyncio.CancelledError
        edit = interaction.type is discord.InteractionType.component or (
            interaction.type is discord.InteractionType.modal_submit
            and interaction.message is not None
        )
        if await acknowledge(interaction, ephemeral=True, edit=edit) and not edit:
            interaction.extras["early_placeholder"] = True
    except discord.HTTPException as exc:
        log.warning("could not acknowledge a slow interaction: %s", exc)


async def compute(
    interaction: discord.Interaction[PaperBot],
    fn: Callable[..., T],
    *args: Any,
    ephemeral: bool = True,
    edit: bool = False,
) -> T:
    """`fn(*args)` (CPU work such as a search) off the event loop, through `soon`."""
    return await soon(interaction, off_loop(fn, *args), ephemeral=ephemeral, edit=edit)


async def unless_restarting(client: object, task: asyncio.Future[T]) -> T:
    """The result of `task`, or `Restarting` if the client starts shutting down first."""
    stop: asyncio.Event | None = getattr(client, "restarting", None)
    if stop is None or task.done():
        return await task
    waiter = asyncio.ensure_future(stop.wait())
    both: set[asyncio.Future[Any]] = {task, waiter}
    try:
        await asyncio.wait(both, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if task.done():
        return task.result()
    task.cancel()  # work in a thread runs on, unheard (a daemon, it dies with the process)
    raise Restarting()


async def send(
    interaction: discord.Interaction[PaperBot],
    *,
    embed: discord.Embed | None = None,
    embeds: Sequence[discord.Embed] | None = None,
    view: discord.ui.View | discord.ui.LayoutView | None = None,
    ephemeral: bool = True,
    edit: bool = False,
    content: str | None = None,
    allowed_mentions: discord.AllowedMentions | None = None,
) -> None:
    """Reply (or edit the message a component sits on) whether or not we deferred.
    `embeds` is several embeds on one message, instead of `embed`. Where the bot is not a
    member (`installs.outside`) the answer is ephemeral and has no Share button."""
    ephemeral = ephemeral or installs.outside(interaction)
    view = installs.reachable(interaction, view)
    kwargs: dict[str, Any] = (
        {"embeds": list(embeds), "content": content}
        if embeds is not None
        else {"embed": embed, "content": content}
    )
    if view is not None:
        kwargs["view"] = view
    if allowed_mentions is not None:
        kwargs["allowed_mentions"] = allowed_mentions
    if edit:
        if interaction.response.is_done():
            await interaction.edit_original_response(**kwargs)
        else:
            await interaction.response.edit_message(**kwargs)
        return
    if "embed" in kwargs and embed is None:
        kwargs.pop("embed")
    thinking = interaction.response.type is discord.InteractionResponseType.deferred_channel_message
    fresh = thinking and not interaction.extras.get("replaced_thinking")
    if fresh and not ephemeral and interaction.extras.get("early_placeholder"):
        # "thinking…" was shown only to the user before the answer was known (a slow database
        # call, `acknowledge_early`); a public answer takes its place as a new message.
        interaction.extras["replaced_thinking"] = True
        await interaction.delete_original_response()
        await interaction.followup.send(ephemeral=False, **kwargs)
    elif fresh:
        # The first answer after a "thinking…" defer replaces that placeholder (its
        # visibility was fixed by the defer).
        interaction.extras["replaced_thinking"] = True
        kwargs.setdefault("content", None)
        await interaction.edit_original_response(**kwargs)
    elif interaction.response.is_done():
        await interaction.followup.send(ephemeral=ephemeral, **kwargs)
    else:
        await interaction.response.send_message(ephemeral=ephemeral, **kwargs)


UNKNOWN_INTERACTION = 10062


async def confirm(interaction: discord.Interaction[PaperBot], text: str) -> None:
    """A short confirmation only the user sees (`render.note_embed`)."""
    await send(interaction, embed=render.note_embed(text), ephemeral=True)


def describe(error: BaseException) -> tuple[str, bool]:
    """(message for the user, whether this is our bug whose traceback must be logged)."""
    if isinstance(error, app_commands.CommandInvokeError):
        return describe(error.original)
    if isinstance(error, SearchError | Restarting | DatabaseBusy):
        return str(error), False
    if isinstance(error, app_commands.CommandOnCooldown):
        wait = max(1, math.ceil(error.retry_after))
        return f"You're searching quickly: try again in {wait} s.", False
    if isinstance(error, NotOwner):
        return str(error), False
    if isinstance(error, app_commands.MissingPermissions | app_commands.BotMissingPermissions):
        return f"Missing permission: {', '.join(error.missing_permissions)}.", False
    if isinstance(error, app_commands.NoPrivateMessage):
        return "That command only works in a server.", False
    if isinstance(error, app_commands.CheckFailure):
        return "You can't use that command here.", False
    if isinstance(error, app_commands.CommandNotFound):
        return (
            "That command no longer exists. Discord refreshes the command list within a "
            "minute; reopening Discord helps."
        ), False
    if isinstance(error, app_commands.TransformerError):
        if error.type is discord.AppCommandOptionType.channel:
            return wrong_channel(error), False
        return "I couldn't use that value for that option.", False
    return GENERIC_ERROR, True


# How Discord's client names channel types (discord.ChannelType member names).
CHANNEL_KINDS = {
    "text": "text",
    "news": "announcement",
    "voice": "voice",
    "stage_voice": "stage",
    "forum": "forum",
    "media": "media",
    "category": "category",
    "news_thread": "thread",
    "public_thread": "thread",
    "private_thread": "thread",
    "directory": "directory",
}


def wrong_channel(error: app_commands.TransformerError) -> str:
    """Which kind of channel was given and which kinds the option takes, never a Python repr
    (a voice or forum channel can reach a text-channel option through the API)."""
    given = getattr(error.value, "type", None)
    kind = CHANNEL_KINDS.get(getattr(given, "name", ""), "")
    allowed = getattr(error.transformer, "channel_types", None) or []
    names = list(dict.fromkeys(CHANNEL_KINDS.get(t.name, t.name) for t in allowed))
    takes = " or ".join(names) if names else "another kind of"
    what = f"a {kind} channel" if kind else "that channel"
    return f"I can't use {what} for this option: it takes {takes} channels."


async def report(interaction: discord.Interaction[PaperBot], error: BaseException) -> None:
    """Log the failure (with its traceback when it is our bug) and tell the user briefly."""
    message, ours = describe(error)
    name = (
        interaction.command.qualified_name
        if interaction.command
        else data_of(interaction).get("custom_id", "?")
    )
    original = getattr(error, "original", error)
    if isinstance(original, discord.NotFound) and original.code == UNKNOWN_INTERACTION:
        # The user's interaction expired (Discord's 3 s / 15 min windows, or a lost race):
        # nobody can be answered any more, and it is not a bug in the bot.
        log.warning("interaction %s expired before it could be answered", name)
        return
    if ours:
        log.error("interaction %s failed", name, exc_info=error)
    else:
        log.info("interaction %s refused: %s", name, message)
    if interaction.type is discord.InteractionType.autocomplete:
        if not interaction.response.is_done():
            await interaction.response.autocomplete([])
        return
    try:
        await send(interaction, embed=render.error_embed(message), ephemeral=True)
    except discord.HTTPException as exc:
        log.warning("could not tell the user about the failure of %s: %s", name, exc)


async def guarded(interaction: discord.Interaction[PaperBot], coro: Awaitable[object]) -> None:
    """Await a component callback; on failure, answer the user instead of going silent.

    discord.py only logs exceptions raised in DynamicItem callbacks, which would leave the
    user with "This interaction failed"; every component callback goes through here.
    """
    watch_database(interaction)
    try:
        await coro
    except Exception as exc:  # noqa: BLE001 - every failure must still answer the user
        await report(interaction, exc)

"""The console's own "server": the paper of the day without Discord (issue 14 §3).

The console (`bot.console.daily`) keeps its schedule, picks and pool in the bot's database like
any server, under `CONSOLE_SERVER`, and posts to `CONSOLE_CHANNEL` (the terminal). Discord ids
are snowflakes: positive numbers whose high bits are milliseconds since 2015, so no guild or
channel is ever 0. A Discord bot on the same database therefore never meets the console's rows
as one of its servers, and `DailyScheduler(console=...)` keeps each side to its own: the bot
never tries to post the console's schedule to Discord, the console never posts a server's.
"""

from __future__ import annotations

CONSOLE_SERVER = 0
CONSOLE_CHANNEL = 0
# The console's one reader (`bot.console.library.LOCAL_USER`): their saves carry no server, so
# the console server's For you pool (`bot.daily.ranked`) reads their library.
CONSOLE_READER = 0


def is_console(guild_id: int) -> bool:
    """Whether a stored server id is the console's rather than a Discord guild's."""
    return guild_id == CONSOLE_SERVER

"""The paper of the day, discord-free. Other features use the time rules below (a follow's
daily or weekly delivery keeps the same time zones and DST rule as the daily post)."""

from bot.daily.rules import DailyError, due_instant, parse_time, parse_timezone

__all__ = ["DailyError", "due_instant", "parse_time", "parse_timezone"]

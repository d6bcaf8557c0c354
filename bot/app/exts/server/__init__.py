"""The server's voice: `/top`, reactions on the daily post, `/server venue`."""

from bot.app.exts.server.cog import setup

__all__ = ["setup"]

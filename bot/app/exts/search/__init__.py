"""`/search`: ranked papers a page at a time."""

from bot.app.exts.search.cog import setup

__all__ = ["setup"]

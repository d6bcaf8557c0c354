"""The library on Discord: `/library`, the Save button, library pages and exports."""

from bot.app.exts.library.cog import setup
from bot.app.exts.library.views import ITEMS

__all__ = ["ITEMS", "setup"]

"""Follows on Discord: `/follow add|list|remove`, notices with their pages, and delivery."""

from bot.app.exts.follows.cog import setup
from bot.app.exts.follows.views import ITEMS

__all__ = ["ITEMS", "setup"]

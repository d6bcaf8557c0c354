""" "Find papers" (a message context menu) and the optional link replies."""

from bot.app.exts.links.cog import setup
from bot.app.exts.links.embeds import ITEMS

__all__ = ["ITEMS", "setup"]

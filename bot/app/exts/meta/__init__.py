"""`/help` and the owner's `/sync`."""

from bot.app.exts.meta.cog import setup

__all__ = ["setup"]

"""`/paper`, `/similar` and `/random`."""

from bot.app.exts.papers.cog import setup

__all__ = ["setup"]

"""The tree-level error handler: every failed command answers the user and logs why."""

from bot.app.exts.errors.cog import setup

__all__ = ["setup"]

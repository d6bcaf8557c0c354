"""`/admin reload|refresh|status`: the owner's corpus controls."""

from bot.app.exts.admin.cog import setup

__all__ = ["setup"]

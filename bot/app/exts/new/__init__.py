"""`/new`: papers the corpus gained recently, paged like /search."""

from bot.app.exts.new.cog import setup

__all__ = ["setup"]

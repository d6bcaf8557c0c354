"""The paper of the day on Discord: `/daily`, `/today`, the post and its embeds."""

from bot.app.exts.daily.cog import setup

__all__ = ["setup"]

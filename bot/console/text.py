"""Discord embeds printed as terminal text, for the console (`bot.console.repl`).

The console renders with `bot.app.render` like the cogs do and only flattens here, so the terminal
shows the same titles, snippets, footers and links as Discord.
"""

from __future__ import annotations

import re

import discord

_LINK = re.compile(r"\[((?:[^\]\\]|\\.)*)\]\((https?://[^)\s]+)\)")
_ESCAPE = re.compile(r"\\([\\*_~`|>\[\]#<-])")  # what bot.app.markdown.escape adds
_BOLD = re.compile(r"\*\*(.+?)\*\*", re.S)
BOLD_ON, BOLD_OFF = "\033[1m", "\033[0m"


def markdown_text(text: str, *, color: bool = False) -> str:
    """Discord markdown made readable: `[label](url)` becomes `label <url>`, escapes removed;
    **bold** becomes terminal bold when `color`, else stays as ** marks."""
    text = _LINK.sub(lambda m: f"{m.group(1)} <{m.group(2)}>", text)
    if color:
        text = _BOLD.sub(lambda m: BOLD_ON + m.group(1) + BOLD_OFF, text)
    return _ESCAPE.sub(r"\1", text)


def embed_text(embed: discord.Embed, *, color: bool = False) -> str:
    lines: list[str] = []
    if embed.author and embed.author.name:
        lines.append(embed.author.name)
    if embed.title:
        title = BOLD_ON + embed.title + BOLD_OFF if color else embed.title
        lines.append(title + (f"  <{embed.url}>" if embed.url else ""))
    if embed.description:
        lines += ["", markdown_text(embed.description, color=color)]
    for field in embed.fields:
        value = markdown_text(field.value or "", color=color)
        if "\n" in value:
            lines += ["", f"{field.name}:", *("  " + v for v in value.splitlines())]
        else:
            lines += [f"{field.name}: {value}"]
    if embed.footer and embed.footer.text:
        lines += ["", f"-- {embed.footer.text}"]
    return "\n".join(lines).strip("\n") + "\n"

"""Discord embeds printed as terminal text, for the console (`bot.console.repl`).

The console renders with `bot.app.render` like the cogs do and only flattens here, so the terminal
shows the same titles, snippets, footers and links as Discord.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import discord

from bot.daily.servers import CONSOLE_CHANNEL, CONSOLE_SERVER
from bot.search.results import SearchResult

_LINK = re.compile(r"\[((?:[^\]\\]|\\.)*)\]\((https?://[^)\s]+)\)")
_ESCAPE = re.compile(r"\\([\\*_~`|>\[\]#<-])")  # what bot.app.markdown.escape adds
_BOLD = re.compile(r"\*\*(.+?)\*\*", re.S)
# Not after a backslash: escaped markup (bot.app.markdown.escape) reads as written.
_TIMESTAMP = re.compile(r"(?<!\\)<t:(-?\d+)(?::([tTdDfFR]))?>")
_CHANNEL = re.compile(r"(?<!\\)<#(\d+)>")
# A link to a message in the console's own channel has nowhere to go: keep its label only.
_LOCAL_LINK = re.compile(
    r"\[((?:[^\]\\]|\\.)*)\]\(https://discord\.com/channels/" + str(CONSOLE_SERVER) + r"/[^)\s]*\)"
)
UNITS = (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1))
BOLD_ON, BOLD_OFF = "\033[1m", "\033[0m"


def relative(when: datetime, now: datetime) -> str:
    """`in 3 hours`, `5 minutes ago`: what Discord shows for a relative timestamp."""
    seconds = (when - now).total_seconds()
    for name, size in UNITS:
        if abs(seconds) >= size or size == 1:
            count = int(abs(seconds) // size)
            amount = f"{count} {name}{'' if count == 1 else 's'}"
            return f"in {amount}" if seconds >= 0 else f"{amount} ago"
    raise AssertionError("unreachable: the last unit takes every value")


def _timestamp(match: re.Match[str], now: datetime | None) -> str:
    when = datetime.fromtimestamp(int(match.group(1)), UTC)
    if match.group(2) == "R":
        return relative(when, now or datetime.now(UTC))
    return f"{when:%Y-%m-%d %H:%M} UTC"


def _channel(match: re.Match[str]) -> str:
    return "#console" if int(match.group(1)) == CONSOLE_CHANNEL else match.group(0)


def markdown_text(text: str, *, color: bool = False, now: datetime | None = None) -> str:
    """Discord markdown made readable: `[label](url)` becomes `label <url>`, escapes removed;
    **bold** becomes terminal bold when `color`, else stays as ** marks. Timestamps are
    written out (in UTC; relative ones against `now`), the console's channel is `#console`."""
    text = _LOCAL_LINK.sub(lambda m: m.group(1), text)
    text = _LINK.sub(lambda m: f"{m.group(1)} <{m.group(2)}>", text)
    text = _TIMESTAMP.sub(lambda m: _timestamp(m, now), text)
    text = _CHANNEL.sub(_channel, text)
    if color:
        text = _BOLD.sub(lambda m: BOLD_ON + m.group(1) + BOLD_OFF, text)
    return _ESCAPE.sub(r"\1", text)


def embed_text(embed: discord.Embed, *, color: bool = False, now: datetime | None = None) -> str:
    lines: list[str] = []
    if embed.author and embed.author.name:
        lines.append(embed.author.name)
    if embed.title:
        title = BOLD_ON + embed.title + BOLD_OFF if color else embed.title
        lines.append(title + (f"  <{embed.url}>" if embed.url else ""))
    if embed.description:
        lines += ["", markdown_text(embed.description, color=color, now=now)]
    for field in embed.fields:
        value = markdown_text(field.value or "", color=color, now=now)
        if "\n" in value:
            lines += ["", f"{field.name}:", *("  " + v for v in value.splitlines())]
        else:
            lines += [f"{field.name}: {value}"]
    if embed.footer and embed.footer.text:
        lines += ["", f"-- {embed.footer.text}"]
    return "\n".join(lines).strip("\n") + "\n"


# How `sort:` orders read in the console (`SearchResult.sort`).
SORT_TEXT = {
    "new": "newest first",
    "old": "oldest first",
    "venue": "by venue (alphabetical), the best match first in each",
}


def result_notes(result: SearchResult) -> str:
    """The lines a search page shows above its hits (`SearchResult.notices`: a quoted phrase no
    paper has, weak matches) and its order when `sort:` asked for one; "" when there are none."""
    lines = list(result.notices)
    asked = result.terms or result.sort != "new"  # a list without words is newest first anyway
    if result.sort in SORT_TEXT and asked:
        lines.append(f"Sorted {SORT_TEXT[result.sort]}.")
    return "".join(f"{line}\n" for line in lines)


def paper_actions(paper_id: str | None = None) -> str:
    """The buttons under a paper (Save, Cite, More like this) as the console's commands: for
    the paper on screen, or for `paper_id` (a post printed while another paper is open)."""
    if paper_id is None:
        return "/save keeps it · /cite gives its BibTeX · more: papers like it\n"
    return f"/save {paper_id} keeps it · /cite {paper_id} its BibTeX · /similar {paper_id}\n"

"""Paper text made inert for Discord's markdown, and the few marks the bot adds itself.

A corpus is written by strangers: an abstract may hold `[click here](https://evil.example)`,
`# HEADLINE`, a code fence, `<t:0:R>`, `<@&role>` or `@everyone`. Shown as written, Discord
would render a masked phishing link, a header, a timestamp or a mention pill. So every piece
of paper text (titles, abstracts, snippets, authors, keywords, venues) passes through `escape`
before it reaches an embed; the bot's own markup (the snippet's **bold**, the hit's linked
title) is added around escaped text. Bare URLs stay as written: Discord shows their real
target. Plain-text places (footers, author names, select options, thread names, choices)
do not render markdown and take text unescaped.
"""

from __future__ import annotations

import re

from bot.papers.links import clean_url

_MARKDOWN = re.compile(
    r"(?P<url>https?://[^\s<>]+)(?P<after><)?"  # an autolink: left as written
    r"|(?P<char>[\\*_~|`\[\]<])"  # emphasis, spoilers, code, masked links, <@mentions> <t:…>
    r"|^(?P<indent>[ \t]*)(?P<line>#|-|>)"  # headers, subtext (-#), lists, quotes
    r"|@(?=everyone|here)",
    re.MULTILINE,
)
ZERO_WIDTH = "\u200b"


def _escaped(match: re.Match[str]) -> str:
    if match.group("url"):
        # Discord's autolink would swallow the backslash escaping a `<` right after it, so
        # a space ends the link first: `https://x.org/<@1>` must not become a mention.
        return match.group("url") + (" \\<" if match.group("after") else "")
    if match.group("char"):
        return "\\" + match.group("char")
    if match.group("line"):
        return match.group("indent") + "\\" + match.group("line")
    return "@" + ZERO_WIDTH  # @everyone / @here: never a mention, even where one would ping


def escape(text: str) -> str:
    """`text` shown literally by Discord: no markdown, mention, timestamp or masked link."""
    return _MARKDOWN.sub(_escaped, text)


def escape_snippet(snippet: str) -> str:
    """A snippet escaped except its `**bold**` runs (the matched words the search marked)."""
    return "**".join(escape(part) for part in snippet.split("**"))


def masked_link(label: str, url: str | None) -> str:
    """`[label](url)` with the label escaped and the URL cleaned; the bare label without one."""
    target = clean_url(url)
    return f"[{escape(label)}]({target})" if target else escape(label)

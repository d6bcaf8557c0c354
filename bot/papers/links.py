"""URLs from paper records and abstracts, made safe to hand to any client, and what they point at.

Abstracts are written for LaTeX and for people, not for link parsers: `\\url{https://x.org}`,
`(see https://x.org/a).`, `[https://a.io/](https://b.io/)`, `https://.`, `http://exa mple.com`.
A link Discord cannot parse refuses the whole message (400), so every URL any surface shows
(link buttons, an embed's `url`, the Links field, the seed converter's records) comes out of
`clean_url` here: wrapping and trailing punctuation stripped, host-less or malformed URLs
dropped, spaces and other unsafe characters percent-encoded. `link_kind` is the one code-host
classifier. Nothing here imports `discord`: the seed converter and the renderer share it.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit, urlunsplit

from bot.papers.records import Link, Paper

# The longest URL kept: Discord's limit for a link button, so a kept URL fits every place.
MAX_URL = 512
# A URL as the analyzer drops it from indexed text and the seed from an abstract: anything
# from `http(s)://` or `www.` up to whitespace or a bracket.
URL = re.compile(r"(?:https?://|www\.)[^\s<>()\[\]]+", re.IGNORECASE)

# A URL in running text: `\url{...}` / `\href{...}`, a markdown link target, or a bare one.
# Bare URLs stop at whitespace, quotes, braces, brackets and backslashes; the leftovers of
# prose (`)`, `.`, `}`) are trimmed by `clean_url`.
_URL_IN_TEXT = re.compile(
    r"\\(?:url|href)\{(?P<braced>[^{}\s]+)\}"
    r"|\]\((?P<target>(?:https?://|www\.)[^\s()]+(?:\([^\s()]*\)[^\s()]*)*)\)"
    r"|(?P<bare>(?:https?://|www\.)[^\s<>\"'`{}\[\]\\|^]+)",
    re.IGNORECASE,
)
_TRAILING = ".,;:!?*_'\"`~"
_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$", re.IGNORECASE)
_TLD = re.compile(r"^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$", re.IGNORECASE)
_IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")
# Characters left as they are in each part; everything else (spaces, quotes, brackets, parens,
# non-ASCII) is percent-encoded. `%` stays so an already encoded URL is not encoded twice.
_SAFE_PATH = "/:@!$&*+,;=%~-._"
_SAFE_QUERY = _SAFE_PATH + "?"

CODE_HOSTS = (
    "github.com",
    "gitlab.com",
    "bitbucket.org",
    "codeberg.org",
    "huggingface.co",
    "sr.ht",
    "sourceforge.net",
    "anonymous.4open.science",
)


def _trim(url: str) -> str:
    """Strip what prose and markup leave at the end: punctuation and unbalanced closers."""
    while url:
        last = url[-1]
        unbalanced = last in _CLOSERS and url.count(last) > url.count(_CLOSERS[last])
        if last not in _TRAILING and not unbalanced:
            return url
        url = url[:-1]
    return url


def _host(netloc: str) -> str | None:
    """The host of `netloc` in ASCII (IDNA), or None when it is not a usable host name."""
    if "@" in netloc:  # credentials in a paper link are a disguise, never needed
        return None
    host, _, port = netloc.partition(":")
    if port and not (port.isdigit() and 0 < int(port) < 65536):
        return None
    host = host.rstrip(".")
    if _IPV4.match(host):
        return netloc if all(int(p) < 256 for p in host.split(".")) else None
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        return None
    labels = ascii_host.split(".")
    if len(labels) < 2 or not all(_LABEL.match(label) for label in labels):
        return None
    if not _TLD.match(labels[-1]):
        return None
    return ascii_host + (f":{port}" if port else "")


def clean_url(raw: str | None) -> str | None:
    """`raw` as a well-formed http(s) URL, or None when no sensible link can be made of it.

    `www.x.org` gains `https://`; `<https://x.org>`, `\\url{...}` leftovers and sentence
    punctuation are stripped; spaces, quotes and brackets are percent-encoded. The result has
    a scheme, a real host name (at least one dot, a letter TLD) and at most `MAX_URL` chars.
    """
    if not raw:
        return None
    url = "".join(ch for ch in raw.strip() if ch >= " " and ch != "\x7f")
    url = url.lstrip("<([{\"'")
    if url.lower().startswith("\\url{"):
        url = url[5:]
    url = _trim(url.strip())
    if url.lower().startswith("www."):
        url = "https://" + url
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https"):
        return None
    host = _host(parts.netloc)
    if host is None:
        return None
    cleaned = urlunsplit(
        (
            parts.scheme.lower(),
            host,
            quote(parts.path, safe=_SAFE_PATH),
            quote(parts.query, safe=_SAFE_QUERY),
            quote(parts.fragment, safe=_SAFE_QUERY),
        )
    )
    return cleaned if len(cleaned) <= MAX_URL else None


def link_kind(url: str) -> str:
    """ "code" for a repository host (GitHub, GitLab, Bitbucket, Codeberg, Hugging Face, ...),
    else "project". `*.github.io` is a project page, not code."""
    host = (urlsplit(url).hostname or "").lower()
    if host.startswith("gitlab.") or any(host == h or host.endswith("." + h) for h in CODE_HOSTS):
        return "code"
    return "project"


def _key(url: str) -> str:
    """What makes two spellings of one link the same (case, a trailing slash, `.git`)."""
    return url.lower().removesuffix("/").removesuffix(".git").removesuffix("/")


def urls_in(text: str) -> list[str]:
    """The well-formed URLs written in `text`, each once, in order of appearance."""
    found: list[str] = []
    seen: set[str] = set()
    for match in _URL_IN_TEXT.finditer(text):
        url = clean_url(match.group("braced") or match.group("target") or match.group("bare"))
        if url is None or _key(url) in seen:
            continue
        seen.add(_key(url))
        found.append(url)
    return found


def abstract_links(abstract: str) -> list[Link]:
    """Code and project links written in an abstract, classified by `link_kind`."""
    return [Link(link_kind(url), url) for url in urls_in(abstract)]


def paper_links(paper: Paper) -> list[Link]:
    """Every link worth showing for `paper`: its own (cleaned; a malformed one is left out),
    then those its abstract mentions, each URL once."""
    out: list[Link] = []
    seen: set[str] = set()
    for link in (*paper.links, *abstract_links(paper.abstract)):
        url = clean_url(link.url)
        if url is None or _key(url) in seen:
            continue
        seen.add(_key(url))
        out.append(Link(link.kind, url))
    return out

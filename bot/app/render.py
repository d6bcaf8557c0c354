"""Papers and search results as Discord embeds, shared by the cogs and the console.

The console prints these same embeds as text (`bot.console.text`), so what a newcomer sees in
the terminal is what Discord shows. Every embed leaves through `finish`, which applies the
limits in `bot.app.limits`; nothing else in the bot cuts text for Discord.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import discord

from bot.app import limits
from bot.app.markdown import escape, masked_link
from bot.papers import versions
from bot.papers.latex import display_title, latex_to_unicode
from bot.papers.links import clean_url, paper_links
from bot.papers.records import Paper

COLOR = discord.Colour(0x3B82F6)
ERROR_COLOR = discord.Colour(0xEF4444)
AUTHORS_IN_HIT = 3
# LaTeX source converted per shown character: a field shows at most `limit` characters, so
# only about twice that much source is ever rendered (a 170 KB abstract costs what a short
# one does; pylatexenc takes ~0.1 ms per distinct span).
LATEX_SOURCE_PER_CHAR = 2
TITLE_SOURCE = 1024  # characters of a title rendered: the longest place shows 256
LINK_LABELS = {
    "page": "Paper page",
    "pdf": "PDF",
    "proceedings": "Proceedings",
    "code": "Code",
    "project": "Project page",
    "arxiv": "arXiv",
    "arxiv pdf": "arXiv PDF",
}
DERIVED_NOTE = "headline derived from the abstract"


def finish(embed: discord.Embed, budget: int = limits.EMBED_TOTAL) -> discord.Embed:
    """The embed cut to Discord's limits (the single exit of every embed we build)."""
    return discord.Embed.from_dict(limits.fit_embed(embed.to_dict(), budget))


def _source(text: str, room: int) -> str:
    """The first ~`room` characters of LaTeX source, cut at a space and never inside `$…$`."""
    if len(text) <= room:
        return text
    cut = text.rfind(" ", 0, room)
    head = text[: cut if cut > room // 2 else room]
    if head.count("$") % 2:  # never hand the converter half a math span
        head = head[: head.rfind("$")]
    return head


def readable(text: str, limit: int) -> str:
    """`text` with its LaTeX as Unicode, rendering only the source that `limit` shown
    characters can need; a cut source ends with "…" so the reader knows there is more."""
    head = _source(text, max(1, limit) * LATEX_SOURCE_PER_CHAR)
    shown = latex_to_unicode(head)
    return shown if head is text else shown.rstrip() + limits.ELLIPSIS


def plain_title(title: str) -> str:
    """A title as people read it: the one rendering every surface uses (`display_title`, the
    CLI's too), of at most `TITLE_SOURCE` characters of source. Plain text: callers that put
    it into markdown escape it."""
    head = _source(title, TITLE_SOURCE)
    return display_title(head) + ("" if head is title else limits.ELLIPSIS)


def title_text(paper: Paper) -> str:
    return plain_title(paper.title)


def authors_short(paper: Paper, first: int = AUTHORS_IN_HIT) -> str:
    if not paper.authors:
        return ""
    shown = ", ".join(paper.authors[:first])
    return shown + (" et al." if len(paper.authors) > first else "")


def venue_line(paper: Paper) -> str:
    """Venue and, when known, the decision (Oral, Spotlight, Poster)."""
    if note := versions.accepted_note(paper):  # a merged preprint: "accepted at ICLR 2026 (oral)"
        return f"arXiv preprint, {note}"
    return " · ".join(x for x in (paper.venue, paper.status or "") if x)


def found_links(paper: Paper) -> list[tuple[str, str]]:
    """(label, url): the paper's own links, then code and project URLs found in the abstract,
    every one well formed (`bot.papers.links`)."""
    return [
        (LINK_LABELS.get(link.kind, link.kind.capitalize()), link.url)
        for link in paper_links(paper)
    ]


def _listed(items: Sequence[str], sep: str = ", ") -> str:
    """Escaped corpus strings joined within one field value ("and N more" when they do not
    fit); each is cut first so a single absurd entry costs no more than a field."""
    shown = [escape(limits.truncate(item, limits.FIELD_VALUE)) for item in items]
    return limits.join_limited(shown, limits.FIELD_VALUE, sep=sep)


def paper_embed(
    paper: Paper,
    *,
    heading: str | None = None,
    excerpt: int = limits.EMBED_DESCRIPTION,
    footer: Sequence[str] = (),
    marker: str | None = None,
) -> discord.Embed:
    """One paper: linked title, abstract (LaTeX as Unicode, at most `excerpt` characters),
    authors, venue/status/year, keywords, links. The detail view and the daily post both
    use it; the footer is `footer` (default: the paper id), then the derived-title note, then
    the daily post's `marker`. The source's TL;DR, when it has one, comes first."""
    abstract = escape(readable(paper.abstract.strip(), excerpt))
    if paper.tldr:
        tldr = escape(readable(paper.tldr.strip(), limits.FIELD_VALUE))
        abstract = f"**TL;DR** {tldr}\n\n{abstract}"
    embed = discord.Embed(
        title=limits.truncate(escape(title_text(paper)), limits.EMBED_TITLE) or escape(paper.id),
        url=clean_url(paper.link("page")),
        colour=COLOR,
        description=limits.truncate(abstract, excerpt, markdown=True) or "_No abstract._",
    )
    if heading:
        embed.set_author(name=limits.truncate(heading, limits.EMBED_AUTHOR))
    embed.add_field(name="Authors", value=_listed(paper.authors) or "not listed", inline=False)
    year = str(paper.year) if paper.year and str(paper.year) not in paper.venue else ""
    venue = " · ".join(x for x in (venue_line(paper), year) if x)
    embed.add_field(name="Venue", value=escape(venue) or "unknown", inline=True)
    if paper.keywords:
        embed.add_field(name="Keywords", value=_listed(paper.keywords), inline=True)
    links = [masked_link(label, url) for label, url in found_links(paper)]
    if links:
        embed.add_field(
            name="Links",
            value=limits.join_limited(links, limits.FIELD_VALUE, sep=" · "),
            inline=False,
        )
    parts = list(footer) or [f"id: {paper.id}"]
    if paper.title_derived:
        parts.append(DERIVED_NOTE)
    if marker:
        parts.append(marker)
    embed.set_footer(text=" · ".join(parts))
    return finish(embed)


def help_embed(venues: Mapping[str, int], *, ephemeral: bool | None = True) -> discord.Embed:
    """What the bot does, how to search, and what the corpus holds (`ephemeral=None`: the
    console, where replies are neither private nor shared)."""
    total = sum(venues.values())
    embed = discord.Embed(
        title="Paper bot",
        colour=COLOR,
        description=(
            "Finds conference papers by their title and abstract (BM25 ranking) and can post a "
            "paper of the day.\n\n"
            "**Commands**\n"
            "`/search query [venue] [limit]` ranked papers, with ◀ ▶ pages and a menu to open one\n"
            "`/paper paper` one paper in full (start typing a title for suggestions)\n"
            "`/similar paper` papers like that one\n"
            "`/random [venue]` a paper picked at random\n"
            "`/new [days] [venue]` papers added recently, newest first\n"
            "`/help` this message"
        ),
    )
    embed.add_field(
        name="How to search",
        inline=False,
        value=(
            "Type a few words that make the paper special: `optimal transport`.\n"
            '`"exact phrase"` keeps words together · `-word` excludes · `author:name`, '
            "`venue:icml`, `year:2026` filter · `sort:new` newest first (`old`, `venue`).\n"
            + {
                True: "Replies are visible only to you; **Share** posts one to the channel.",
                False: "Replies are posted in the channel.",
                None: "",
            }[ephemeral]
        ).strip(),
    )
    if ephemeral is not None:  # Discord only: the console has no channels to post to
        embed.add_field(
            name="Paper of the day",
            inline=False,
            value=(
                "`/today` today's pick for this server\n"
                "`/daily set channel time timezone [topic] [pool]` post one paper a day "
                "(Manage Server; `pool:new` prefers papers added since the last post)\n"
                "`/daily status` · `/daily off`"
            ),
        )
    embed.add_field(
        name="Your library and follows",
        inline=False,
        value=(
            "Under any paper: **Save** keeps it, **Cite** gives its BibTeX, **More like this** "
            "finds similar papers · `/library show` (pick a paper, then Mark read or Remove) · "
            "`/library read paper` · "
            "`/library remove paper` · `/library import file` (.bib, RIS, CSL-JSON) · "
            "`/library export format:bibtex|ris|csljson|markdown|csv` · "
            "`/library clear` deletes all the bot stores about you\n"
            "`/follow add query [channel]` new papers matching a query, by DM (or in a channel: "
            "Manage Server) · `/follow list` · `/follow remove`"
            if ephemeral is not None
            else "`/save [N]` · `/cite [N]` · `/library show|read|remove|import|export|clear` · "
            "`/follow add|list|remove` (see below)"
        ),
    )
    if ephemeral is not None:
        embed.add_field(
            name="This server",
            inline=False,
            value=(
                "`/top [period:week|month|all]` the most saved and most reacted-to papers\n"
                "`/server venue [venue]` the default venue of /search and /random "
                "(Manage Server; `venue: all` overrides it)"
            ),
        )
    counts = [f"{venue}: {count:,} papers" for venue, count in venues.items()]
    embed.add_field(
        name=f"Corpus: {total:,} papers",
        inline=False,
        value=limits.join_limited(counts, limits.FIELD_VALUE, sep="\n", more="and {n} more venues")
        or "empty",
    )
    return finish(embed)


def note_embed(message: str) -> discord.Embed:
    """A short answer in the bot's colour: a setting changed, an item removed."""
    return finish(discord.Embed(description=message, colour=COLOR))


def error_embed(message: str) -> discord.Embed:
    return finish(discord.Embed(description=message, colour=ERROR_COLOR))

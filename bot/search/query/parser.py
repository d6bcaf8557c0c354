"""Query syntax: free words, `"exact phrase"`, `-exclude`, `author:name`, `venue:colm`, `year:2025`,
`sort:new` (`SORTS`: the order of the hits, relevance unless asked).

Parsing never fails: anything that is not valid syntax (an unbalanced quote, a lone `-`, an
unknown `key:value`) is read as plain words, the way search boxes people know behave. A filter
that cannot mean anything (`year:abc`, `sort:size`) is recorded in `problems`: searching
without it would answer a different question than the one asked, so the engine says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.search.results import Filters

# One piece of a query: an optional '-', an optional `key:`, then a quoted or bare value.
PIECE = re.compile(r'(-?)(?:(author|venue|year|sort):)?(?:"([^"]*)"|(\S+))', re.IGNORECASE)
MAX_QUERY_CHARS = 1000
KEYS = ("author", "venue", "year", "sort")
# The orders `sort:` takes, each with the spellings people use for it; the first is the default.
SORTS: dict[str, tuple[str, ...]] = {
    "relevance": ("relevance", "relevant", "rel", "best", "score"),
    "new": ("new", "newest", "recent", "latest", "date"),
    "old": ("old", "oldest", "earliest"),
    "venue": ("venue", "venues", "conference"),
}
_SORT_OF = {spelling: name for name, spellings in SORTS.items() for spelling in spellings}


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    words: str = ""
    phrases: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    filters: Filters = field(default_factory=Filters)
    notes: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    sort: str = "relevance"

    @property
    def text(self) -> str:
        """Everything that is scored: the free words and the words of the phrases."""
        return " ".join([self.words, *self.phrases]).strip()


def parse_query(raw: str) -> ParsedQuery:
    text = raw.replace("\x00", " ")[:MAX_QUERY_CHARS]
    text = text.replace("“", '"').replace("”", '"')
    if text.count('"') % 2:
        # An unbalanced quote is a typo, not a phrase: drop the last one.
        cut = text.rfind('"')
        text = text[:cut] + " " + text[cut + 1 :]
    words: list[str] = []
    phrases: list[str] = []
    excludes: list[str] = []
    authors: list[str] = []
    venue: str | None = None
    year: int | None = None
    sort = "relevance"
    notes: list[str] = []
    problems: list[str] = []
    for match in PIECE.finditer(text):
        negate, key, quoted, bare = match.groups()
        value = (quoted if quoted is not None else bare or "").strip()
        key = key.lower() if key else None
        if not key and quoted is None and value.lower() in tuple(k + ":" for k in KEYS):
            key, value = value[:-1].lower(), ""
        if not quoted and value.strip("-") == "":
            if key:
                notes.append(f"`{key}:` needs a value; ignored")
            continue
        if key and not value:
            notes.append(f"`{key}:` needs a value; ignored")
            continue
        if key == "author":
            authors.append(value)
        elif key == "venue":
            venue = value
        elif key == "year":
            if re.fullmatch(r"\d{4}", value):
                year = int(value)
            else:
                problems.append(f"`year:{value}` is not a year: write four digits, e.g. year:2025.")
        elif key == "sort":
            found = _SORT_OF.get(value.lower())
            if found is None:
                problems.append(
                    f"`sort:{value}` is not an order: use sort:new (newest first), sort:old, "
                    "sort:venue or sort:relevance (the default)."
                )
            else:
                sort = found
        elif negate and quoted is None and not value[:1].isalpha():
            # `-2`, `-0.5`, `--`: a negative number or a dash, not an exclusion.
            words.append("-" + value)
        elif negate:
            if value and value != "-":
                excludes.append(value)
        elif quoted is not None:
            if value:
                phrases.append(value)
        elif value:
            words.append(value)
    filters = Filters(venue=venue, year=year, authors=tuple(authors))
    return ParsedQuery(
        " ".join(words),
        tuple(phrases),
        tuple(excludes),
        filters,
        tuple(notes),
        tuple(problems),
        sort,
    )


def merge_filters(parsed: Filters, given: Filters | None) -> Filters:
    """Explicit arguments (a slash-command option, `--venue`) win over the query's own."""
    if given is None:
        return parsed
    return Filters(
        venue=given.venue or parsed.venue,
        year=given.year or parsed.year,
        authors=parsed.authors + given.authors,
    )

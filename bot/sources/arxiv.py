"""arXiv's export API (`/api/query`, Atom 1.0 with OpenSearch totals) to project records.

Parsed with the standard library's `xml.etree`: the feed is strict, namespaced XML, and every
field the bot keeps (`arxiv:comment`, `arxiv:journal_ref`, `arxiv:doi`, `arxiv:primary_category`,
the OpenSearch totals, the error entry of a 400) is one `find` away, so `feedparser`'s leniency
and its renamed keys would add a dependency without adding a field.

Ids: `arxiv:<id>` without the version (`arxiv:2104.12255`, `arxiv:astro-ph/0601001`), so a
newer version of a paper updates its record instead of adding a second one.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from bot.papers.formats import tidy

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
ERROR_ID = "arxiv.org/api/errors"
# New style `2104.12255v1` (4+4 or 4+5 digits); old style `astro-ph/0601001v1`, `math.GT/0309136`.
_ID = re.compile(
    r"arxiv\.org/abs/(?P<id>\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v(?P<v>\d+))?$"
)
_CATEGORY = re.compile(r"^[a-z-]+(?:\.[A-Za-z-]+)?$")


class ArxivError(Exception):
    """arXiv answered with its error feed (a 400: bad query or id); the message is arXiv's."""


class MalformedEntry(ValueError):
    """One entry cannot become a paper; reported and skipped."""


@dataclass(slots=True)
class Page:
    """One page of a query: its records, the totals, and the entries that were skipped."""

    total: int
    start: int
    per_page: int
    records: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    entries: int = 0  # <entry> elements seen, good or bad


def search_query(categories: list[str] | tuple[str, ...], since: date, until: date) -> str:
    """`(cat:cs.LG OR cat:cs.CL) AND submittedDate:[202611010000 TO 202611302359]`."""
    for cat in categories:
        if not _CATEGORY.match(cat):
            raise ValueError(f"{cat!r} is not an arXiv category (examples: cs.LG, stat.ML, hep-th)")
    if until < since:
        raise ValueError(f"--until {until} is before --since {since}")
    cats = " OR ".join(f"cat:{c}" for c in categories)
    span = f"submittedDate:[{since:%Y%m%d}0000 TO {until:%Y%m%d}2359]"
    return f"({cats}) AND {span}"


def _text(entry: ET.Element, tag: str) -> str:
    node = entry.find(tag)
    return tidy(node.text or "") if node is not None and node.text else ""


def _int(feed: ET.Element, tag: str, default: int) -> int:
    raw = _text(feed, OPENSEARCH + tag)
    try:
        return int(raw)
    except ValueError:
        return default


def stamp(value: str) -> str:
    """arXiv's `2021-04-20T16:07:14Z` as the project's UTC spelling (it already is one)."""
    return value.strip()


def entry_record(entry: ET.Element) -> dict[str, Any]:
    """One Atom entry as a project JSONL record; MalformedEntry says what is missing."""
    raw_id = _text(entry, ATOM + "id")
    match = _ID.search(raw_id)
    if not match:
        raise MalformedEntry(f"entry id {raw_id!r} is not an arXiv abs URL")
    arxiv_id, version = match["id"], int(match["v"] or 1)
    title = _text(entry, ATOM + "title")
    abstract = _text(entry, ATOM + "summary")
    if not title or not abstract:
        raise MalformedEntry(f"arXiv {arxiv_id}: missing title or abstract")
    published = _text(entry, ATOM + "published")
    if not re.match(r"^\d{4}-\d{2}-\d{2}T", published):
        raise MalformedEntry(f"arXiv {arxiv_id}: missing or bad published date {published!r}")
    authors = [
        tidy(name.text)
        for author in entry.findall(ATOM + "author")
        if (name := author.find(ATOM + "name")) is not None and name.text and name.text.strip()
    ]
    categories = [c.get("term", "") for c in entry.findall(ATOM + "category") if c.get("term")]
    primary = entry.find(ARXIV + "primary_category")
    primary_term = primary.get("term") if primary is not None else None
    links = [{"kind": "page", "url": f"https://arxiv.org/abs/{arxiv_id}"}]
    links.append({"kind": "pdf", "url": f"https://arxiv.org/pdf/{arxiv_id}"})
    doi = _text(entry, ARXIV + "doi")
    if doi:
        links.append({"kind": "doi", "url": f"https://doi.org/{doi.split()[0]}"})
    return {
        "id": f"arxiv:{arxiv_id}",
        "title": title,
        "authors": authors,
        "abstract": abstract,
        "venue": "arXiv",
        "year": int(published[:4]),
        "status": primary_term or (categories[0] if categories else None),
        "categories": categories,
        "version": version,
        "links": links,
        "comment": _text(entry, ARXIV + "comment") or None,
        "journal_ref": _text(entry, ARXIV + "journal_ref") or None,
        "doi": doi or None,
        "published": stamp(published),
        "updated": stamp(_text(entry, ATOM + "updated") or published),
    }


def parse_feed(body: bytes | str) -> Page:
    """A page of results. The error feed (HTTP 400) raises ArxivError with arXiv's message;
    XML that is not a feed raises ArxivError too; a bad entry is reported and skipped."""
    try:
        feed = ET.fromstring(body)
    except ET.ParseError as exc:
        raise ArxivError(f"the response is not an Atom feed ({exc})") from exc
    if feed.tag != ATOM + "feed":
        raise ArxivError(f"the response is not an Atom feed (root {feed.tag!r})")
    entries = feed.findall(ATOM + "entry")
    for entry in entries:
        if ERROR_ID in _text(entry, ATOM + "id"):
            raise ArxivError(_text(entry, ATOM + "summary") or "arXiv reported an error")
    page = Page(
        total=_int(feed, "totalResults", 0),
        start=_int(feed, "startIndex", 0),
        per_page=_int(feed, "itemsPerPage", len(entries)),
        entries=len(entries),
    )
    for number, entry in enumerate(entries, start=page.start + 1):
        try:
            page.records.append(entry_record(entry))
        except MalformedEntry as exc:
            page.problems.append(f"arXiv result {number}: {exc}")
    return page

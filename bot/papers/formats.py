"""One corpus record to a `Paper`: the three record shapes (the project's JSON Lines, a Paper
Copilot conference list, a BEIR corpus), the field readers they share, and the caps on absurd
titles and abstracts.

Split from `bot.papers.corpus`, which reads the files and reports problems; everything here
works on one decoded record and raises `RecordError` with the reason shown after `file:line:`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from bot.papers.records import Link, Paper

# Longest title and abstract kept: beyond is a broken record, cut with a warning, so that one
# paper cannot make indexing, snippets and every reply showing it slow.
MAX_TITLE = 1_000
MAX_ABSTRACT = 20_000
_SOFT_BREAK = re.compile(r"-\n\s*")


class RecordError(ValueError):
    """One record cannot become a paper; the message is the reason shown after `file:line:`."""


def tidy(text: str) -> str:
    """One line of text: soft line-break hyphens rejoined (`bidi-\\nrected`), spaces collapsed.

    Why not `re.sub(r"\\s+", " ", ...).strip()`: `split` and `strip` take as whitespace
    exactly what `\\s` matches (str.isspace), so the join gives the same text at half the
    cost (every title of a build goes through here)."""
    if "-\n" in text:  # `_SOFT_BREAK` cannot match otherwise
        text = _SOFT_BREAK.sub("-", text)
    return " ".join(text.split())


def _text(value: Any, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RecordError(f"{name} must be a string, got {type(value).__name__}")
    return value.replace("\x00", "")


def _split_list(value: Any, name: str) -> tuple[str, ...]:
    if value is None or value == "None":
        return ()
    if isinstance(value, str):
        return tuple(p.strip() for p in value.split(";") if p.strip())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    raise RecordError(f"{name} must be a string or a list of strings")


def _year(value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise RecordError("year must be a number")
    try:
        year = int(value)
    except ValueError as exc:
        raise RecordError(f"year must be a number, got {value!r}") from exc
    if not 1900 <= year <= 2200:
        raise RecordError(f"year {year} is out of range")
    return year


def _url(value: Any) -> str | None:
    if isinstance(value, str) and value.startswith(("http://", "https://")):
        return value.strip()
    return None


def added_stamp(value: Any) -> str | None:
    """An `added` value as `YYYY-MM-DDTHH:MM:SSZ` (UTC), the one spelling /new compares."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise RecordError("added must be an ISO-8601 date-time string")
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise RecordError(f"added is not an ISO-8601 date-time: {value!r}") from exc
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _require_text(paper_id: str, title: str, abstract: str) -> None:
    if not paper_id:
        raise RecordError("missing id")
    if not title and not abstract:
        raise RecordError(f"paper {paper_id!r} has neither title nor abstract")


def _paper(
    record: dict[str, Any],
    paper_id: str,
    title: str,
    abstract: str,
    venue: str,
    year: int | None,
    authors_key: str,
    links: list[Link],
    derived: bool = False,
    added: str | None = None,
) -> Paper:
    """A paper from what each record shape reads its own way (id, title, abstract, venue, year,
    links) and the fields project files and conference lists spell alike."""
    status = record.get("status")
    return Paper(
        id=paper_id,
        title=title or _headline_fallback(abstract),
        abstract=abstract,
        venue=venue,
        year=year,
        authors=_split_list(record.get(authors_key), authors_key),
        links=tuple(links),
        status=status if isinstance(status, str) and status else None,
        keywords=_split_list(record.get("keywords"), "keywords"),
        tldr=tidy(_text(record.get("tldr"), "tldr")),
        bibtex=_text(record.get("bibtex"), "bibtex").strip(),
        title_derived=derived or not title,
        added=added,
    )


# --- the three record shapes ---------------------------------------------------------------


def paper_from_project(record: dict[str, Any], default_venue: str) -> Paper:
    paper_id = _text(record.get("id"), "id").strip()
    title = tidy(_text(record.get("title"), "title"))
    abstract = _text(record.get("abstract"), "abstract").strip()
    _require_text(paper_id, title, abstract)
    links = []
    raw_links = record.get("links") or []
    if not isinstance(raw_links, list):
        raise RecordError("links must be a list")
    for item in raw_links:
        if not isinstance(item, dict) or not _url(item.get("url")):
            raise RecordError("each link needs a kind and an http(s) url")
        links.append(Link(str(item.get("kind") or "other"), item["url"]))
    venue = _text(record.get("venue"), "venue").strip() or default_venue
    year, added = _year(record.get("year")), added_stamp(record.get("added"))
    derived = bool(record.get("title_derived"))
    return _paper(record, paper_id, title, abstract, venue, year, "authors", links, derived, added)


def _listed_core(record: dict[str, Any], id_key: str, abstract_key: str) -> tuple[str, str, str]:
    """Id, title and abstract of a conference-list or BEIR record (numeric ids accepted)."""
    raw_id = record.get(id_key)
    if isinstance(raw_id, int) and not isinstance(raw_id, bool):
        raw_id = str(raw_id)
    paper_id = _text(raw_id, id_key).strip()
    title = tidy(_text(record.get("title"), "title"))
    abstract = tidy(_text(record.get(abstract_key), abstract_key))
    _require_text(paper_id, title, abstract)
    return paper_id, title, abstract


def paper_from_paperlist(record: dict[str, Any], venue: str, year: int | None, slug: str) -> Paper:
    paper_id, title, abstract = _listed_core(record, "id", "abstract")
    links = [
        Link(kind, url)
        for kind, url in (
            ("page", _url(record.get("site"))),
            ("pdf", _url(record.get("pdf"))),
            ("proceedings", _url(record.get("oa"))),
        )
        if url
    ]
    return _paper(record, f"{slug}/{paper_id}", title, abstract, venue, year, "author", links)


def paper_from_beir(record: dict[str, Any], venue: str) -> Paper:
    paper_id, title, abstract = _listed_core(record, "_id", "text")
    return Paper(
        id=paper_id,
        title=title or _headline_fallback(abstract),
        abstract=abstract,
        venue=venue,
        title_derived=not title,
    )


def _cut(text: str, limit: int) -> str:
    """`text`, or when longer than `limit` its start cut at a word and marked "…"."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    return (head[:space] if space > limit * 0.9 else head).rstrip() + "…"


def capped(paper: Paper) -> tuple[Paper, list[str]]:
    """`paper` with an absurd title or abstract cut at a word near the limit, and a note each."""
    notes = [
        f"{name} of {len(text):,} characters cut to {limit:,}"
        for name, text, limit in (
            ("title", paper.title, MAX_TITLE),
            ("abstract", paper.abstract, MAX_ABSTRACT),
        )
        if len(text) > limit
    ]
    if not notes:
        return paper, notes
    title, abstract = _cut(paper.title, MAX_TITLE), _cut(paper.abstract, MAX_ABSTRACT)
    return replace(paper, title=title, abstract=abstract), notes


def _headline_fallback(abstract: str, words: int = 12) -> str:
    first = re.split(r"(?<=[.!?])\s", abstract, maxsplit=1)[0]
    parts = first.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")

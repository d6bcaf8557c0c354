"""OpenReview API v2 notes (`GET /notes?content.venueid=...`) to project records.

A venue's accepted papers are the notes whose `content.venueid.value` equals the venue id
(submissions under review and rejected ones carry other venueids: `.../Submission`,
`.../Rejected_Submission`), paged with `offset`/`limit` until `count`. Every content field is
wrapped as `{"value": ...}` in API v2. Ids: `openreview:<forum>`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bot.papers.corpus import VENUE_NAMES
from bot.papers.formats import tidy

WEB = "https://openreview.net"
PAGE_LIMIT = 1000  # the most API v2 returns per call
_PRESENTATION = (("oral", "Oral"), ("spotlight", "Spotlight"), ("poster", "Poster"))
_VENUE_ID = re.compile(r"^(?P<org>[^/]+)/(?P<year>\d{4})/")


class MalformedNote(ValueError):
    """One note cannot become a paper; reported and skipped."""


@dataclass(slots=True)
class NotesPage:
    total: int
    offset: int
    records: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: int = 0  # notes in the response, good or bad
    other_venue: int = 0  # notes whose venueid is not the venue id (not accepted)


def venue_name(venue_id: str) -> tuple[str, int | None]:
    """`ICML.cc/2026/Conference` -> ("ICML 2026", 2026)."""
    match = _VENUE_ID.match(venue_id)
    if not match:
        return venue_id, None
    org = match["org"].split(".")[0]
    return f"{VENUE_NAMES.get(org.lower(), org)} {match['year']}", int(match["year"])


def _value(content: dict[str, Any], key: str) -> Any:
    wrapped = content.get(key)
    if isinstance(wrapped, dict):
        return wrapped.get("value")
    return None


def _string(content: dict[str, Any], key: str, note_id: str) -> str:
    value = _value(content, key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MalformedNote(f"note {note_id}: {key} is {type(value).__name__}, not text")
    return value


def _strings(content: dict[str, Any], key: str, note_id: str) -> list[str]:
    value = _value(content, key)
    if value is None:
        return []
    if isinstance(value, str):
        value = re.split(r"[;,]", value)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise MalformedNote(f"note {note_id}: {key} must be a list of strings")
    return [tidy(v) for v in value if v.strip()]


def _stamp(millis: Any) -> str | None:
    if isinstance(millis, bool) or not isinstance(millis, int | float) or millis <= 0:
        return None
    return datetime.fromtimestamp(millis / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def presentation(label: str, venue: str) -> tuple[str, str | None]:
    """`ICML 2026 Spotlight` -> ("ICML 2026", "Spotlight"); an unknown label is kept whole."""
    match = re.match(r"^\S+\s+\d{4}\b\s*(.*)$", label)
    if not match:
        return venue, label or None
    words = match[1].strip()
    for needle, status in _PRESENTATION:
        if needle in words.casefold():
            return venue, status
    return venue, words or None


def note_record(note: Any, venue_id: str) -> dict[str, Any]:
    """One accepted note as a project JSONL record; MalformedNote says what is wrong."""
    if not isinstance(note, dict):
        raise MalformedNote(f"expected a note object, got {type(note).__name__}")
    note_id = note.get("id")
    forum = note.get("forum") or note_id
    content = note.get("content")
    if not isinstance(note_id, str) or not isinstance(forum, str) or not note_id:
        raise MalformedNote("note without an id")
    if not isinstance(content, dict):
        raise MalformedNote(f"note {note_id}: no content")
    title = tidy(_string(content, "title", note_id))
    abstract = tidy(_string(content, "abstract", note_id))
    if not title or not abstract:
        raise MalformedNote(f"note {note_id}: missing title or abstract")
    venue, year = venue_name(venue_id)
    venue, status = presentation(tidy(_string(content, "venue", note_id)), venue)
    links = [{"kind": "page", "url": f"{WEB}/forum?id={forum}"}]
    if _string(content, "pdf", note_id):
        links.append({"kind": "pdf", "url": f"{WEB}/pdf?id={note_id}"})
    for key in ("code", "github"):
        url = _string(content, key, note_id).strip()
        if url.startswith(("http://", "https://")):
            links.append({"kind": "code", "url": url})
            break
    return {
        "id": f"openreview:{forum}",
        "title": title,
        "authors": _strings(content, "authors", note_id),
        "abstract": abstract,
        "venue": venue,
        "year": year,
        "status": status,
        "keywords": _strings(content, "keywords", note_id),
        "tldr": tidy(_string(content, "TLDR", note_id)) or None,
        "bibtex": _string(content, "_bibtex", note_id).strip() or None,
        "links": links,
        "published": _stamp(note.get("pdate")) or _stamp(note.get("odate")),
        "updated": _stamp(note.get("mdate")) or _stamp(note.get("tmdate")),
    }


def parse_notes(data: Any, venue_id: str, offset: int) -> NotesPage:
    """A page of `/notes`; only notes whose venueid equals `venue_id` become records."""
    if not isinstance(data, dict) or not isinstance(data.get("notes"), list):
        raise MalformedNote("the response has no `notes` list")
    notes = data["notes"]
    count = data.get("count")
    total = count if isinstance(count, int) and not isinstance(count, bool) else offset + len(notes)
    page = NotesPage(total=total, offset=offset, notes=len(notes))
    for number, note in enumerate(notes, start=offset + 1):
        content = note.get("content") if isinstance(note, dict) else None
        if isinstance(content, dict) and _value(content, "venueid") != venue_id:
            page.other_venue += 1
            continue
        try:
            page.records.append(note_record(note, venue_id))
        except MalformedNote as exc:
            page.problems.append(f"OpenReview note {number}: {exc}")
    return page

"""`/library import`: a reference manager's file (Zotero, Better BibTeX, Mendeley, EndNote)
matched to the corpus's papers and saved to a reader's library, discord-free. The cog, the
console and `python -m bot library import` call `import_file`, so the answer is the same
everywhere.

Matching, first hit wins: the bot's own paper id (the note its exports write), the arXiv id
(an `arxiv:` record, or any paper merged with that preprint: lookups resolve aliases), the
title as typed (case and accents ignored), the title normalised (punctuation, LaTeX braces),
then the DOI (arXiv's own DOIs are arXiv ids; other DOIs need a scan of the corpus records,
done once per corpus and only when a reference is still unmatched).

Nothing is lost: a file that does not parse, is too large, or would overfill the library
saves nothing and says why; papers already in the library are counted, not added twice; the
entries that match no paper are reported (how many, and the first titles).
"""

from __future__ import annotations

import unicodedata
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.library.actions import Refused, find, now
from bot.library.references import (
    FORMAT_NAMES,
    IMPORT_MAX_BYTES,
    Reference,
    UnreadableFile,
    read_references,
    too_large,
)
from bot.library.store import Library
from bot.papers import versions
from bot.search.engine import SearchEngine
from bot.search.suggest.lookups import PaperLookups

# What `prepare` found in a file: (format, entries, matches), saved by `save_matched`.
Prepared = tuple[str, int, "Matched"]
SHOWN_UNMATCHED = 5  # titles listed in the answer
_TITLE_SHOWN = 90
_by_title: weakref.WeakKeyDictionary[PaperLookups, dict[str, int]] = weakref.WeakKeyDictionary()
_by_doi: weakref.WeakKeyDictionary[PaperLookups, dict[str, int]] = weakref.WeakKeyDictionary()


@dataclass
class Matched:
    """References of one file against the corpus: paper ids found (in file order, each once)
    and the references that matched nothing."""

    paper_ids: list[str] = field(default_factory=list)
    unmatched: list[Reference] = field(default_factory=list)
    repeated: int = 0  # entries naming a paper another entry already matched


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in text if not unicodedata.combining(ch)).lower()


def _titles(lookups: PaperLookups) -> dict[str, int]:
    index = _by_title.get(lookups)
    if index is None:
        index = {}
        for pos, title in enumerate(lookups.titles):
            index.setdefault(versions.title_key(title), pos)
        _by_title[lookups] = index
    return index


def _dois(lookups: PaperLookups) -> dict[str, int]:
    index = _by_doi.get(lookups)
    if index is None:
        index = {}
        for pos, paper in enumerate(lookups.papers):
            for doi in versions.dois(paper):
                index.setdefault(doi, pos)
        _by_doi[lookups] = index
    return index


def _position(lookups: PaperLookups, ref: Reference) -> int | None:
    if ref.paper_id and (pos := lookups.find_id(ref.paper_id)) is not None:
        return pos
    if ref.arxiv and (pos := lookups.find_id(f"arxiv:{ref.arxiv}")) is not None:
        return pos
    if ref.title:
        exact, _prefix = lookups.title_index.title_match(_fold(ref.title))
        if exact is not None:
            return exact
        if (pos := _titles(lookups).get(versions.title_key(ref.title))) is not None:
            return pos
    if ref.doi:
        return _dois(lookups).get(ref.doi)
    return None


def match(engine: SearchEngine, refs: Sequence[Reference]) -> Matched:
    """Each reference's paper in the corpus (CPU work: the cog runs it off the loop)."""
    lookups = engine.lookups
    out = Matched()
    seen: set[str] = set()
    for ref in refs:
        pos = _position(lookups, ref)
        if pos is None:
            out.unmatched.append(ref)
            continue
        paper_id = lookups.ids[pos]
        if paper_id in seen:
            out.repeated += 1
            continue
        seen.add(paper_id)
        out.paper_ids.append(paper_id)
    return out


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import did, for the reader."""

    filename: str
    fmt: str
    entries: int
    added: int
    already: int
    matched: Matched

    def text(self) -> str:
        name = FORMAT_NAMES[self.fmt]
        found = len(self.matched.paper_ids)
        lines = [
            f"Imported `{self.filename}` ({name}, {_n(self.entries, 'entry', 'entries')}): "
            f"{_n(found, 'paper')} found in this corpus, {self.added} added to your library"
            + (f", {self.already} already there." if self.already else ".")
        ]
        missing = self.matched.unmatched
        if missing:
            shown = ", ".join(f'"{_cut(ref.label)}"' for ref in missing[:SHOWN_UNMATCHED])
            more = len(missing) - SHOWN_UNMATCHED
            lines.append(
                f"{_n(len(missing), 'entry', 'entries')} matched no paper here (by id, arXiv "
                f"id, DOI or title): {shown}" + (f" and {more} more." if more > 0 else ".")
            )
        if self.matched.repeated:
            lines.append(f"{_n(self.matched.repeated, 'entry', 'entries')} repeated a paper.")
        return "\n".join(lines)


def _n(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else many or one + 's'}"


def _cut(text: str) -> str:
    return text if len(text) <= _TITLE_SHOWN else text[: _TITLE_SHOWN - 1].rstrip() + "…"


def read_path(path: Path) -> bytes:
    """A file's bytes for `prepare` (the console and the CLI); Refused when it is missing or
    larger than a file the bot reads (checked before reading it)."""
    try:
        size = path.stat().st_size
        if size > IMPORT_MAX_BYTES:
            raise too_large(path.name, size)
        return path.read_bytes()
    except UnreadableFile as exc:
        raise Refused(f"Nothing was imported: {exc}") from exc
    except OSError as exc:
        raise Refused(f"Nothing was imported: cannot read {str(path)!r} ({exc.strerror}).") from exc


def refuse_size(filename: str, size: int) -> None:
    """Refused (before downloading) when a file's announced size is over the limit."""
    if size > IMPORT_MAX_BYTES:
        raise Refused(f"Nothing was imported: {too_large(filename, size)}")


def prepare(engine: SearchEngine, filename: str, data: bytes) -> Prepared:
    """Parse and match (CPU work, off the loop): (format, entries, matched). Refused with the
    reason when the file cannot be read; nothing is saved here."""
    try:
        fmt, refs = read_references(filename, data)
    except UnreadableFile as exc:
        raise Refused(f"Nothing was imported: {exc}") from exc
    return fmt, len(refs), match(engine, refs)


async def save_matched(
    library: Library,
    engine: SearchEngine,
    user_id: int,
    filename: str,
    prepared: Prepared,
    *,
    max_saved: int,
    guild_id: int | None = None,
) -> ImportReport:
    """Save what `prepare` found, in one transaction; Refused (nothing saved) when it would
    overfill the library. A paper saved before under another id of the same work (a preprint
    since merged with its accepted record) counts as already there."""
    fmt, entries, matched = prepared
    saved = {item.paper_id for item in await library.all(user_id)}
    held = {p.id for pid in saved if (p := find(engine, pid)) is not None} | saved
    new = [pid for pid in matched.paper_ids if pid not in held]
    added, before = await library.save_many(user_id, new, now(), guild_id, max_saved=max_saved)
    if added < 0:
        raise Refused(
            f"Nothing was imported: {_n(len(new), 'new paper')} would take your library past "
            f"its {max_saved} papers (it holds {before}). Remove some with /library remove, or "
            "import a smaller file."
        )
    already = len(matched.paper_ids) - len(new)
    return ImportReport(filename, fmt, entries, added, already, matched)

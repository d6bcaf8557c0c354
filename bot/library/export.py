"""A reading list as a file: BibTeX, Markdown or CSV, from plain `Paper` records.

BibTeX: a paper that came with its source's own entry (`Paper.bibtex`) is exported as that
entry, untouched apart from its key being kept. Otherwise an entry is generated:

* the key is `{first author's surname}{year}{first title word}`, ASCII, lower case, so it is
  the same every time the same paper is exported (people cite it from their .tex files); two
  papers of one export that would share a key get `a`, `b`... in the order of their paper ids;
* text is escaped for BibTeX/LaTeX: `\\ { } $ & % # _ ~ ^` outside inline math become their
  LaTeX commands (braces as `\\textbraceleft{}`: BibTeX counts even escaped braces), while
  `$...$` math (common in ML titles) with balanced braces is kept as written, so a parser never
  runs past the end of a field;
* the title is wrapped in an extra pair of braces so bibliography styles keep its capitals
  (acronyms like "PAC" or "BERT").
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.papers.latex import latex_to_unicode
from bot.papers.records import Paper

FORMATS = ("bibtex", "markdown", "csv")
EXTENSIONS = {"bibtex": "bib", "markdown": "md", "csv": "csv"}
_SPECIAL = {
    "\\": r"\textbackslash{}",
    # BibTeX counts every brace, escaped or not, so a lone one would end the field early.
    "{": r"\textbraceleft{}",
    "}": r"\textbraceright{}",
    "&": r"\&",
    "%": r"\%",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "$": r"\$",
}
_MATH = re.compile(r"(?<!\\)\$[^$\n]+?(?<!\\)\$")
_KEY_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"a", "an", "the", "on", "of", "in", "for", "to", "and", "with", "towards", "toward"}


@dataclass(frozen=True, slots=True)
class Entry:
    """One paper of a reading list with the reader's own state."""

    paper: Paper
    saved_at: datetime
    read: bool


def escape_text(text: str) -> str:
    """`text` safe inside a BibTeX field: specials escaped, `$...$` math kept."""
    out: list[str] = []
    pos = 0
    for match in _MATH.finditer(text):
        out.append(_escape_plain(text[pos : match.start()]))
        math = match.group(0)
        out.append(math if _balanced(math) else _escape_plain(math))
        pos = match.end()
    out.append(_escape_plain(text[pos:]))
    return " ".join("".join(out).split())


def _escape_plain(text: str) -> str:
    return "".join(_SPECIAL.get(ch, ch) for ch in text)


def _balanced(text: str) -> bool:
    """Braces nest properly (BibTeX counts `\\{` too, so backslashes do not excuse one)."""
    depth = 0
    for ch in text:
        depth += 1 if ch == "{" else -1 if ch == "}" else 0
        if depth < 0:
            return False
    return depth == 0


def _ascii(text: str) -> str:
    folded = unicodedata.normalize("NFKD", latex_to_unicode(text))
    return folded.encode("ascii", "ignore").decode().lower()


def base_key(paper: Paper) -> str:
    """`surname{year}word`: deterministic from the paper alone."""
    surname = ""
    if paper.authors:
        parts = _KEY_WORD.findall(_ascii(paper.authors[0]))
        surname = parts[-1] if parts else ""
    words = [w for w in _KEY_WORD.findall(_ascii(re.sub(r"\$[^$]*\$", " ", paper.title)))]
    word = next((w for w in words if w not in _STOP), words[0] if words else "")
    year = str(paper.year) if paper.year else ""
    key = f"{surname or 'anon'}{year}{word}"
    return key or "paper"


def keys_for(papers: Sequence[Paper]) -> dict[str, str]:
    """Paper id -> citation key, unique within the export (suffixes by paper id order)."""
    groups: dict[str, list[str]] = {}
    for paper in papers:
        groups.setdefault(base_key(paper), []).append(paper.id)
    keys: dict[str, str] = {}
    for key, ids in groups.items():
        ordered = sorted(set(ids))
        for i, pid in enumerate(ordered):
            keys[pid] = key if len(ordered) == 1 else f"{key}{_suffix(i)}"
    return keys


def _suffix(i: int) -> str:
    letters = ""
    i += 1
    while i:
        i, rem = divmod(i - 1, 26)
        letters = chr(ord("a") + rem) + letters
    return letters


def _venue_kind(paper: Paper) -> str:
    return "inproceedings" if paper.venue else "misc"


def bibtex_entry(paper: Paper, key: str) -> str:
    """One generated `@inproceedings` (or `@misc`) entry."""
    # The source's own entry, when the corpus has one (`Paper.bibtex`, issue 13; read with
    # getattr so this works before and after that field exists).
    source = getattr(paper, "bibtex", None)
    if isinstance(source, str) and source.strip().startswith("@"):
        return source.strip()
    fields: list[tuple[str, str]] = [("title", "{" + escape_text(paper.title) + "}")]
    if paper.authors:
        fields.append(("author", " and ".join(escape_text(a) for a in paper.authors)))
    if paper.venue:
        fields.append(("booktitle", escape_text(paper.venue)))
    if paper.year:
        fields.append(("year", str(paper.year)))
    url = paper.link("page") or paper.link("pdf")
    if url:
        fields.append(("url", url.replace("%", r"\%").replace("{", "").replace("}", "")))
    if paper.keywords:
        fields.append(("keywords", escape_text(", ".join(paper.keywords))))
    if paper.abstract:
        fields.append(("abstract", escape_text(paper.abstract)))
    fields.append(("note", escape_text(f"paper id: {paper.id}")))
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@{_venue_kind(paper)}{{{key},\n{body}\n}}"


def to_bibtex(entries: Sequence[Entry]) -> str:
    papers = [e.paper for e in entries]
    keys = keys_for(papers)
    return "\n\n".join(bibtex_entry(p, keys[p.id]) for p in papers) + "\n"


def _md(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", " ".join(text.split()))


def to_markdown(entries: Sequence[Entry]) -> str:
    lines = ["# Reading list", ""]
    for e in entries:
        p = e.paper
        title = _md(latex_to_unicode(p.title))
        url = p.link("page") or p.link("pdf")
        head = f"[{title}]({url})" if url else title
        box = "x" if e.read else " "
        meta = " · ".join(
            x for x in (", ".join(p.authors), p.venue, f"saved {e.saved_at:%Y-%m-%d}") if x
        )
        lines.append(f"- [{box}] {head}  ")
        lines.append(f"  {_md(meta)} · `{p.id}`")
    return "\n".join(lines) + "\n"


CSV_COLUMNS = ("id", "title", "authors", "venue", "year", "url", "saved_at", "read")


def to_csv(entries: Sequence[Entry]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for e in entries:
        p = e.paper
        writer.writerow(
            (
                p.id,
                latex_to_unicode(p.title),
                "; ".join(p.authors),
                p.venue,
                p.year or "",
                p.link("page") or p.link("pdf") or "",
                e.saved_at.isoformat(),
                "yes" if e.read else "no",
            )
        )
    return out.getvalue()


def export(entries: Sequence[Entry], fmt: str) -> str:
    """The reading list in `fmt` (one of FORMATS)."""
    if fmt == "bibtex":
        return to_bibtex(entries)
    if fmt == "markdown":
        return to_markdown(entries)
    if fmt == "csv":
        return to_csv(entries)
    raise ValueError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")

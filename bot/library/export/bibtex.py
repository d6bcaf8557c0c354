"""A reading list as BibTeX, from plain `Paper` records (opened by LaTeX: nothing in it may act
there).

A paper's own entry from its source (`Paper.bibtex`) is parsed alone by pybtex (so one
missing its `}` cannot swallow the next) and written back from the parsed fields, keeping its
key when that is unique in the file. One that does not parse, holds several entries or has no
title is replaced by a generated entry:

* the key is `{first author's surname}{year}{first title word}`, ASCII, lower case, so it is
  the same every time the same paper is exported (people cite it from their .tex files); papers
  of one export that would share a key (BibTeX ignores case) get `a`, `b`... by paper id;
* text is escaped for BibTeX/LaTeX: `\\ { } $ & % # _ ~ ^` outside inline math become their
  LaTeX commands (braces as `\\textbraceleft{}`: BibTeX counts even escaped braces), while
  `$...$` math (common in ML titles) with balanced braces is kept as written, so a parser never
  runs past the end of a field;
* the title gets an extra pair of braces so styles keep its capitals ("PAC", "BERT").

Every entry loses TeX commands that read or write files, run programs or change how TeX reads
what follows (`\\input`, `\\write18`, `\\catcode`, `\\def`...), and `^^` (TeX's spelling of
any character: `^^5c` is a backslash) is split.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.library.export.layout import Entry, Layout
from bot.papers.latex import latex_to_unicode
from bot.papers.records import Paper

log = logging.getLogger(__name__)
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
_SPECIAL_TABLE = str.maketrans(_SPECIAL)
_MATH = re.compile(r"(?<!\\)\$[^$\n]+?(?<!\\)\$")
_KEY_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"a", "an", "the", "on", "of", "in", "for", "to", "and", "with", "towards", "toward"}
# What a bibliography never needs: reading or writing files, running programs (shell escape,
# Lua), and changing how TeX reads what follows (catcodes, definitions, building a command's
# name from text), which would let a later command be spelled past this list.
_DANGEROUS = """
    input include includeonly InputIfFileExists IfFileExists @input @@input endinput
    openin openout closein closeout read readline write immediate newwrite newread special
    catcode lccode uccode mathcode sfcode delcode def edef gdef xdef let futurelet
    newcommand renewcommand providecommand DeclareRobustCommand NewDocumentCommand
    RenewDocumentCommand ProvideDocumentCommand DeclareDocumentCommand newenvironment
    renewenvironment csname endcsname expandafter noexpand scantokens everyjob everypar
    everymath everydisplay everyhbox everyvbox everycr everyeof directlua latelua luaexec
    luadirect pdfshellescape ShellEscape usepackage RequirePackage documentclass LoadClass
    makeatletter makeatother verbatiminput lstinputlisting inputminted includegraphics
    includepdf
""".split()
_WRITING_ENVIRONMENTS = r"filecontents|luacode|VerbatimOut|verbatimwrite"
# A command is one after an odd run of backslashes (`\\input` is a line break, then text); a
# control word ends at the first non-letter, so `\input@path` and `\write18` are `\input`,
# `\write`. `\begin` goes only before an environment that writes files or runs code.
_COMMAND = re.compile(
    r"(?<!\\)((?:\\\\)*)\\(?:(?:"
    + "|".join(sorted(map(re.escape, _DANGEROUS), key=len, reverse=True))
    + r")(?![A-Za-z])|(?:begin|end)(?=\s*\{\s*(?:"
    + _WRITING_ENVIRONMENTS
    + r")))"
)
_SAFE_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_:.+/-]{0,99}")
_FIELD_NAME = re.compile(r"[a-z][a-z0-9_-]*")
_ENTRY_TYPE = re.compile(r"[a-z]+")
_DROPPED_FIELDS = {"crossref", "xref", "xdata"}  # they name entries this file does not have


@dataclass(frozen=True, slots=True)
class _Source:
    """A source's own BibTeX entry as parsed: type, key and (name, value) fields."""

    kind: str
    key: str
    fields: tuple[tuple[str, str], ...]


def defuse(text: str) -> str:
    """`text` without the commands of `_DANGEROUS` and with `^^` split, to a fixed point (so
    dropping `\\input` from `\\in\\inputput` cannot leave a new one behind)."""
    if "\\" not in text and "^^" not in text:
        return text
    while True:
        cleaned = _COMMAND.sub(r"\1", text.replace("^^", "^{}^"))
        if cleaned == text:
            return text
        text = cleaned


def escape_text(text: str) -> str:
    """`text` safe inside a BibTeX field: specials escaped, `$...$` math kept (defused)."""
    out: list[str] = []
    pos = 0
    for match in _MATH.finditer(text):
        out.append(_escape_plain(text[pos : match.start()]))
        math = match.group(0)
        out.append(defuse(math) if _balanced(math) else _escape_plain(math))
        pos = match.end()
    out.append(_escape_plain(text[pos:]))
    return " ".join("".join(out).split())


def _escape_plain(text: str) -> str:
    return text.translate(_SPECIAL_TABLE)


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


def source_entry(paper: Paper) -> _Source | None:
    """The paper's own BibTeX entry if it parses alone as exactly one entry with a title and
    a usable type; None means "generate one". Keys that could not be cited (`\\input{x`) are
    dropped here and replaced by a generated key."""
    text = paper.bibtex.strip()
    if not text.startswith("@"):
        return None
    # pybtex is imported on the first source entry, not with the bot (it costs ~40 ms).
    from pybtex.database.input.bibtex import Parser  # type: ignore[import-untyped]
    from pybtex.exceptions import PybtexError  # type: ignore[import-untyped]

    try:
        entries = list(Parser().parse_string(text).entries.items())
        if len(entries) != 1:
            return None
        [(key, entry)] = entries
        people = [
            (role.lower(), " and ".join(map(str, names))) for role, names in entry.persons.items()
        ]
        fields = [(name.lower(), str(value)) for name, value in entry.fields.items()]
    except PybtexError as exc:
        log.debug("source BibTeX of %s does not parse (%s): generating one", paper.id, exc)
        return None
    fields = [
        (n, defuse(v)) for n, v in fields if _FIELD_NAME.fullmatch(n) and n not in _DROPPED_FIELDS
    ]
    people = [(n, defuse(v)) for n, v in people if _FIELD_NAME.fullmatch(n)]
    kind = str(entry.type).lower()
    titled = [f for f in fields if f[0] == "title"]
    usable = _ENTRY_TYPE.fullmatch(kind) and all(_balanced(v) for _, v in fields + people)
    if not titled or not usable:
        return None
    rest = [f for f in fields if f[0] != "title"]
    return _Source(kind, key if _SAFE_KEY.fullmatch(key) else "", (*titled, *people, *rest))


def _unique_keys(wanted: dict[str, str]) -> dict[str, str]:
    """Paper id -> key: a wanted key is kept when no other paper wants it (ignoring case, as
    BibTeX does); sharers get `a`, `b`... in paper id order, skipping keys already taken."""
    groups: dict[str, list[str]] = {}
    for pid in sorted(wanted):
        groups.setdefault(wanted[pid].lower(), []).append(pid)
    taken = {low for low, ids in groups.items() if len(ids) == 1}
    keys: dict[str, str] = {}
    for _low, ids in sorted(groups.items()):
        if len(ids) == 1:
            keys[ids[0]] = wanted[ids[0]]
            continue
        n = 0
        for pid in ids:
            while (key := wanted[pid] + _suffix(n)).lower() in taken:
                n += 1
            taken.add(key.lower())
            keys[pid] = key
            n += 1
    return keys


def _wanted(paper: Paper, source: _Source | None) -> str:
    return source.key if source is not None and source.key else base_key(paper)


def keys_for(papers: Sequence[Paper]) -> dict[str, str]:
    """Paper id -> citation key, unique within the export (suffixes by paper id order)."""
    return _unique_keys({p.id: _wanted(p, source_entry(p)) for p in papers})


def _suffix(i: int) -> str:
    letters = ""
    i += 1
    while i:
        i, rem = divmod(i - 1, 26)
        letters = chr(ord("a") + rem) + letters
    return letters


def _entry_text(kind: str, key: str, fields: Iterable[tuple[str, str]]) -> str:
    body = ",\n".join(f"  {name} = {{{defuse(value)}}}" for name, value in fields)
    return f"@{kind}{{{key},\n{body}\n}}"


def bibtex_entry(paper: Paper, key: str, source: _Source | None = None) -> str:
    """The paper's entry: its source's own (checked by `source_entry`), or a generated
    `@inproceedings` (`@misc` without a venue)."""
    if source is not None:
        return _entry_text(source.kind, key, source.fields)
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
    return _entry_text("inproceedings" if paper.venue else "misc", key, fields)


def layout(entries: Sequence[Entry]) -> Layout:
    papers = [e.paper for e in entries]
    sources = {p.id: source_entry(p) for p in papers}
    keys = _unique_keys({p.id: _wanted(p, sources[p.id]) for p in papers})
    items = [bibtex_entry(p, keys[p.id], sources[p.id]) + "\n" for p in papers]
    return Layout("", items, sep="\n")


def to_bibtex(entries: Sequence[Entry]) -> str:
    return layout(entries).text()

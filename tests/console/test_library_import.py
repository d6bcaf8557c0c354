"""`/library import FILE` in the console and `python -m bot library import FILE --user ID`:
the same matching, saving and answers as on Discord; a bad file saves nothing."""

from __future__ import annotations

import io
from pathlib import Path

from bot.console.cli import main
from tests.console.test_library import console_for

BIB = b"""@article{a, title = {Optimal Transport Maps}, author = {Writer1, Ann}}
@article{b, title = {A paper this corpus lacks}}
"""


def test_console_imports_a_file_then_exports_ris(tmp_path: Path) -> None:
    console, out, _ = console_for(tmp_path)
    path = tmp_path / "zotero.bib"
    path.write_bytes(BIB)
    console.handle(f"/library import {path}")
    text = out.getvalue()
    assert "Imported zotero.bib (BibTeX, 2 entries): 1 paper found in this corpus, 1 added" in text
    assert '1 entry matched no paper here (by id, arXiv id, DOI or title): "A paper this' in text
    console.handle("/library show")
    assert "1 saved" in out.getvalue()
    target = tmp_path / "out.ris"
    console.handle(f"/library export ris {target}")
    assert "TI  - Optimal transport maps" in target.read_text(encoding="utf-8")
    console.handle(f"/library import {tmp_path / 'missing.bib'}")
    assert "Nothing was imported: cannot read" in out.getvalue()


def _cli(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    _console, _out, corpus = console_for(tmp_path)
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    out, err = io.StringIO(), io.StringIO()
    code = main(["--corpus", str(corpus), "library", "import", *args, "--url", url], out, err)
    return code, out.getvalue(), err.getvalue()


def test_cli_imports_for_a_member_and_refuses_a_broken_file(tmp_path: Path) -> None:
    good = tmp_path / "ok.bib"
    good.write_bytes(BIB)
    code, out, err = _cli(tmp_path, str(good), "--user", "42")
    assert code == 0, err
    assert "1 added to your library" in out
    code, out, _err = _cli(tmp_path, str(good), "--user", "42")
    assert "0 added to your library, 1 already there." in out
    broken = tmp_path / "broken.bib"
    broken.write_bytes(BIB + b"@article{c, title = {cut")
    code, out, err = _cli(tmp_path, str(broken), "--user", "7")
    assert code == 2
    assert err.startswith("error: Nothing was imported: the BibTeX does not parse")

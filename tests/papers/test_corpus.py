import json
from pathlib import Path

import pytest

from bot.papers.corpus import (
    CorpusError,
    ProblemKind,
    detect_format,
    load_corpus,
    load_file,
    venue_from_filename,
)
from tests.conftest import ICML, TEST_DATA, shared_path


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_project_jsonl_loads_the_icml_data():
    report = load_corpus([ICML])
    assert len(report.papers) == 19
    assert report.skipped == 0
    assert not report.problems
    paper = report.papers[0]
    assert paper.venue == "ICML 2026"
    assert paper.year == 2026
    assert paper.title_derived
    assert paper.authors == ()
    assert len({p.id for p in report.papers}) == 19


def test_paperlist_format_splits_authors_and_drops_rejects():
    path = TEST_DATA / "iclr2018_sample.json"
    assert detect_format(path) == "paperlist"
    report = load_file(path)
    assert [p.status for p in report.papers] == ["Poster"] * 3
    assert report.skipped == 2
    paper = report.papers[0]
    assert paper.venue == "ICLR 2018"
    assert paper.year == 2018
    assert paper.id.startswith("iclr2018_sample/")
    assert len(paper.authors) > 1
    assert all(a == a.strip() for a in paper.authors)
    assert paper.link("page").startswith("https://")
    assert paper.keywords


def test_beir_format():
    path = TEST_DATA / "beir_sample_corpus.jsonl"
    assert detect_format(path) == "beir"
    report = load_file(path)
    assert len(report.papers) == 5
    assert report.papers[0].id == "4983"


def test_malformed_jsonl_lines_are_reported_and_skipped(tmp_path):
    good = {"id": "p1", "title": "Good paper", "abstract": "About graphs.", "venue": "X"}
    lines = [
        json.dumps(good),
        '{"id": "p2", "title": "truncated',
        json.dumps({"id": "p3", "title": 42, "abstract": "x"}),
        json.dumps({"id": "p4"}),
        json.dumps(["not", "an", "object"]),
        json.dumps(good),
        json.dumps({"id": "p5", "title": "Yr", "abstract": "a", "year": "soon"}),
    ]
    path = write(tmp_path / "c.jsonl", "\n".join(lines) + "\n")
    report = load_file(path)
    assert [p.id for p in report.papers] == ["p1"]
    text = "\n".join(map(str, report.problems))
    assert f"{path}:2: malformed JSON" in text
    assert f"{path}:3: title must be a string" in text
    assert f"{path}:4: paper 'p4' has neither title nor abstract" in text
    assert f"{path}:5: expected an object" in text
    assert f"{path}:6: duplicate id 'p1' dropped" in text
    assert f"{path}:7: year must be a number" in text
    assert report.skipped == 6


def test_invalid_utf8_and_huge_lines_are_skipped(tmp_path):
    good = json.dumps({"id": "ok", "title": "T", "abstract": "A"}).encode()
    huge = b'{"id": "big", "title": "' + b"x" * 1_200_000 + b'"}'
    path = write(tmp_path / "bad.jsonl", b"\xff\xfe{bad\n" + good + b"\n" + huge + b"\n")
    report = load_file(path)
    assert [p.id for p in report.papers] == ["ok"]
    assert any(":1: not valid UTF-8" in p for p in map(str, report.problems))
    assert any(":3: line of" in p and "too long" in p for p in map(str, report.problems))


def test_truncated_paperlist_keeps_good_records(tmp_path):
    text = (TEST_DATA / "iclr2018_sample.json").read_text(encoding="utf-8")
    lines = text.splitlines()
    broken = "\n".join([lines[0], lines[1], lines[2][: len(lines[2]) // 2]])
    path = write(tmp_path / "iclr2018.json", broken)
    report = load_file(path)
    assert len(report.papers) == 1
    assert any(f"{path}:3: malformed JSON" in p for p in map(str, report.problems))


def test_paperlist_wrong_types(tmp_path):
    path = write(
        tmp_path / "colm2025.json",
        json.dumps(
            [
                {"id": "a", "title": "T", "abstract": "A", "author": 7},
                {"id": "b", "title": "T2", "abstract": "A2", "author": "X;Y", "status": "Poster"},
            ]
        ),
    )
    report = load_file(path)
    assert [p.id for p in report.papers] == ["colm2025/b"]
    assert any("author must be a string or a list" in p for p in map(str, report.problems))


def test_empty_corpus_is_a_clear_fatal_error(tmp_path):
    path = write(tmp_path / "empty.jsonl", "\n\n")
    with pytest.raises(CorpusError, match=r"no usable paper in .*empty\.jsonl"):
        load_corpus([path])
    with pytest.raises(CorpusError, match="no such file"):
        load_corpus([tmp_path / "missing.jsonl"])


def test_several_files_keep_their_venues():
    report = load_corpus([ICML, TEST_DATA / "iclr2018_sample.json"])
    venues = {p.venue for p in report.papers}
    assert venues == {"ICML 2026", "ICLR 2018"}
    assert "loaded 22 papers from 2 file(s)" in report.summary()


def test_venue_names_from_files():
    assert venue_from_filename(Path("nips2018.json")) == ("NeurIPS 2018", 2018)
    assert venue_from_filename(Path("corl2025.json")) == ("CoRL 2025", 2025)
    assert venue_from_filename(Path("misc.json")) == ("misc", None)


def test_all_shared_paperlists_load():
    folder = shared_path("paperlists")
    report = load_corpus(sorted(folder.glob("*.json")))
    # 4,042 records; ICLR 2018's 565 rejected or withdrawn submissions are left out, and five
    # ICLR 2018 workshop papers are merged with their NeurIPS 2018 versions (bot.papers.versions).
    assert len(report.papers) == 4042 - 565 - 5
    assert sum(1 for p in report.papers if p.aliases) == 5
    assert not [p for p in map(str, report.problems) if "duplicate" in p]
    nips = [p for p in report.papers if p.venue == "NeurIPS 2018"]
    assert len(nips) == 1009  # the record without abstract or authors still has a title


def test_absurd_titles_and_abstracts_are_cut_with_a_warning(tmp_path, caplog):
    from bot.papers.formats import MAX_ABSTRACT, MAX_TITLE

    fine = {"id": "ok", "title": "A title", "abstract": "word " * 100}
    huge = {"id": "big", "title": "long " * 600, "abstract": "$x$ word " * 20_000}
    path = write(tmp_path / "x.jsonl", json.dumps(fine) + "\n" + json.dumps(huge) + "\n")
    report = load_corpus([path])
    small, big = report.papers
    assert small.abstract == fine["abstract"].strip()
    assert len(big.title) <= MAX_TITLE + 1
    assert len(big.abstract) <= MAX_ABSTRACT + 1
    assert big.abstract.endswith("word…")
    assert report.skipped == 0
    assert [p.kind for p in report.problems] == [ProblemKind.CUT, ProblemKind.CUT]
    assert [str(p) for p in report.problems] == [
        f"{path}:2: title of 2,999 characters cut to 1,000",
        f"{path}:2: abstract of 179,999 characters cut to 20,000",
    ]
    assert f"{path}:2: abstract of 179,999" in caplog.text

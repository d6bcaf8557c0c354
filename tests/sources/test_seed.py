import json

from bot.sources.seed import convert, derive_headline, links_in, read_seed, seed_records
from tests.conftest import ICML, PROJECT_ROOT

RAW = PROJECT_ROOT / "data" / "icml2026-abstracts.txt"


def test_committed_data_matches_the_conversion(tmp_path):
    out = tmp_path / "icml2026.jsonl"
    assert convert(RAW, out) == 19
    assert out.read_text(encoding="utf-8") == ICML.read_text(encoding="utf-8")


def test_records_are_honest():
    records = seed_records(read_seed(RAW))
    assert len(records) == 19
    for record in records:
        assert record["authors"] == []
        assert record["title_derived"] is True
        assert record["venue"] == "ICML 2026"
        assert record["year"] == 2026
        assert record["abstract"] in RAW.read_text(encoding="utf-8")
        assert len(record["title"]) <= 100
    assert len({r["id"] for r in records}) == 19


def test_headlines_name_the_method():
    titles = [r["title"] for r in seed_records(read_seed(RAW))]
    for name in ("AG-REPA", "dWorldEval", "SOPS", "RepetitionCurse", "CATArena", "DuRP"):
        assert any(t.startswith(name + ":") or t == name for t in titles), name


def test_headline_rules():
    headline = derive_headline(
        "Intro. We propose FooNet, a fast sparse attention layer for long documents."
    )
    assert headline == "FooNet: fast sparse attention layer for long documents"
    assert derive_headline("We introduce Gradient Aware Things (GAT), a method.").startswith(
        "GAT: Gradient Aware Things"
    )
    assert derive_headline("Nothing named here at all. More.") == "Nothing named here at all"


def test_headlines_read_as_finished_titles():
    """A complete phrase under 90 characters: no "…", no whole first sentence, no "this"."""
    abstracts = read_seed(RAW)
    for abstract, record in zip(abstracts, seed_records(abstracts), strict=True):
        title = record["title"]
        assert len(title) < 90, title
        assert not title.endswith(("…", ".")), title
        first = abstract.split(". ")[0]
        assert title != first, title
        words = [w.strip(",.:").lower() for w in title.split()]
        assert not {"this", "these"} & set(words), title
        assert words[-1] not in {"a", "an", "the", "of", "for", "to", "and", "with"}, title


def test_links_are_found_and_cleaned():
    text = "Code: https://github.com/a/b.git. Page: [https://x.github.io/](https://x.github.io/)"
    assert links_in(text) == [
        {"kind": "code", "url": "https://github.com/a/b.git"},
        {"kind": "project", "url": "https://x.github.io/"},
    ]


def test_jsonl_is_valid():
    for line in ICML.read_text(encoding="utf-8").splitlines():
        assert json.loads(line)["id"].startswith("icml2026/")

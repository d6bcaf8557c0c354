"""Versions of one work merged into one paper (`bot.papers.versions`), read from corpus files."""

from __future__ import annotations

import json
from pathlib import Path

from bot.config import SearchSettings
from bot.papers import grouping, versions
from bot.papers.corpus import LoadReport, iter_corpus, load_corpus
from bot.papers.records import Link, Paper
from bot.search.engine import SearchEngine

PREPRINT = {
    "id": "arxiv:2401.01234",
    "title": "Sinkhorn Plans for {World} Models",
    "authors": ["Ada Lovelace", "Alan Turing", "Grace Hopper"],
    "abstract": "We learn world models with entropic optimal transport plans.",
    "venue": "arXiv",
    "year": 2024,
    "links": [
        {"kind": "page", "url": "https://arxiv.org/abs/2401.01234"},
        {"kind": "pdf", "url": "https://arxiv.org/pdf/2401.01234"},
    ],
    "added": "2024-01-03T06:00:00Z",
}
ACCEPTED = {
    "id": "Xy12",
    "title": "Sinkhorn plans for world models",
    "author": "Ada Lovelace; Alan M. Turing; Grace Hopper",
    "abstract": "We learn world models with entropic optimal transport plans, at scale.",
    "status": "Oral",
    "site": "https://openreview.net/forum?id=Xy12",
}
OTHER = {
    "id": "Zz99",
    "title": "Sinkhorn plans for world models",  # same title, other authors: another paper
    "author": "Someone Else; Nobody Here",
    "abstract": "Unrelated.",
    "status": "Poster",
    "site": "https://openreview.net/forum?id=Zz99",
}


def _files(tmp_path: Path, listed: list[dict[str, object]]) -> list[Path]:
    arxiv = tmp_path / "arxiv-ml.jsonl"
    arxiv.write_text(json.dumps(PREPRINT) + "\n", encoding="utf-8")
    conference = tmp_path / "iclr2026.json"
    conference.write_text(json.dumps(listed), encoding="utf-8")
    return [arxiv, conference]


def test_a_preprint_and_its_accepted_record_are_one_paper(tmp_path: Path) -> None:
    merges: list[grouping.Merge] = []
    papers = list(iter_corpus(_files(tmp_path, [ACCEPTED, OTHER]), (), LoadReport(), set(), merges))
    assert len(papers) == 2
    merged = next(p for p in papers if "iclr2026/Xy12" in (p.id, *p.aliases))
    # The id first seen is kept: a static list's records count as there from the start.
    assert merged.id == "iclr2026/Xy12"
    assert merged.aliases == ("arxiv:2401.01234",)
    assert merged.venue == "ICLR 2026"
    assert merged.status == "Oral"
    assert versions.accepted_note(merged) == "accepted at ICLR 2026 (oral)"
    assert merged.link("page") == "https://openreview.net/forum?id=Xy12"
    assert merged.link("arxiv") == "https://arxiv.org/abs/2401.01234"
    assert merged.added is None  # the static list was there from the start: never "new"
    assert [m.reasons for m in merges] == [("title",)]


def test_lookups_by_either_id_find_the_merged_paper(tmp_path: Path) -> None:
    report = load_corpus(_files(tmp_path, [ACCEPTED]))
    engine = SearchEngine(report.papers, settings=SearchSettings())
    assert len(report.papers) == 1
    for ref in ("arxiv:2401.01234", "iclr2026/Xy12", "Xy12"):
        assert engine.paper(ref).id == "iclr2026/Xy12"
        assert engine.has_paper(ref) or ref == "Xy12"
    assert engine.search("sinkhorn world").total == 1


def test_the_id_first_seen_is_kept() -> None:
    pre = Paper("arxiv:1", "T", "a", "arXiv", added="2026-01-01T00:00:00Z")
    acc = Paper(
        "openreview:F", "T", "a", "ICLR 2026", status="Poster", added="2026-05-01T00:00:00Z"
    )
    merged = versions.merge_group([acc, pre])
    assert (merged.id, merged.aliases, merged.venue) == ("arxiv:1", ("openreview:F",), "ICLR 2026")
    assert merged.added == "2026-01-01T00:00:00Z"  # not "new" again when accepted
    assert versions.accepted_note(merged) == "accepted at ICLR 2026 (poster)"
    assert versions.accepted_note(pre) is None


def test_without_a_version_nothing_changes(tmp_path: Path) -> None:
    report = load_corpus(_files(tmp_path, [OTHER]))
    assert sorted(p.id for p in report.papers) == ["arxiv:2401.01234", "iclr2026/Zz99"]
    assert all(not p.aliases for p in report.papers)


def test_identifiers_win_over_titles() -> None:
    base = Paper("arxiv:2401.01234", "A", "x", "arXiv", authors=("A B",))
    renamed = Paper(
        "openreview:F1",
        "Completely different title",
        "y",
        "ICLR 2026",
        bibtex="@article{k, eprint = {2401.01234v2}, archivePrefix = {arXiv}}",
    )
    assert versions.same_work(base, renamed) == "arxiv id"
    doi = Paper(
        "x/1", "B", "z", "V", links=(Link("doi", "https://doi.org/10.48550/arXiv.2401.01234"),)
    )
    assert versions.same_work(base, doi) == "arxiv id"
    paperlist = Paper(
        "iclr2026/F1",
        "C",
        "z",
        "ICLR 2026",
        links=(Link("page", "https://openreview.net/forum?id=F1"),),
    )
    assert versions.same_work(renamed, paperlist) == "openreview id"


def test_a_follow_up_by_the_same_authors_is_not_a_version() -> None:
    authors = ("Alberto Metelli", "Matteo Papini", "Marcello Restelli")
    first = Paper(
        "n/1",
        "Policy Optimization via Importance Sampling",
        "trust region offline importance weights bound",
        "NeurIPS 2018",
        authors=authors,
    )
    later = Paper(
        "i/2",
        "Optimistic Policy Optimization via Multiple Importance Sampling",
        "bandit regret arms optimism exploration",
        "ICML 2019",
        authors=authors,
    )
    assert versions.same_work(first, later) is None
    reworded = Paper(
        "i/3",
        "Importance Sampling for Policy Optimization",
        first.abstract,
        "ICML 2019",
        authors=authors,
    )
    assert versions.same_work(first, reworded) == "similar title"
    # Two records of one venue with similar titles are a series, not versions.
    sibling = Paper(
        "n/4",
        "Policy Optimization via Importance Sampling II",
        first.abstract,
        first.venue,
        authors=authors,
    )
    assert versions.same_work(first, sibling) is None


def test_one_record_per_file_in_a_work() -> None:
    a = Paper("iclr2018/a", "Withdrawn paper title here", "x", "ICLR 2018", authors=("A B",))
    b = Paper("iclr2018/b", "Withdrawn paper title here", "x", "ICLR 2018", authors=("A B",))
    assert len(grouping.merge_versions([a, b], [0, 0])) == 2
    assert len(grouping.merge_versions([a, b], [0, 1])) == 1


def test_a_merged_record_survives_the_paper_store(tmp_path: Path) -> None:
    from bot.search.files.paperstore import PaperStore, record_bytes
    from bot.search.files.storewriter import save_store

    merged = load_corpus(_files(tmp_path, [ACCEPTED])).papers[0]
    plain = Paper("p/1", "Plain", "text", "V")
    assert len(json.loads(record_bytes(plain))) == 13  # unmerged records: as before
    save_store(tmp_path / "store", [merged, plain], {"k": 1})
    store = PaperStore(tmp_path / "store", {"k": 1})
    assert store[0] == merged
    assert store[1] == plain
    assert store.aliases == {"arxiv:2401.01234": "iclr2026/Xy12"}
    assert SearchEngine(store, settings=SearchSettings()).paper("arxiv:2401.01234").id == merged.id


def test_new_lists_a_fetched_preprint_and_its_accepted_record_once(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from bot.search.recent import newest

    # The accepted record as an OpenReview fetch writes it, fetched after the preprint.
    accepted = dict(
        PREPRINT,
        id="openreview:Xy12",
        title="Sinkhorn plans for world models",
        venue="ICLR 2026",
        status="Oral",
        links=[{"kind": "page", "url": "https://openreview.net/forum?id=Xy12"}],
        added="2024-01-20T06:00:00Z",
    )
    openreview = tmp_path / "iclr2026.jsonl"
    openreview.write_text(json.dumps(accepted) + "\n", encoding="utf-8")
    files = [_files(tmp_path, [])[0], openreview]
    engine = SearchEngine(load_corpus(files).papers, settings=SearchSettings())
    page = newest(engine, 30, now=datetime(2024, 1, 25, tzinfo=UTC))
    assert [hit.paper.id for hit in page.hits] == ["arxiv:2401.01234"]  # first seen: the preprint
    assert page.hits[0].paper.venue == "ICLR 2026"
    assert engine.paper("openreview:Xy12").id == "arxiv:2401.01234"

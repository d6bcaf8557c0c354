"""`/library import` and the RIS / CSL-JSON exports through the loopback Discord, and a merged
paper (an arXiv preprint and its accepted record) as members see it: both links, the
"accepted at" line, `/paper` by either id, a library entry saved under the preprint's id."""

from __future__ import annotations

import json

import pytest
import rispy

from bot.app.client import PaperBot
from bot.config import SearchSettings
from bot.library.actions import now
from bot.library.store import Library
from bot.papers.corpus import load_corpus
from bot.search.engine import SearchEngine
from tests.app.exts.library import test_library
from tests.app.helpers import answered
from tests.fakediscord import FakeDiscord, InteractionHandle
from tests.fakediscord.rules_attachments import FakeFile

PREPRINT = {
    "id": "arxiv:2401.01234",
    "title": "Sinkhorn Plans for World Models",
    "authors": ["Ada Lovelace", "Alan Turing"],
    "abstract": "We learn world models with entropic optimal transport plans.",
    "venue": "arXiv",
    "year": 2024,
    "links": [{"kind": "page", "url": "https://arxiv.org/abs/2401.01234"}],
    "added": "2024-01-03T06:00:00Z",
}
LISTED = [
    {
        "id": "Xy12",
        "title": "Sinkhorn plans for world models",
        "author": "Ada Lovelace; Alan Turing",
        "abstract": "We learn world models with entropic optimal transport plans, at scale.",
        "status": "Oral",
        "site": "https://openreview.net/forum?id=Xy12",
    },
    {
        "id": "Ab34",
        "title": "Sparse Attention: A Study in {BERT}",
        "author": "Grace Hopper",
        "abstract": "Attention that is sparse.",
        "status": "Poster",
        "site": "https://openreview.net/forum?id=Ab34",
        "bibtex": "@inproceedings{hopper2026, title={Sparse Attention}, doi={10.5555/sparse.1}}",
    },
    {
        "id": "Cd56",
        "title": "Graph Rewiring at Scale",
        "author": "Alan Kay",
        "abstract": "Rewiring graphs.",
        "status": "Poster",
        "site": "https://openreview.net/forum?id=Cd56",
    },
]
MERGED = "iclr2026/Xy12"  # the accepted list is static: its id was there first

BIB = rb"""@article{lovelace2024,
  title = {Sinkhorn Plans for World Models},
  author = {Lovelace, Ada and Turing, Alan},
  eprint = {2401.01234v2}, archivePrefix = {arXiv}}
@inproceedings{hopper, title = {Sparse Attention: a study in {BERT}}, author = {Hopper, Grace}}
@misc{nowhere, title = {A Paper Nobody Here Wrote}}
"""
RIS = (
    b"TY  - CONF\r\nTI  - Graph rewiring at scale\r\nAU  - Kay, Alan\r\nER  - \r\n"
    b"TY  - JOUR\r\nTI  - Something Else Entirely\r\nDO  - 10.5555/sparse.1\r\nER  - \r\n"
    b"TY  - JOUR\r\nTI  - Unknown Work\r\nER  - \r\n"
)
CSL = json.dumps(
    [
        {
            "id": "x",
            "type": "article",
            "title": "Other",
            "URL": "http://arxiv.org/abs/2401.01234v1",
        },
        {"id": "y", "type": "article", "title": "Graph Rewiring at Scale"},
        {"id": "z", "type": "article", "title": "Not in this corpus"},
    ]
).encode()


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> SearchEngine:
    folder = tmp_path_factory.mktemp("corpus")
    (folder / "arxiv-ml.jsonl").write_text(json.dumps(PREPRINT) + "\n", encoding="utf-8")
    (folder / "iclr2026.json").write_text(json.dumps(LISTED), encoding="utf-8")
    report = load_corpus([folder / "arxiv-ml.jsonl", folder / "iclr2026.json"])
    return SearchEngine(report.papers, settings=SearchSettings())


# A bot on a fresh database, as the library tests make it, over this module's `engine`.
env = test_library.env


async def _text(handle: InteractionHandle) -> str:
    """The answer's text, whether it came at once or after "thinking…"."""
    reply = await answered(handle, ephemeral=True)
    if reply.type == 5:
        reply = await handle.edit()
    return reply.embed.get("description", "") if reply.embeds else reply.content


async def _saved(bot: PaperBot, user: str) -> list[str]:
    return sorted(s.paper_id for s in await Library(bot.storage).all(int(user)))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "data", "found"),
    [
        ("My Library.bib", BIB, [MERGED, "iclr2026/Ab34"]),
        ("export.ris", RIS, ["iclr2026/Ab34", "iclr2026/Cd56"]),
        ("zotero.json", CSL, [MERGED, "iclr2026/Cd56"]),
    ],
    ids=["bibtex", "ris", "csljson"],
)
async def test_import_each_format(
    env: tuple[FakeDiscord, PaperBot], name: str, data: bytes, found: list[str]
) -> None:
    fake, bot = env
    text = await _text(await fake.slash("library import", {"file": FakeFile(name, data)}))
    assert f"Imported `{name}`" in text
    assert "2 papers found in this corpus, 2 added to your library." in text
    assert "1 entry matched no paper here" in text
    assert await _saved(bot, fake.alice.id) == sorted(found)
    again = await _text(await fake.slash("library import", {"file": FakeFile(name, data)}))
    assert "0 added to your library, 2 already there." in again
    assert await _saved(bot, fake.alice.id) == sorted(found)


async def test_unmatched_entries_are_listed(env: tuple[FakeDiscord, PaperBot]) -> None:
    fake, _bot = env
    many = b"".join(b"@misc{k%d, title={Missing Paper Number %d}}\n" % (i, i) for i in range(8))
    text = await _text(await fake.slash("library import", {"file": FakeFile("a.bib", many)}))
    assert "0 papers found in this corpus, 0 added" in text
    assert '8 entries matched no paper here (by id, arXiv id, DOI or title): "Missing Paper' in text
    assert 'Number 4" and 3 more.' in text


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("bad.bib", BIB + b"@article{broken, title = {no end", "the BibTeX does not parse"),
        ("bad.ris", RIS + b"TY  - JOUR\r\nTI  - cut short\r\n", "the RIS does not parse"),
        ("bad.json", b'[{"title": "x"', "the CSL-JSON does not parse"),
        ("photo.png", b"\x89PNG\r\n", "not a reference file the bot reads"),
        ("latin1.bib", "@misc{k, title={Café}}".encode("latin-1"), "is not UTF-8 text"),
    ],
    ids=["bibtex", "ris", "csljson", "png", "encoding"],
)
async def test_a_bad_file_saves_nothing(
    env: tuple[FakeDiscord, PaperBot], name: str, data: bytes, says: str
) -> None:
    fake, bot = env
    text = await _text(await fake.slash("library import", {"file": FakeFile(name, data)}))
    assert text.startswith("Nothing was imported")
    assert says in text
    assert await _saved(bot, fake.alice.id) == []


async def test_a_too_large_file_is_refused_before_download(
    env: tuple[FakeDiscord, PaperBot],
) -> None:
    fake, bot = env
    big = FakeFile("huge.bib", BIB, size=9 * 2**20)
    text = await _text(await fake.slash("library import", {"file": big}))
    assert "is 9.0 MiB; the bot reads files of up to 8 MiB" in text
    assert not [c for c in fake.requests if c.path.startswith("/cdn")]
    assert await _saved(bot, fake.alice.id) == []


async def test_a_full_library_takes_nothing_from_the_file(
    env: tuple[FakeDiscord, PaperBot],
) -> None:
    fake, bot = env
    store = Library(bot.storage)  # type: ignore[arg-type]
    for i in range(bot.settings.library.max_saved - 1):
        await store.save(int(fake.alice.id), f"gone/{i}", now())
    text = await _text(await fake.slash("library import", {"file": FakeFile("a.bib", BIB)}))
    assert "Nothing was imported: 2 new papers would take your library past" in text
    assert await store.count(int(fake.alice.id)) == bot.settings.library.max_saved - 1


async def test_ris_and_csljson_exports_parse_back_and_import_again(
    env: tuple[FakeDiscord, PaperBot],
) -> None:
    fake, bot = env
    store = Library(bot.storage)  # type: ignore[arg-type]
    for paper_id in ("arxiv:2401.01234", "iclr2026/Ab34", "iclr2026/Cd56"):
        await store.save(int(fake.alice.id), paper_id, now())
    ris = await answered(await fake.slash("library export", {"format": "ris"}), type=4)
    assert ris.uploads[0].filename == "library.ris"
    records = rispy.loads(ris.uploads[0].data.decode())
    merged = next(r for r in records if r["title"] == "Sinkhorn plans for world models")
    assert merged["type_of_reference"] == "CONF"
    assert merged["secondary_title"] == "ICLR 2026"
    assert merged["authors"] == ["Lovelace, Ada", "Turing, Alan"]
    assert merged["urls"] == ["https://openreview.net/forum?id=Xy12"]
    csl = await answered(await fake.slash("library export", {"format": "csljson"}), type=4)
    assert csl.uploads[0].filename == "library.json"
    items = {item["id"]: item for item in json.loads(csl.uploads[0].data)}
    assert set(items) == {MERGED, "iclr2026/Ab34", "iclr2026/Cd56"}
    assert items[MERGED]["number"] == "arXiv:2401.01234"
    assert items[MERGED]["author"][0] == {"family": "Lovelace", "given": "Ada"}
    assert items["iclr2026/Ab34"]["DOI"] == "10.5555/sparse.1"
    for upload in (ris.uploads[0], csl.uploads[0]):  # back in, as another member
        file = FakeFile(upload.filename, upload.data)
        text = await _text(await fake.slash("library import", {"file": file}, user=fake.admin))
        assert "3 papers found in this corpus" in text
    assert await _saved(bot, fake.admin.id) == sorted(items)


async def test_a_merged_paper_by_either_id(env: tuple[FakeDiscord, PaperBot]) -> None:
    fake, bot = env
    for ref in ("arxiv:2401.01234", MERGED, "Xy12"):
        reply = await answered(await fake.slash("paper", {"paper": ref}), type=4)
        embed = reply.embed
        assert embed["url"] == "https://openreview.net/forum?id=Xy12"
        fields = {f["name"]: f["value"] for f in embed["fields"]}
        assert "accepted at ICLR 2026 (oral)" in fields["Venue"]
        assert "https://arxiv.org/abs/2401.01234" in fields["Links"]
        assert "https://openreview.net/forum?id=Xy12" in fields["Links"]
    # Saved under the preprint's id before the merge: the library shows the merged paper.
    await Library(bot.storage).save(int(fake.alice.id), "arxiv:2401.01234", now())  # type: ignore[arg-type]
    shown = await answered(await fake.slash("library show"), type=4)
    assert "Sinkhorn plans for world models" in shown.embed["description"]
    assert "no longer in the corpus" not in shown.embed["description"]


async def test_an_entry_under_the_preprint_id_is_the_merged_paper(
    env: tuple[FakeDiscord, PaperBot],
) -> None:
    fake, bot = env
    await Library(bot.storage).save(int(fake.alice.id), "arxiv:2401.01234", now())  # type: ignore[arg-type]
    results = await answered(await fake.slash("search", {"query": "sinkhorn world"}), type=4)
    detail = await answered(await fake.select(results, "pb:open", [MERGED]), type=4)
    saved = await answered(await fake.click(detail, f"pb:save:{MERGED}"), type=4)
    assert "is already in your library" in saved.content
    read = await _text(
        await fake.slash("library read", {"paper": "Sinkhorn plans for world models"})
    )
    assert "Marked **Sinkhorn plans for world models** as read" in read
    assert await _saved(bot, fake.alice.id) == ["arxiv:2401.01234"]

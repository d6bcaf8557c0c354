"""Papers named in messages without Discord: the corpus lookup, the on-demand fetch through the
polite client (arXiv's recorded responses served on loopback; OpenReview's stand-in), and the
per-server switch of link replies on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime
from urllib.parse import unquote

import pytest
import pytest_asyncio
from aiohttp import web

from bot.config import PROJECT_ROOT, LinksSettings, SearchSettings, Settings
from bot.links import LinkReplies, OnDemand, find_papers
from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from bot.storage.store import Storage
from tests.fakesources import FakeOpenReview, LoopbackServer, note

RECORDED = PROJECT_ROOT.parent / "shared" / "sources" / "arxiv"
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


class RecordedArxiv(LoopbackServer):
    """arXiv's `/api/query` answering `id_list` look-ups with the recorded responses."""

    def __init__(self) -> None:
        super().__init__()
        self.bodies: dict[str, tuple[int, str]] = {}
        for path in RECORDED.glob("id_*.json"):
            data = json.loads(path.read_text(encoding="utf-8"))
            ids = unquote(data["url"].split("id_list=")[1].split("&")[0])
            self.bodies[ids] = (int(data["status_code"]), data["body"])

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/api/query", self.query)
        return app

    async def query(self, request: web.Request) -> web.Response:
        """Several ids: the entries of each id's recording, in one feed (as arXiv answers)."""
        ids = request.query.get("id_list", "").split(",")
        found = [self.bodies[i] for i in ids if i in self.bodies]
        status, body = found[0] if found else self.bodies["0000.0000"]
        for _status, other in found[1:]:
            entries = other[other.find("<entry>") : other.rfind("</entry>") + len("</entry>")]
            body = body.replace("</feed>", entries + "\n</feed>")
        self.log(request, status)
        return web.Response(status=status, text=body, content_type="application/atom+xml")


@pytest_asyncio.fixture
async def sources() -> AsyncIterator[tuple[RecordedArxiv, FakeOpenReview]]:
    if not RECORDED.is_dir():
        pytest.skip(f"needs {RECORDED} (the recorded arXiv responses)")
    arxiv, openreview = RecordedArxiv(), FakeOpenReview([note("XyZ98765ab", title="Forum Paper")])
    await arxiv.start()
    await openreview.start()
    yield arxiv, openreview
    await arxiv.stop()
    await openreview.stop()


def settings_for(arxiv: LoopbackServer, openreview: LoopbackServer) -> Settings:
    base = Settings()
    return replace(
        base,
        sources=replace(
            base.sources,
            arxiv_url=arxiv.url + "/api/query",
            openreview_url=openreview.url,
            arxiv_interval_seconds=0.0,
            retry_base_seconds=0.01,
            retry_max_seconds=0.02,
        ),
        links=LinksSettings(fetch_timeout_seconds=5.0),
    )


@pytest.fixture(scope="module")
def engine() -> SearchEngine:
    papers = [
        Paper(id="arxiv:1707.08567", title="Already Here", abstract="Local.", venue="arXiv"),
        Paper(
            id="nips2018/11127",
            title="Heavy Tails in Regression Problems",
            abstract="x.",
            venue="NeurIPS 2018",
        ),
    ]
    return SearchEngine(papers, settings=SearchSettings())


async def test_recorded_arxiv_papers_are_fetched_once(
    sources: tuple[RecordedArxiv, FakeOpenReview], engine: SearchEngine
) -> None:
    arxiv, openreview = sources
    fetcher = OnDemand(settings_for(arxiv, openreview))
    text = (
        "https://arxiv.org/abs/1605.08386v2, arXiv:1707.08567, astro-ph/0601001, 2104.12255, "
        'https://openreview.net/forum?id=XyZ98765ab and "Heavy Tails in Regression Problems"'
    )
    finding = await find_papers(text, engine, fetcher)
    by_key = {f.mention.key: f for f in finding.found}
    assert by_key["1707.08567"].in_corpus  # the corpus first: not asked for
    assert by_key["1605.08386"].source == "arXiv"
    assert by_key["1605.08386"].paper is not None
    assert by_key["1605.08386"].paper.title.startswith("Heat-bath random walks")
    assert by_key["astro-ph/0601001"].paper is not None
    assert by_key["2104.12255"].paper is None  # recorded only with its version: no entry
    assert by_key["XyZ98765ab"].paper is not None
    assert by_key["XyZ98765ab"].paper.title == "Forum Paper"
    assert by_key["Heavy Tails in Regression Problems"].paper == engine.paper("nips2018/11127")
    assert [r.query.get("id_list") for r in arxiv.requests] == [
        "1605.08386,astro-ph/0601001,2104.12255"
    ]
    again = await find_papers("1605.08386", engine, fetcher)
    assert again.found[0].paper is not None
    assert len(arxiv.requests) == 1  # kept: no second request
    assert fetcher.known("arxiv:1605.08386") is not None


async def test_a_source_that_fails_is_a_note_not_an_error(
    sources: tuple[RecordedArxiv, FakeOpenReview], engine: SearchEngine
) -> None:
    arxiv, openreview = sources
    fetcher = OnDemand(settings_for(arxiv, openreview))
    await arxiv.stop()
    finding = await find_papers("see 1605.08386", engine, fetcher)
    assert finding.found[0].paper is None
    assert finding.problems
    assert "arXiv did not answer" in finding.problems[0]


@pytest_asyncio.fixture
async def storage(database_url: str) -> AsyncIterator[Storage]:
    store = await Storage.open(database_url)
    yield store
    await store.close()


async def test_link_replies_switch(storage: Storage) -> None:
    replies = LinkReplies(storage)
    guild = (1 << 40) + 5  # past 32 bits, as Discord's ids are
    assert not await replies.enabled(guild)
    await replies.set(guild, True, NOW)
    await replies.set(guild + 1, True, NOW)
    await replies.set(guild + 1, False, NOW)
    assert await replies.enabled(guild)
    assert await replies.enabled_guilds() == {guild}


async def test_arxiv_gap_holds_across_fetches(
    sources: tuple[RecordedArxiv, FakeOpenReview], engine: SearchEngine
) -> None:
    arxiv, openreview = sources
    settings = settings_for(arxiv, openreview)
    gap = 0.2
    fetcher = OnDemand(
        replace(settings, sources=replace(settings.sources, arxiv_interval_seconds=gap))
    )
    await find_papers("1605.08386", engine, fetcher)
    await find_papers("astro-ph/0601001", engine, fetcher)
    first, second = arxiv.requests
    assert second.at - first.at >= gap * 0.95

"""Papers not in the corpus, fetched on demand from arXiv or OpenReview for "Find papers".

Through the project's one polite client (`bot.sources.http.PoliteClient`: User-Agent, arXiv's
3 s between calls, `Retry-After`) and its parsers (`arxiv.parse_feed`, `openreview.note_record`),
so a fetched paper is exactly the record `python -m bot fetch` would write. One message asks
arXiv once for all its ids (`id_list=a,b,c`) and OpenReview once per forum.

Bounded for a chat answer: one retry, and the whole fetch within `[links]
fetch_timeout_seconds` (15 s by default; the interaction is deferred meanwhile). A failure is a
note on the answer ("arXiv did not answer"), never an error for the whole message. Papers
fetched are kept (the last `KEPT`), so Save and a second Find papers need no new request.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from bot.config import Settings
from bot.papers.formats import RecordError, paper_from_project
from bot.papers.records import Paper
from bot.sources import arxiv, openreview
from bot.sources.http import FetchError, PoliteClient

log = logging.getLogger(__name__)
KEPT = 512  # fetched papers kept in memory, newest last
ARXIV_BATCH = 10  # ids per arXiv request (a message names at most 10 papers)


@dataclass
class Fetched:
    """What one on-demand fetch brought: papers by id (`arxiv:<id>`, `openreview:<forum>`)
    and the problems worth telling the member about."""

    papers: dict[str, Paper] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


class OnDemand:
    """The fetcher the Discord side and the console share; one per bot."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.kept: OrderedDict[str, Paper] = OrderedDict()
        self._lock = asyncio.Lock()  # one fetch at a time: arXiv asks for one connection
        self._last = 0.0  # when the last fetch ended (time.monotonic)

    def known(self, paper_id: str) -> Paper | None:
        """A paper fetched before (for Save), or None."""
        return self.kept.get(paper_id)

    def _keep(self, paper: Paper) -> None:
        self.kept[paper.id] = paper
        self.kept.move_to_end(paper.id)
        while len(self.kept) > KEPT:
            self.kept.popitem(last=False)

    async def fetch(self, arxiv_ids: Iterable[str], forums: Iterable[str]) -> Fetched:
        """The papers of these arXiv ids and OpenReview forums, from memory or the sources."""
        done = Fetched()
        want_arxiv = [i for i in dict.fromkeys(arxiv_ids) if not self._have(f"arxiv:{i}", done)]
        want_forums = [f for f in dict.fromkeys(forums) if not self._have(f"openreview:{f}", done)]
        if not want_arxiv and not want_forums:
            return done
        limit = self.settings.links.fetch_timeout_seconds
        sources = replace(self.settings.sources, max_retries=1, timeout_seconds=limit)
        async with self._lock:
            # arXiv's gap holds across fetches too: each fetch opens its own client.
            wait = sources.arxiv_interval_seconds - (time.monotonic() - self._last)
            if self._last and wait > 0:
                await asyncio.sleep(wait)
            try:
                async with asyncio.timeout(limit):
                    async with PoliteClient(
                        sources, interval=sources.arxiv_interval_seconds
                    ) as client:
                        if want_arxiv:
                            await self._arxiv(client, want_arxiv, done)
                        for forum in want_forums:
                            await self._forum(client, forum, done)
            except TimeoutError:
                done.problems.append(f"the sources did not answer within {limit:g} s")
            finally:
                self._last = time.monotonic()
        for paper in done.papers.values():
            self._keep(paper)
        return done

    def _have(self, paper_id: str, done: Fetched) -> bool:
        paper = self.kept.get(paper_id)
        if paper is not None:
            done.papers[paper_id] = paper
        return paper is not None

    async def _arxiv(self, client: PoliteClient, ids: list[str], done: Fetched) -> None:
        url = self.settings.sources.arxiv_url
        for start in range(0, len(ids), ARXIV_BATCH):
            batch = ids[start : start + ARXIV_BATCH]
            params: dict[str, str | int] = {"id_list": ",".join(batch), "max_results": len(batch)}
            try:
                response = await client.get(url, params, ok=(400,))
                page = arxiv.parse_feed(response.body)
            except (FetchError, arxiv.ArxivError) as exc:
                log.warning("on-demand arXiv fetch of %s failed: %s", batch, exc)
                done.problems.append(f"arXiv did not answer ({exc})")
                continue
            for record in page.records:
                self._add(record, "arXiv", done)

    async def _forum(self, client: PoliteClient, forum: str, done: Fetched) -> None:
        url = self.settings.sources.openreview_url.rstrip("/") + "/notes"
        try:
            response = await client.get(url, {"id": forum})
            notes = json.loads(response.body).get("notes") or []
        except (FetchError, ValueError, AttributeError) as exc:
            log.warning("on-demand OpenReview fetch of %s failed: %s", forum, exc)
            done.problems.append(f"OpenReview did not answer ({exc})")
            return
        for note in notes:
            if not isinstance(note, dict) or note.get("id") != forum:
                continue
            content = note.get("content")
            venue_id = ""
            if isinstance(content, dict) and isinstance(content.get("venueid"), dict):
                venue_id = str(content["venueid"].get("value") or "")
            try:
                record = openreview.note_record(note, venue_id)
            except openreview.MalformedNote as exc:
                done.problems.append(f"OpenReview {forum}: {exc}")
                continue
            self._add(record, record.get("venue") or "OpenReview", done)

    def _add(self, record: dict[str, object], venue: str, done: Fetched) -> None:
        try:
            paper = paper_from_project(dict(record), venue)
        except RecordError as exc:
            done.problems.append(f"{record.get('id')}: {exc}")
            return
        done.papers[paper.id] = paper

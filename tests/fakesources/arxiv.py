"""The arXiv export API (`GET /api/query`) on loopback, Atom laid out as arXiv's 2026 responses.

Supports what the fetcher and the recorded responses use: `search_query` with `cat:` terms
joined by OR and one `submittedDate:[YYYYMMDDHHMM TO YYYYMMDDHHMM]`, `id_list`, `start`,
`max_results`, `sortBy=submittedDate` and `sortOrder`. Errors are arXiv's: HTTP 400 with an
Atom feed whose single entry is the error (as recorded for `id_list=abc`).
"""

from __future__ import annotations

import re
from xml.sax.saxutils import escape, quoteattr

from aiohttp import web

from .base import LoopbackServer

NS = (
    'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
    'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="http://www.w3.org/2005/Atom"'
)
MAX_RESULTS = 2000  # arXiv's documented largest slice per call
_CAT = re.compile(r"cat:([\w.-]+)")
_SPAN = re.compile(r"submittedDate:\[(\d{12}) TO (\d{12})\]")
_ID = re.compile(r"^(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?$")


def arxiv_entry(
    arxiv_id: str,
    *,
    version: int = 1,
    title: str = "",
    summary: str = "",
    authors: tuple[str, ...] = ("Ada Lovelace",),
    categories: tuple[str, ...] = ("cs.LG",),
    published: str = "2026-11-02T10:00:00Z",
    updated: str | None = None,
    comment: str | None = None,
    journal_ref: str | None = None,
    doi: str | None = None,
) -> dict:
    return {
        "id": arxiv_id,
        "version": version,
        "title": title or f"Paper {arxiv_id}",
        "summary": summary or f"We study problem {arxiv_id} and show a result about it.",
        "authors": list(authors),
        "categories": list(categories),
        "published": published,
        "updated": updated or published,
        "comment": comment,
        "journal_ref": journal_ref,
        "doi": doi,
    }


def render_entry(paper: dict) -> str:
    if "raw" in paper:  # a deliberately broken entry, served as given
        return paper["raw"]
    vid = f"{paper['id']}v{paper['version']}"
    lines = [
        "  <entry>",
        f"    <id>http://arxiv.org/abs/{vid}</id>",
        f"    <title>{escape(paper['title'])}</title>",
        f"    <updated>{paper['updated']}</updated>",
        f'    <link href="https://arxiv.org/abs/{vid}" rel="alternate" type="text/html"/>',
        f'    <link href="https://arxiv.org/pdf/{vid}" rel="related" type="application/pdf"'
        ' title="pdf"/>',
        f"    <summary>{escape(paper['summary'])}</summary>",
    ]
    lines += [
        f'    <category term={quoteattr(c)} scheme="http://arxiv.org/schemas/atom"/>'
        for c in paper["categories"]
    ]
    lines.append(f"    <published>{paper['published']}</published>")
    if paper.get("comment"):
        lines.append(f"    <arxiv:comment>{escape(paper['comment'])}</arxiv:comment>")
    lines.append(f"    <arxiv:primary_category term={quoteattr(paper['categories'][0])}/>")
    if paper.get("journal_ref"):
        lines.append(f"    <arxiv:journal_ref>{escape(paper['journal_ref'])}</arxiv:journal_ref>")
    for name in paper["authors"]:
        lines += ["    <author>", f"      <name>{escape(name)}</name>", "    </author>"]
    if paper.get("doi"):
        lines.append(f"    <arxiv:doi>{escape(paper['doi'])}</arxiv:doi>")
    lines.append("  </entry>")
    return "\n".join(lines)


def feed(title: str, entries: list[str], total: int, start: int, per_page: int) -> str:
    head = [
        "<?xml version='1.0' encoding='UTF-8'?>",
        f"<feed {NS}>",
        "  <id>https://arxiv.org/api/loopback</id>",
        f"  <title>{escape(title)}</title>",
        "  <updated>2026-12-01T00:00:00Z</updated>",
        f"  <opensearch:itemsPerPage>{per_page}</opensearch:itemsPerPage>",
        f"  <opensearch:totalResults>{total}</opensearch:totalResults>",
        f"  <opensearch:startIndex>{start}</opensearch:startIndex>",
    ]
    return "\n".join([*head, *entries, "</feed>", ""])


def error_feed(message: str) -> web.Response:
    anchor = re.sub(r"\W+", "_", message)
    entry = (
        "  <entry>\n"
        f"    <id>https://arxiv.org/api/errors#{anchor}</id>\n"
        "    <title>Error</title>\n"
        "    <updated>2026-12-01T00:00:00Z</updated>\n"
        f'    <link href="https://arxiv.org/api/errors#{anchor}" rel="alternate"'
        ' type="text/html"/>\n'
        f"    <summary>{escape(message)}</summary>\n"
        "    <author>\n      <name>arXiv api core</name>\n    </author>\n"
        "  </entry>"
    )
    body = feed("arXiv Search Results", [entry], 1, 0, 1)
    return web.Response(status=400, text=body, content_type="application/atom+xml")


class FakeArxiv(LoopbackServer):
    """`papers` (see `arxiv_entry`) are what arXiv holds; replace one with a higher `version`
    to model a new version, or add {"raw": "<entry>...</entry>"} for a malformed entry."""

    def __init__(self, papers: list[dict] | None = None) -> None:
        super().__init__()
        self.papers: list[dict] = list(papers or [])

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/api/query", self.query)
        return app

    @property
    def base_url(self) -> str:
        return self.url + "/api/query"

    def _matching(self, query: str, ids: list[str]) -> list[dict] | str:
        if ids:
            bad = next((i for i in ids if not _ID.match(i)), None)
            if bad is not None:
                return f"incorrect id format for {bad}"
            wanted = {re.sub(r"v\d+$", "", i) for i in ids}
            return [p for p in self.papers if "raw" not in p and p["id"] in wanted]
        cats = set(_CAT.findall(query))
        span = _SPAN.search(query)
        if not cats and not span:
            return []
        found = []
        for paper in self.papers:
            if "raw" in paper:
                found.append(paper)
                continue
            if cats and not cats & set(paper["categories"]):
                continue
            if span:
                stamp = re.sub(r"\D", "", paper["published"])[:12]
                if not span[1] <= stamp <= span[2]:
                    continue
            found.append(paper)
        return found

    async def query(self, request: web.Request) -> web.StreamResponse:
        fault = await self.answer_fault(request)
        if fault is not None:
            return fault
        params = request.query
        try:
            start = int(params.get("start", "0"))
            per_page = int(params.get("max_results", "10"))
        except ValueError:
            self.log(request, 400)
            return error_feed("start and max_results must be integers")
        if start < 0 or per_page < 0:
            self.log(request, 400)
            return error_feed("start and max_results must be non-negative")
        ids = [i for i in params.get("id_list", "").split(",") if i]
        found = self._matching(params.get("search_query", ""), ids)
        if isinstance(found, str):
            self.log(request, 400)
            return error_feed(found)
        if params.get("sortBy") == "submittedDate":
            found = sorted(
                found,
                key=lambda p: p.get("published", ""),
                reverse=params.get("sortOrder", "descending") == "descending",
            )
        page = found[start : start + min(per_page, MAX_RESULTS)]
        title = f"arXiv Query: search_query={params.get('search_query', '')}&start={start}"
        body = feed(title, [render_entry(p) for p in page], len(found), start, per_page)
        self.log(request, 200)
        return web.Response(text=body, content_type="application/atom+xml")

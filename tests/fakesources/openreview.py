"""OpenReview API v2 `GET /notes` on loopback: `content.venueid` and `id` filters, `offset`/`limit`,
`count`.

Every content field is `{"value": ...}` as in API v2. A `limit` above 1000 is refused with a 400
and OpenReview's error shape, as the real API refuses it.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from .base import LoopbackServer

MAX_LIMIT = 1000


def note(
    forum: str,
    venueid: str = "ICML.cc/2026/Conference",
    *,
    title: str = "",
    abstract: str = "",
    authors: tuple[str, ...] = ("Grace Hopper",),
    venue: str = "ICML 2026 Poster",
    keywords: tuple[str, ...] = ("learning",),
    tldr: str | None = None,
    pdate: int | None = 1_780_000_000_000,
    mdate: int = 1_780_000_000_000,
) -> dict[str, Any]:
    """A note as API v2 returns it."""
    content: dict[str, Any] = {
        "title": {"value": title or f"Paper {forum}"},
        "authors": {"value": list(authors)},
        "authorids": {"value": [f"~{a.replace(' ', '_')}1" for a in authors]},
        "abstract": {"value": abstract or f"We study question {forum} and answer it."},
        "keywords": {"value": list(keywords)},
        "venue": {"value": venue},
        "venueid": {"value": venueid},
        "pdf": {"value": f"/pdf/{forum}.pdf"},
        "_bibtex": {"value": f"@inproceedings{{{forum},\n title={{{title or forum}}}\n}}"},
    }
    if tldr:
        content["TLDR"] = {"value": tldr}
    return {
        "id": forum,
        "forum": forum,
        "number": 1,
        "invitations": [f"{venueid.split('/Rejected')[0]}/-/Submission"],
        "content": content,
        "cdate": 1_770_000_000_000,
        "pdate": pdate,
        "mdate": mdate,
        "tmdate": mdate,
        "signatures": ["~Grace_Hopper1"],
        "readers": ["everyone"],
        "writers": [],
        "version": 2,
    }


class FakeOpenReview(LoopbackServer):
    """`notes` are every note OpenReview holds (accepted, under review, rejected)."""

    def __init__(self, notes: list[Any] | None = None) -> None:
        super().__init__()
        self.notes: list[Any] = list(notes or [])

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/notes", self.get_notes)
        return app

    async def get_notes(self, request: web.Request) -> web.StreamResponse:
        fault = await self.answer_fault(request)
        if fault is not None:
            return fault
        params = request.query
        try:
            offset = int(params.get("offset", "0"))
            limit = int(params.get("limit", str(MAX_LIMIT)))
        except ValueError:
            return self._error(request, "offset and limit must be integers")
        if limit > MAX_LIMIT or limit < 1 or offset < 0:
            return self._error(request, f"limit must be between 1 and {MAX_LIMIT}")
        venueid = params.get("content.venueid")
        wanted = params.get("id")  # API v2 `?id=`: that one note (Find papers, on demand)
        found = [
            n
            for n in self.notes
            if venueid is None
            or not isinstance(n, dict)
            or not isinstance(n.get("content"), dict)
            or n["content"].get("venueid", {}).get("value") == venueid
        ]
        if wanted is not None:
            found = [n for n in found if isinstance(n, dict) and n.get("id") == wanted]
        self.log(request, 200)
        return web.json_response({"notes": found[offset : offset + limit], "count": len(found)})

    def _error(self, request: web.Request, message: str) -> web.Response:
        self.log(request, 400)
        body = {"name": "ValidationError", "message": message, "status": 400}
        return web.Response(status=400, text=json.dumps(body), content_type="application/json")


class EndlessOpenReview(FakeOpenReview):
    """A venue that never ends: `count` is 10^9 and every offset answers a full page of new
    notes, made on request. After `guard` requests it answers 400, so a fetcher with no bound
    of its own fails a test instead of hanging it."""

    COUNT = 10**9

    def __init__(self, guard: int = 200) -> None:
        super().__init__()
        self.guard = guard

    async def get_notes(self, request: web.Request) -> web.StreamResponse:
        fault = await self.answer_fault(request)
        if fault is not None:
            return fault
        if self.seen > self.guard:
            return self._error(request, f"test guard: more than {self.guard} requests")
        offset = int(request.query.get("offset", "0"))
        limit = min(int(request.query.get("limit", str(MAX_LIMIT))), MAX_LIMIT)
        venueid = request.query.get("content.venueid", "ICML.cc/2026/Conference")
        notes = [note(f"e{offset + i:09d}", venueid) for i in range(limit)]
        self.log(request, 200)
        return web.json_response({"notes": notes, "count": self.COUNT})

"""Paper Copilot lists as raw.githubusercontent.com serves them: `GET /<owner>/<repo>/<branch>/
<path>` answers the file as text/plain, or `404: Not Found` as GitHub's raw host does."""

from __future__ import annotations

from aiohttp import web

from .base import LoopbackServer


class FakePaperLists(LoopbackServer):
    """`files` maps a path (`papercopilot/paperlists/main/colm/colm2025.json`) to its text."""

    def __init__(self, files: dict[str, str] | None = None) -> None:
        super().__init__()
        self.files: dict[str, str] = dict(files or {})

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/{path:.+}", self.serve)
        return app

    def url_of(self, path: str) -> str:
        return f"{self.url}/{path}"

    async def serve(self, request: web.Request) -> web.StreamResponse:
        fault = await self.answer_fault(request)
        if fault is not None:
            return fault
        text = self.files.get(request.match_info["path"])
        if text is None:
            self.log(request, 404)
            return web.Response(status=404, text="404: Not Found")
        self.log(request, 200)
        return web.Response(text=text, content_type="text/plain")

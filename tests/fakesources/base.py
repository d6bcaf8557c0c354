"""What the stand-ins share: a loopback aiohttp server, a request log and scripted faults."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from aiohttp import web

FILL_CHUNK = 64 * 1024  # bytes written per chunk of a streamed filler


@dataclass(frozen=True, slots=True)
class Fault:
    """One scripted answer served instead of the real one: a status, headers and a body.

    `fill` bytes of `fill_with` follow `body`, then `tail`: a huge answer made as it is sent,
    in chunks, so a test of a 64 MB body holds 64 KB of it. Chunked (no Content-Length) unless
    `declare_length`, so a client cannot refuse it by the header alone.
    """

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""
    fill: int = 0
    fill_with: bytes = b"a"
    tail: str = ""
    declare_length: bool = False


@dataclass(frozen=True, slots=True)
class Request:
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    at: float  # time.monotonic() when it arrived
    status: int


class LoopbackServer:
    """Starts `app` on 127.0.0.1:<free port>; `faults` answer the next requests in order."""

    def __init__(self) -> None:
        self.faults: deque[Fault] = deque()
        self.requests: list[Request] = []
        self.peers: set[tuple[str, int]] = set()  # client (host, port): one per connection
        self.seen = 0  # requests received
        # The first request waits here before it is answered: two servers given one barrier
        # answer only once both clients have asked, so their fetches overlap for sure.
        self.meet: threading.Barrier | None = None
        self.later: dict[int, list[Fault]] = {}  # request number -> faults armed from then on
        self._runner: web.AppRunner | None = None
        self.url = ""

    def app(self) -> web.Application:
        raise NotImplementedError

    def fail(self, *faults: Fault) -> None:
        """Serve these instead of the next requests, in order."""
        self.faults.extend(faults)

    def fail_from(self, number: int, *faults: Fault) -> None:
        """Serve these from request `number` (1-based) on: "the first page works, then 503s"."""
        self.later.setdefault(number, []).extend(faults)

    async def answer_fault(self, request: web.Request) -> web.StreamResponse | None:
        peer = request.transport.get_extra_info("peername") if request.transport else None
        if peer:
            self.peers.add((peer[0], peer[1]))
        self.seen += 1
        if self.seen == 1 and self.meet is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.meet.wait, 10)
        self.faults.extend(self.later.pop(self.seen, []))
        if not self.faults:
            return None
        fault = self.faults.popleft()
        self.log(request, fault.status)
        if not fault.fill:
            return web.Response(status=fault.status, headers=fault.headers, text=fault.body)
        return await self._stream(request, fault)

    async def _stream(self, request: web.Request, fault: Fault) -> web.StreamResponse:
        """`fault`'s body, filler and tail written chunk by chunk; a client that hangs up
        part-way (it refused the body) ends the answer, as it would on a real server."""
        head, tail = fault.body.encode(), fault.tail.encode()
        response = web.StreamResponse(status=fault.status, headers=fault.headers)
        if fault.declare_length:
            response.content_length = len(head) + fault.fill + len(tail)
        else:
            response.enable_chunked_encoding()
        chunk = (fault.fill_with * (FILL_CHUNK // len(fault.fill_with) + 1))[:FILL_CHUNK]
        try:
            await response.prepare(request)
            await response.write(head)
            left = fault.fill
            while left > 0:
                await response.write(chunk[: min(left, FILL_CHUNK)])
                left -= FILL_CHUNK
            await response.write(tail)
            await response.write_eof()
        except (ConnectionError, RuntimeError):  # the client closed the connection
            pass
        return response

    def log(self, request: web.Request, status: int) -> None:
        self.requests.append(
            Request(
                request.path, dict(request.query), dict(request.headers), time.monotonic(), status
            )
        )

    async def start(self) -> str:
        self._runner = web.AppRunner(self.app())
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    @contextmanager
    def in_thread(self) -> Iterator[str]:
        """Serve from a thread with its own loop, for code that runs `asyncio.run` (the CLI)."""
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(self.start())
            ready.set()
            loop.run_forever()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        ready.wait(10)
        try:
            yield self.url
        finally:
            asyncio.run_coroutine_threadsafe(self.stop(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)
            loop.close()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

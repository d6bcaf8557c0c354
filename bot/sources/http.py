"""One polite HTTP client for every source: a single connection, a minimum gap between calls,
a descriptive User-Agent, retries with backoff on 429 and 5xx that honour Retry-After, and
response bodies read in chunks up to `[sources] max_response_mb` (a 400 MB answer once took
7 GB of memory when read whole).

Why aiohttp and not a source's own client (`arxiv`, `openreview-py`): aiohttp already comes
with discord.py, so the bot refreshes inside its own event loop without a thread per fetch;
`openreview-py` is synchronous and pulls in a large dependency tree for two GET routes, and
the `arxiv` package hides the feed totals and the error feed that the fetcher reports on.
Both APIs are two documented GET routes, so a small client here is the smaller thing to keep.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import aiohttp

from bot.config import SourcesSettings
from bot.timing import backoff

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 600.0  # a Retry-After beyond this is treated as a failure, not a 10-min nap
READ_CHUNK = 1 << 16  # bytes read at a time from a response body


class FetchError(Exception):
    """A source could not be read after the retries; the message says what and why."""


class TooLarge(FetchError):
    """A response body past the cap: refused, never retried (the next answer is as large)."""


async def read_capped(resp: aiohttp.ClientResponse, limit: int, setting: str) -> bytes:
    """The body of `resp`, read in chunks; TooLarge naming the URL and the limit as soon as it
    passes `limit` bytes (or when Content-Length says it will), so a huge answer costs at
    most `limit` bytes of memory. Sizes are after decompression: a small gzip bomb is caught.
    """
    where, mb = str(resp.url), limit / (1 << 20)
    declared = resp.content_length
    if declared is not None and declared > limit:
        raise TooLarge(
            f"{where}: the response is {declared:,} bytes, more than the {mb:g} MB limit "
            f"({setting}); refused"
        )
    body = bytearray()
    async for chunk in resp.content.iter_chunked(READ_CHUNK):
        body += chunk
        if len(body) > limit:
            raise TooLarge(
                f"{where}: the response is larger than the {mb:g} MB limit ({setting}); "
                "refused after reading that much"
            )
    return bytes(body)


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    body: bytes
    url: str

    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Retry-After as seconds: either delta-seconds or an HTTP date (RFC 9110, 10.2.3)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class PoliteClient:
    """GETs in order over one connection, `interval` seconds apart at least (arXiv asks 3 s).

    `sleep` is injectable so tests see the waits it asked for without spending them.
    """

    def __init__(
        self,
        settings: SourcesSettings,
        *,
        interval: float = 0.0,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.settings = settings
        self.interval = interval
        self.sleep = sleep
        self.waits: list[float] = []  # every pause taken (gap or backoff), for logs and tests
        self.requests = 0
        self._last = 0.0
        self._session: aiohttp.ClientSession | None = None
        self._lock = asyncio.Lock()

    async def __aenter__(self) -> PoliteClient:
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=1),
            headers={"User-Agent": self.settings.user_agent},
            timeout=aiohttp.ClientTimeout(total=self.settings.timeout_seconds),
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _pause(self, seconds: float) -> None:
        if seconds > 0:
            self.waits.append(seconds)
            await self.sleep(seconds)

    async def get(
        self, url: str, params: Mapping[str, str | int] | None = None, *, ok: tuple[int, ...] = ()
    ) -> Response:
        """The response to GET `url`: 2xx, or a status listed in `ok` (arXiv's 400 error feed).

        429/5xx and connection errors are retried up to `max_retries` times with backoff;
        anything else, or running out of retries, is a FetchError naming the URL and status.
        A body past `max_response_mb` is a FetchError (TooLarge) at once, read no further.
        """
        if self._session is None:
            raise RuntimeError("PoliteClient must be used as `async with`")
        settings = self.settings
        limit = settings.max_response_mb << 20
        async with self._lock:
            attempt = 0
            while True:
                attempt += 1
                gap = self.interval - (time.monotonic() - self._last)
                if self._last and gap > 0:
                    await self._pause(gap)
                self.requests += 1
                retry_after: float | None = None
                problem = ""
                try:
                    async with self._session.get(url, params=params) as resp:
                        body = await read_capped(resp, limit, "[sources] max_response_mb")
                        status, final = resp.status, str(resp.url)
                        retry_after = retry_after_seconds(resp.headers.get("Retry-After"))
                except (aiohttp.ClientError, TimeoutError) as exc:
                    status, final, body = 0, url, b""
                    problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                finally:
                    self._last = time.monotonic()
                if 200 <= status < 300 or status in ok:
                    return Response(status, body, final)
                if status:
                    problem = f"HTTP {status}"
                    if status not in RETRY_STATUS:
                        snippet = body[:200].decode("utf-8", errors="replace").strip()
                        raise FetchError(
                            f"{final}: {problem}" + (f" ({snippet})" if snippet else "")
                        )
                if retry_after is not None and retry_after > MAX_RETRY_AFTER:
                    raise FetchError(f"{final}: {problem}, asked to wait {retry_after:.0f} s")
                if attempt > settings.max_retries:
                    raise FetchError(f"{final}: {problem} after {attempt} attempts")
                delay = backoff(
                    attempt, settings.retry_base_seconds, settings.retry_max_seconds, retry_after
                )
                log.warning(
                    "%s: %s; retry %d/%d in %.1f s",
                    url,
                    problem,
                    attempt,
                    settings.max_retries,
                    delay,
                )
                await self._pause(delay)

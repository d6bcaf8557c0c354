"""The sources' HTTP client (`bot/sources/http.py`) against tenacity, for docs/decisions.md.

Run it with the project's interpreter and tenacity installed into a throwaway folder on
PYTHONPATH, so the project's .venv is left as it is:

    pip install --target /tmp/tenlib tenacity
    PYTHONPATH=/tmp/tenlib .venv/bin/python -m benchmarks.decisions.http_vs_tenacity

Prints: (1) how many code lines the project's retry part takes and how many a tenacity version
of the same `get` takes (both counted the same way: lines of code, no blank, comment or docstring
lines); (2) the waits each one asks for when a loopback server answers 429 "Retry-After: 7",
503 with an HTTP-date Retry-After 30 s ahead, 500, then 200 (sleep injected: nothing waits);
(3) tenacity's import time (`python -X importtime`, best of 5) and installed size.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import io
import logging
import re
import subprocess
import sys
import textwrap
import time
import tokenize
from email.utils import formatdate
from importlib.metadata import version
from pathlib import Path

import aiohttp
import tenacity
from aiohttp import web

from bot import timing
from bot.config import SourcesSettings
from bot.sources import http
from bot.sources.http import RETRY_STATUS, FetchError, PoliteClient, Response, retry_after_seconds

# --- a tenacity version of PoliteClient.get: same statuses, same errors, same pacing ---------


log = logging.getLogger("bot.sources.http")


class _Retryable(Exception):
    def __init__(self, problem: str, url: str, retry_after: float | None) -> None:
        super().__init__(problem)
        self.problem, self.url, self.retry_after = problem, url, retry_after


class TenacityClient(PoliteClient):
    """PoliteClient with its retry loop handed to tenacity.AsyncRetrying.

    What tenacity does not do is still written here: the gap between calls, reading Retry-After
    (a custom `wait`), refusing a Retry-After beyond MAX_RETRY_AFTER, the 4xx/5xx split, and
    the FetchError messages."""

    async def get(self, url, params=None, *, ok=()):  # type: ignore[no-untyped-def]
        if self._session is None:
            raise RuntimeError("TenacityClient must be used as `async with`")
        settings = self.settings
        expo = tenacity.wait_exponential(
            multiplier=settings.retry_base_seconds, max=settings.retry_max_seconds
        )

        def wait(state: tenacity.RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            after = exc.retry_after if isinstance(exc, _Retryable) else None
            return max(expo(state), after or 0.0)

        def give_up(state: tenacity.RetryCallState) -> Response:
            exc = state.outcome.exception()  # type: ignore[union-attr]
            raise FetchError(f"{exc.url}: {exc.problem} after {state.attempt_number} attempts")

        async def once() -> Response:
            gap = self.interval - (time.monotonic() - self._last)
            if self._last and gap > 0:
                await self._pause(gap)
            self.requests += 1
            try:
                async with self._session.get(url, params=params) as resp:
                    body, status, final = await resp.read(), resp.status, str(resp.url)
                    after = retry_after_seconds(resp.headers.get("Retry-After"))
            except (aiohttp.ClientError, TimeoutError) as exc:
                raise _Retryable(type(exc).__name__, url, None) from exc
            finally:
                self._last = time.monotonic()
            if 200 <= status < 300 or status in ok:
                return Response(status, body, final)
            if status not in RETRY_STATUS:
                snippet = body[:200].decode("utf-8", errors="replace").strip()
                raise FetchError(f"{final}: HTTP {status}" + (f" ({snippet})" if snippet else ""))
            if after is not None and after > http.MAX_RETRY_AFTER:
                raise FetchError(f"{final}: HTTP {status}, asked to wait {after:.0f} s")
            raise _Retryable(f"HTTP {status}", final, after)

        async with self._lock:
            retrying = tenacity.AsyncRetrying(
                retry=tenacity.retry_if_exception_type(_Retryable),
                stop=tenacity.stop_after_attempt(settings.max_retries + 1),
                wait=wait,
                sleep=self._pause,
                before_sleep=lambda state: log.warning(
                    "%s: %s; retry %d/%d in %.1f s",
                    url,
                    state.outcome.exception().problem,  # type: ignore[union-attr]
                    state.attempt_number,
                    settings.max_retries,
                    state.upcoming_sleep,
                ),
                retry_error_callback=give_up,
            )
            return await retrying(once)


# --- line counts ---------------------------------------------------------------------------


def code_lines(obj: object) -> int:
    """Lines of code of a function or module: no blank, comment-only or docstring lines."""
    text = textwrap.dedent(inspect.getsource(obj))  # type: ignore[arg-type]
    tree = ast.parse(text)
    doc_lines: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                doc_lines.update(range(body[0].lineno, body[0].end_lineno + 1))  # type: ignore[operator]
    code: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in (
            tokenize.COMMENT,
            tokenize.NL,
            tokenize.NEWLINE,
            tokenize.INDENT,
            tokenize.DEDENT,
            tokenize.ENDMARKER,
        ):
            continue
        code.update(range(tok.start[0], tok.end[0] + 1))
    return len(code - doc_lines)


# --- behaviour on a loopback server --------------------------------------------------------


async def waits_on_loopback(client_type: type[PoliteClient], tenacity_plain: bool = False):
    hits = 0

    async def handler(request: web.Request) -> web.Response:
        nonlocal hits
        hits += 1
        if hits == 1:
            return web.Response(status=429, headers={"Retry-After": "7"})
        if hits == 2:
            when = formatdate(time.time() + 30, usegmt=True)
            return web.Response(status=503, headers={"Retry-After": when})
        if hits == 3:
            return web.Response(status=500)
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    settings = SourcesSettings(max_retries=5, retry_base_seconds=2.0, retry_max_seconds=120.0)

    async def no_sleep(seconds: float) -> None:
        return None

    try:
        if tenacity_plain:
            # tenacity as its README shows it: exponential wait, no Retry-After reading.
            waits: list[float] = []

            async def record(seconds: float) -> None:
                waits.append(seconds)

            async with aiohttp.ClientSession() as session:

                async def once() -> int:
                    async with session.get(f"http://127.0.0.1:{port}/") as resp:
                        if resp.status in RETRY_STATUS:
                            raise aiohttp.ClientResponseError(
                                resp.request_info, (), status=resp.status
                            )
                        return resp.status

                retrying = tenacity.AsyncRetrying(
                    retry=tenacity.retry_if_exception_type(aiohttp.ClientResponseError),
                    stop=tenacity.stop_after_attempt(6),
                    wait=tenacity.wait_exponential(multiplier=2.0, max=120.0),
                    sleep=record,
                )
                status = await retrying(once)
            return status, waits
        async with client_type(settings, sleep=no_sleep) as client:
            resp = await client.get(f"http://127.0.0.1:{port}/")
            return resp.status, client.waits
    finally:
        await runner.cleanup()


# --- import time ---------------------------------------------------------------------------


def import_us(module: str, before: str = "", runs: int = 5) -> int:
    """Cumulative import time of `module` in a fresh interpreter (us), best of `runs`."""
    best = []
    for _ in range(runs):
        err = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                "-c",
                (f"import {before}; " if before else "") + f"import {module}",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stderr
        for line in err.splitlines():
            m = re.match(r"import time:\s+\d+ \|\s+(\d+) \|\s?(\S.*)$", line)
            if m and m.group(2).strip() == module:
                best.append(int(m.group(1)))
    return min(best)


def tree_bytes(folder: Path) -> int:
    return sum(
        p.stat().st_size for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    )


def main() -> None:
    logging.getLogger("bot.sources.http").setLevel(logging.ERROR)  # retries are expected here
    ours = {
        "PoliteClient.get (the loop)": code_lines(PoliteClient.get),
        "retry_after_seconds": code_lines(retry_after_seconds),
        "timing.backoff": code_lines(timing.backoff),
    }
    print("== lines of code (no blanks, comments or docstrings)")
    print(f"bot/sources/http.py whole module: {code_lines(http)}")
    for name, n in ours.items():
        print(f"ours   {name}: {n}")
    print(f"ours   retry part total: {sum(ours.values())}")
    ten = code_lines(TenacityClient.get)
    print(
        f"tenacity version of get: {ten}; with retry_after_seconds, which it still needs: "
        f"{ten + ours['retry_after_seconds']}"
    )
    print()
    print(
        "== waits asked for: 429 'Retry-After: 7', 503 HTTP-date +30 s, 500, 200 "
        "(base 2 s, cap 120 s)"
    )
    for label, kind, plain in (
        ("PoliteClient (ours)", PoliteClient, False),
        ("tenacity + our Retry-After wait", TenacityClient, False),
        ("tenacity wait_exponential(2, max=120), no Retry-After code", PoliteClient, True),
    ):
        status, waits = asyncio.run(waits_on_loopback(kind, plain))
        print(f"{label}: status {status}, waits {[round(w) for w in waits]} s")
    print()
    print(f"== tenacity {version('tenacity')} (aiohttp {version('aiohttp')})")
    pkg = Path(tenacity.__file__).parent
    print(
        f"installed size (no __pycache__): {tree_bytes(pkg) / 1024:.0f} KB, "
        f"{sum(1 for p in pkg.rglob('*.py'))} .py files, "
        f"{sum(code_lines_file(p) for p in pkg.rglob('*.py'))} non-blank, non-comment lines"
    )
    for module, before in (("tenacity", ""), ("tenacity", "asyncio, aiohttp"), ("aiohttp", "")):
        after = f" after import {before} (what the bot would add)" if before else " (cold)"
        print(
            f"import {module}{after}: {import_us(module, before) / 1000:.1f} ms "
            "(best of 5, -X importtime cumulative)"
        )


def code_lines_file(path: Path) -> int:
    n = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        s = line.strip()
        if s and not s.startswith("#"):
            n += 1
    return n


if __name__ == "__main__":
    main()

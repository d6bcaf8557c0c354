"""The HTTP side: request parsing (JSON and multipart), logging, routing, faults, errors."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import BodyPartReader, web

from .faults import Faults, compile_path
from .messages import Upload
from .models import JSON
from .recorder import Recorder
from .rules_messages import Refusal
from .validate import errors_object, refusals

log = logging.getLogger(__name__)

API_PREFIX = re.compile(r"^/api(/v\d+)?")
# Discord's limits on files (docs: Uploading Files): 10 files a message; each file within the
# `attachment_size_limit` an interaction reports (10 MiB for a bot outside boosted servers, as
# the fake reports it); the whole request within 25 MiB. Too many files is a 400 / 50035 on
# `attachments`; too many bytes is 413 / 40005 "Request entity too large".
MAX_FILES = 10
MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_REQUEST_BYTES = 25 * 1024 * 1024


@dataclass
class Call:
    """One REST request as the fake received it, and what it answered."""

    method: str
    path: str
    query: dict[str, str]
    json: Any
    uploads: list[Upload] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)
    status: int = 0
    response: Any = None
    fault: bool = False

    def __repr__(self) -> str:
        return f"<Call {self.method} {self.path} -> {self.status}>"


class ApiError(Exception):
    """Raised by a route handler to answer with a Discord-style error body.

    ``errors`` is Discord's nested field-path object of a 50035 Invalid Form Body.
    """

    def __init__(
        self, status: int, code: int, message: str, errors: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.errors = errors

    def body(self) -> JSON:
        body: JSON = {"message": self.message, "code": self.code}
        if self.errors:
            body["errors"] = self.errors
        return body


def invalid_form_body(refusals: list[Refusal]) -> ApiError:
    """400 / 50035 naming every refused field, as Discord answers a payload it will not take."""
    return ApiError(400, 50035, "Invalid Form Body", errors_object(refusals))


Handler = Callable[[Call], Awaitable[Any]]
NO_CONTENT = object()


def json_response(body: Any, status: int = 200, headers: Any = None) -> web.Response:
    """JSON with ``Content-Type: application/json`` exactly (discord.py compares the header)."""
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    return web.Response(status=status, body=json.dumps(body).encode(), headers=all_headers)


class Router:
    def __init__(self) -> None:
        self.routes: list[tuple[str, re.Pattern[str], Handler]] = []

    def add(self, method: str, template: str, handler: Handler) -> None:
        parts = re.split(r"\{(\w+)\}", template)
        regex = "".join(
            re.escape(p) if i % 2 == 0 else f"(?P<{p}>[^/]+)" for i, p in enumerate(parts)
        )
        self.routes.append((method, re.compile(regex), handler))

    def match(self, method: str, path: str) -> tuple[Handler, dict[str, str]] | None:
        for route_method, regex, handler in self.routes:
            found = regex.fullmatch(path)
            if found and route_method == method:
                return handler, found.groupdict()
        return None


async def parse_body(request: web.Request) -> tuple[Any, list[Upload]]:
    if request.content_type.startswith("multipart/"):
        payload: Any = None
        uploads: list[Upload] = []
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            if not isinstance(part, BodyPartReader):
                continue
            data = await part.read()
            name = part.name or ""
            if name == "payload_json":
                payload = json.loads(data)
            else:
                content_type = part.headers.get("Content-Type", "application/octet-stream")
                filename = part.filename or name
                uploads.append(Upload(name, filename, content_type, bytes(data)))
        return payload, uploads
    text = await request.text()
    if not text:
        return None, []
    try:
        return json.loads(text), []
    except ValueError:
        return text, []


class RestServer:
    """Routes REST API calls to handlers, logging each in ``requests`` and applying faults."""

    def __init__(self, faults: Faults) -> None:
        self.router = Router()
        self.faults = faults
        self.requests: Recorder[Call] = Recorder("REST request")
        self.unknown: list[Call] = []
        self.valid_tokens: set[str] | None = None
        #: validate bodies against Discord's OpenAPI spec too (hand-written rules always apply)
        self.use_spec = True
        #: requests refused with 400 / 50035, for tests to inspect
        self.refused: list[Call] = []
        #: set by a test that sends refused payloads on purpose (see fixtures.fake_discord)
        self.refusals_expected = False

    async def handle(self, request: web.Request) -> web.StreamResponse:
        path = API_PREFIX.sub("", request.path) or "/"
        body, uploads = await parse_body(request)
        call = Call(request.method, path, dict(request.query), body, uploads, dict(request.headers))
        self.requests.append(call)
        try:
            response = await self._answer(call)
        except ApiError as exc:
            response = self._error(call, exc.status, exc.body())
        self.requests.notify()
        return response

    def _error(self, call: Call, status: int, body: Any, headers: Any = None) -> web.Response:
        call.status, call.response = status, body
        if isinstance(body, str):
            return web.Response(status=status, text=body, headers=headers)
        return json_response(body, status, headers)

    async def _answer(self, call: Call) -> web.StreamResponse:
        fault = self.faults.take(call.method, call.path)
        if fault is not None:
            if fault.delay:
                await asyncio.sleep(fault.delay)
            if fault.status:
                call.fault = True
                log.info("fake discord: fault %s on %s %s", fault.status, call.method, call.path)
                return self._error(call, fault.status, fault.body, fault.headers)
        if self.valid_tokens is not None and not self._authorized(call):
            return self._error(call, 401, {"message": "401: Unauthorized", "code": 0})
        found = self.router.match(call.method, call.path)
        if found is None:
            log.warning("fake discord: unknown route %s %s", call.method, call.path)
            self.unknown.append(call)
            return self._error(call, 404, {"message": "404: Not Found", "code": 0})
        handler, call.params = found
        if sum(len(u.data) for u in call.uploads) > MAX_REQUEST_BYTES or any(
            len(u.data) > MAX_FILE_BYTES for u in call.uploads
        ):
            raise ApiError(413, 40005, "Request entity too large")
        refused = refusals(call.method, call.path, call.json, use_spec=self.use_spec)
        if len(call.uploads) > MAX_FILES:
            refused = [
                *refused,
                Refusal(["attachments"], "BASE_TYPE_MAX_LENGTH", "Must be 10 or fewer in length."),
            ]
        if refused:
            log.warning(
                "fake discord: 400/50035 on %s %s: %s",
                call.method,
                call.path,
                "; ".join(f"{'.'.join(map(str, r.path))}: {r.message}" for r in refused),
            )
            self.refused.append(call)
            raise invalid_form_body(refused)
        result = await handler(call)
        if result is NO_CONTENT or result is None:
            call.status = 204
            return web.Response(status=204)
        call.status, call.response = 200, result
        return json_response(result)

    def _authorized(self, call: Call) -> bool:
        if call.path.startswith(("/webhooks/", "/interactions/")):
            return True
        auth = call.headers.get("Authorization", "")
        return auth.removeprefix("Bot ") in (self.valid_tokens or set())

    async def wait_for(
        self,
        method: str | None = None,
        pattern: str | None = None,
        *,
        status: int | None = None,
        index: int = 0,
        timeout: float = 2.0,
    ) -> Call:
        """The ``index``-th answered request matching method/pattern/status, waiting for it."""
        regex = compile_path(pattern) if pattern else None

        def match(call: Call) -> bool:
            return (
                call.status != 0
                and (method is None or call.method == method.upper())
                and (regex is None or regex.fullmatch(call.path) is not None)
                and (status is None or call.status == status)
            )

        return await self.requests.wait_for(
            match, index=index, timeout=timeout, describe=f"{method} {pattern} {status}"
        )

    def calls(self, method: str | None = None, pattern: str | None = None) -> list[Call]:
        """Logged requests, optionally filtered by method and path pattern (see faults)."""
        regex = compile_path(pattern) if pattern else None
        return [
            c
            for c in self.requests
            if (method is None or c.method == method.upper())
            and (regex is None or regex.fullmatch(c.path))
        ]


def require_message_body(call: Call) -> JSON:
    """The JSON body of a message-creating request; Discord refuses one with nothing to show."""
    body = call.json or {}
    if not (
        body.get("content")
        or body.get("embeds")
        or body.get("components")
        or call.uploads
        or body.get("sticker_ids")
        or body.get("poll")
    ):
        raise ApiError(400, 50006, "Cannot send an empty message")
    return body

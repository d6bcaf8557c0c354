"""Fault injection: make the next N requests matching a route fail in a chosen way."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .models import JSON


def compile_path(pattern: str) -> re.Pattern[str]:
    """``/channels/{channel_id}/messages`` style or a regex; matched against the whole path.

    Paths are the API paths without the ``/api/v10`` prefix, e.g. ``/channels/1/messages``.
    ``*`` alone matches everything.
    """
    if pattern == "*":
        return re.compile(r".*")
    if "{" in pattern:
        parts = re.split(r"\{[^}/]*\}", pattern)
        pattern = "[^/]+".join(re.escape(p) for p in parts)
    return re.compile(pattern)


@dataclass
class Fault:
    """One armed fault. ``times`` is how many more requests it will hit."""

    method: str
    pattern: str
    status: int
    times: int = 1
    body: JSON | str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hits: int = 0
    _regex: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._regex = compile_path(self.pattern)

    def matches(self, method: str, path: str) -> bool:
        if self.times <= 0:
            return False
        if self.method not in ("*", method.upper()):
            return False
        return self._regex.fullmatch(path) is not None

    @property
    def exhausted(self) -> bool:
        return self.times <= 0


def error_body(status: int, code: int, message: str, **extra: Any) -> JSON:
    return {"message": message, "code": code, **extra}


class Faults:
    """The armed faults of one fake server, checked in the order they were added."""

    def __init__(self) -> None:
        self.armed: list[Fault] = []

    def add(self, fault: Fault) -> Fault:
        self.armed.append(fault)
        return fault

    def take(self, method: str, path: str) -> Fault | None:
        for fault in self.armed:
            if fault.matches(method, path):
                fault.times -= 1
                fault.hits += 1
                return fault
        return None

    def clear(self) -> None:
        self.armed.clear()

    # ready-made faults -------------------------------------------------------------------------

    def rate_limit(
        self,
        method: str,
        pattern: str,
        *,
        times: int = 1,
        retry_after: float = 0.05,
        is_global: bool = False,
        cloudflare: bool = False,
    ) -> Fault:
        """429 with Retry-After and JSON ``retry_after``; ``cloudflare=True`` omits the Via header
        (discord.py then treats it as a Cloudflare ban and raises instead of retrying)."""
        headers = {
            "Retry-After": str(retry_after),
            "X-RateLimit-Limit": "5",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset-After": str(retry_after),
            "X-RateLimit-Scope": "global" if is_global else "user",
        }
        if is_global:
            headers["X-RateLimit-Global"] = "true"
        if not cloudflare:
            headers["Via"] = "1.1 google"
        body = error_body(
            429, 0, "You are being rate limited.", retry_after=retry_after, **{"global": is_global}
        )
        return self.add(Fault(method, pattern, 429, times, body, headers))

    def server_error(
        self, method: str, pattern: str, *, status: int = 500, times: int = 1
    ) -> Fault:
        body = error_body(status, 0, f"{status}: Internal Server Error")
        return self.add(Fault(method, pattern, status, times, body))

    def forbidden(self, method: str, pattern: str, *, times: int = 1) -> Fault:
        """403 Missing Permissions (code 50013)."""
        return self.add(
            Fault(method, pattern, 403, times, error_body(403, 50013, "Missing Permissions"))
        )

    def missing_access(self, method: str, pattern: str, *, times: int = 1) -> Fault:
        """403 Missing Access (code 50001)."""
        return self.add(
            Fault(method, pattern, 403, times, error_body(403, 50001, "Missing Access"))
        )

    def not_found(
        self,
        method: str,
        pattern: str,
        *,
        times: int = 1,
        code: int = 10003,
        message: str = "Unknown Channel",
    ) -> Fault:
        """404 with a Discord error code (default 10003 Unknown Channel)."""
        return self.add(Fault(method, pattern, 404, times, error_body(404, code, message)))

    def unknown_interaction(self, *, times: int = 1) -> Fault:
        """404 code 10062 on the next interaction callback(s)."""
        return self.not_found(
            "POST",
            "/interactions/{id}/{token}/callback",
            times=times,
            code=10062,
            message="Unknown interaction",
        )

    def slow(self, method: str, pattern: str, delay: float, *, times: int = 1) -> Fault:
        """Delay matching requests by ``delay`` seconds, then serve them normally."""
        return self.add(Fault(method, pattern, 0, times, delay=delay))

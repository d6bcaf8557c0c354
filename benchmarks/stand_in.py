"""What validating against Discord's OpenAPI spec costs the loopback stand-in (issue 10).

    .venv/bin/python -m benchmarks.stand_in

Prints the spec's load time (once per process), the first validator's build and first use,
and the time per request body with the spec and with the hand-written rules alone (the
baseline, as in a clone without ../shared), for a typical /search reply and a command sync.
"""

from __future__ import annotations

import cProfile
import time
from collections.abc import Callable
from typing import Any

from tests.fakediscord import spec, validate

REPLY: dict[str, Any] = {
    "type": 4,
    "data": {
        "flags": 64,
        "embeds": [
            {
                "title": "🔎 optimal transport",
                "description": "\n".join(
                    f"**{i}.** [Paper {i}](https://openreview.net/forum?id=x{i})" for i in range(5)
                ),
                "footer": {"text": "page 1/2 · 9 matches for “optimal transport”"},
                "color": 0x5865F2,
            }
        ],
        "components": [
            {
                "type": 1,
                "components": [
                    {"type": 2, "style": 2, "label": label, "custom_id": f"pb:s:{label}"}
                    for label in ("◀", "▶", "Share")
                ],
            }
        ],
    },
}
SYNC = [
    {
        "type": 1,
        "name": f"cmd{i}",
        "description": "A command",
        "options": [{"type": 3, "name": "query", "description": "Words", "required": True}],
    }
    for i in range(10)
]
CASES = [
    ("POST", "/interactions/1/tok/callback", REPLY, "callback: /search reply"),
    ("PUT", "/applications/1/commands", SYNC, "command sync: 10 commands"),
]


def per_call(fn: Callable[[], object], repeat: int) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - started) / repeat


def python_calls(fn: Callable[[], object]) -> int:
    """Python function calls one request costs: a figure the machine's load does not move."""
    profile = cProfile.Profile()
    profile.runcall(fn)
    return sum(entry.callcount for entry in profile.getstats())


def main() -> None:
    started = time.perf_counter()
    loaded = spec.load()
    if loaded is None:
        print(f"no spec at {spec.SPEC_PATH}: nothing to measure")
        return
    print(f"spec load (parse + loosen), once per process: {time.perf_counter() - started:.3f} s")
    for method, path, body, label in CASES:
        started = time.perf_counter()
        assert validate.refusals(method, path, body) == []
        first = time.perf_counter() - started
        with_spec = per_call(lambda m=method, p=path, b=body: validate.refusals(m, p, b), 200)
        hand = per_call(
            lambda m=method, p=path, b=body: validate.refusals(m, p, b, use_spec=False), 200
        )
        calls = python_calls(lambda m=method, p=path, b=body: validate.refusals(m, p, b))
        print(
            f"{label}: first {first * 1000:.1f} ms (builds the validator); then "
            f"{with_spec * 1000:.2f} ms with the spec ({calls} Python calls) vs "
            f"{hand * 1000:.3f} ms hand rules only"
        )


if __name__ == "__main__":
    main()

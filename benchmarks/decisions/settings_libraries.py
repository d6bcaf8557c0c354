"""Import time plus one validated model, and the RSS it adds: msgspec against pydantic-settings
(docs/decisions.md, "Settings"). Run each in a venv that has the library, once per library:

    python -m benchmarks.decisions.settings_libraries msgspec
    python -m benchmarks.decisions.settings_libraries pydantic

Prints `milliseconds kB-of-RSS-added`. Only the stdlib modules bot.config already imports are
loaded before the clock starts.
"""

import dataclasses  # noqa: F401  (imported by bot.config anyway: not billed to the library)
import pathlib  # noqa: F401
import re  # noqa: F401
import sys
import time
import tomllib  # noqa: F401
import typing
from pathlib import Path


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1])
    return 0


def main(which: str) -> str:
    before, start = rss_kb(), time.perf_counter()
    if which == "msgspec":
        import msgspec

        class S(msgspec.Struct, forbid_unknown_fields=True):
            k1: typing.Annotated[float, msgspec.Meta(ge=0, le=100)] = 1.5

        msgspec.convert({"k1": 2}, S)
    else:
        import pydantic
        import pydantic_settings  # noqa: F401

        class M(pydantic.BaseModel):
            model_config = pydantic.ConfigDict(extra="forbid")
            k1: typing.Annotated[float, pydantic.Field(ge=0, le=100)] = 1.5

        M.model_validate({"k1": 2})
    took = (time.perf_counter() - start) * 1000
    return f"{took:.1f} {rss_kb() - before}"


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else "msgspec"))

"""Write requirements.txt: the runtime dependencies of pyproject.toml, pinned to what is installed.

Why: buildpacks (Heroku-style hosts) and the Dockerfile install from a plain pinned list, so a
deploy gets the versions the tests ran with. Run after changing dependencies:
`python scripts/export_requirements.py`; tests/test_deploy.py checks the file still matches
pyproject.toml's ranges.
"""

from __future__ import annotations

import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent


def closure(requirements: list[str]) -> dict[str, str]:
    """Every distribution the requirements pull in (with extras), name -> installed version."""
    env = default_environment()
    pinned: dict[str, str] = {}
    todo = [(Requirement(r), "") for r in requirements]
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({**env, "extra": extra}):
            continue
        name = canonicalize_name(req.name)
        dist = metadata.distribution(req.name)
        extras = set(req.extras)
        seen = name in pinned
        pinned[name] = dist.version
        for sub in dist.requires or []:
            child = Requirement(sub)
            if child.marker is None:
                if not seen:
                    todo.append((child, ""))
                continue
            for wanted in extras or {""}:
                if child.marker.evaluate({**env, "extra": wanted}):
                    todo.append((child, wanted))
                    break
    return pinned


def render() -> str:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = closure(list(project["dependencies"]))
    lines = [
        "# Pinned runtime dependencies, exported by scripts/export_requirements.py from the",
        "# ranges in pyproject.toml (checked by tests/test_deploy.py). Hosts and the Dockerfile",
        "# install from this file.",
    ]
    lines += [f"{name}=={version}" for name, version in sorted(pins.items())]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    (ROOT / "requirements.txt").write_text(render(), encoding="utf-8")
    sys.stdout.write(render())

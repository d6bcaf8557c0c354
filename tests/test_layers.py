"""The package's import graph: data flows one way, and the search core never sees Discord.

Every `import` in `bot/` (top level or inside a function) is read from the AST, so a lazy import
cannot slip past. Layers, lowest first; a module may import its own package and lower layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BOT = Path(__file__).resolve().parent.parent / "bot"
LAYERS = {
    "bot": 0,  # bot/__init__.py and bot/config/: settings every layer reads
    "bot.config": 0,
    "bot.logs": 0,
    "bot.shards": -1,  # the shard formula and shard settings, which bot.config reads
    "bot.background": 0,
    "bot.timing": 0,
    "bot.papers": 1,
    "bot.search": 2,
    "bot.storage": 2,
    "bot.sources": 3,
    "bot.library": 4,
    "bot.follows": 4,
    "bot.daily": 4,
    "bot.evaluation": 5,
    "bot.app": 6,
    "bot.console": 7,
    "bot.__main__": 8,
}
NO_DISCORD = (
    "bot.papers",
    "bot.search",
    "bot.daily",
    "bot.library",
    "bot.follows",
    "bot.storage",
    "bot.sources",
    "bot.config",
    "bot.evaluation",
)


def module_name(path: Path) -> str:
    parts = path.relative_to(BOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found.extend((node.lineno, f"{node.module}.{a.name}") for a in node.names)
    return found


def layer_of(name: str) -> tuple[str, int]:
    best = max((k for k in LAYERS if name == k or name.startswith(k + ".")), key=len)
    return best, LAYERS[best]


MODULES = sorted(BOT.rglob("*.py"))


def test_every_package_has_a_layer() -> None:
    packages = {module_name(p).split(".")[1] for p in MODULES if module_name(p) != "bot"}
    assert {f"bot.{p}" for p in packages} <= set(LAYERS)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(BOT.parent)))
def test_imports_point_down(path: Path) -> None:
    name = module_name(path)
    home, rank = layer_of(name)
    bad = []
    for line, target in imports(path):
        if target.split(".")[0] == "discord" and name.startswith(NO_DISCORD):
            bad.append(f"line {line}: {name} imports {target} (this layer is Discord-free)")
        if not target.startswith("bot.") or target.split(".")[1] not in {
            k.split(".")[1] for k in LAYERS if "." in k
        }:
            continue
        there, their_rank = layer_of(target)
        if there != home and their_rank >= rank:
            bad.append(f"line {line}: {name} (layer {rank}) imports {target} (layer {their_rank})")
    assert bad == []


@pytest.mark.parametrize(
    "path",
    sorted((BOT / "app" / "cogs").rglob("*.py")),
    ids=lambda p: str(p.relative_to(BOT.parent)),
)
def test_cogs_never_import_each_other(path: Path) -> None:
    name = module_name(path)
    rel = name.removeprefix("bot.app.cogs.").split(".")[0]
    others = [
        target
        for _line, target in imports(path)
        if target.startswith("bot.app.cogs.") and target.split(".")[3] != rel
    ]
    assert others == []

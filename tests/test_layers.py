"""The package's import graph: data flows one way, and the search core never sees Discord.

Features (`bot/library`, `bot/follows`, `bot/daily`, and on Discord `bot/app/exts/<feature>`)
share a layer; one may use another only through that package's own `__init__` (its public
names), never a module inside it. `bot/papers` needs no numpy; evaluation is for the CLI and
benchmarks, never imported by code that serves members.

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
    "bot.foryou": 4,
    "bot.links": 4,
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
    "bot.foryou",
    "bot.links",
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


FEATURES = ("bot.library", "bot.follows", "bot.daily", "bot.foryou", "bot.links")
# Code that serves members (Discord or the console's commands); `bot.console.cli` runs `eval`.
SERVING = ("bot.papers", "bot.search", "bot.storage", "bot.sources", *FEATURES, "bot.app")


def is_module(name: str) -> bool:
    """`name` is a module or package of bot/ (not a name defined in one)."""
    path = BOT.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def feature_of(name: str) -> str | None:
    """The feature a module belongs to, by its short name: `library` for both bot/library and
    bot/app/exts/library (its Discord side); None for shared code."""
    parts = name.split(".")
    if name.startswith("bot.app.exts.") and len(parts) >= 4:
        return parts[3]
    return parts[1] if ".".join(parts[:2]) in FEATURES else None


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
        if (
            there != home
            and their_rank >= rank
            and not (
                there in FEATURES
                and home in FEATURES
                and (target == there or not is_module(target))
            )
        ):
            bad.append(f"line {line}: {name} (layer {rank}) imports {target} (layer {their_rank})")
    assert bad == []


@pytest.mark.parametrize(
    "path",
    sorted((BOT / "app" / "exts").rglob("*.py")),
    ids=lambda p: str(p.relative_to(BOT.parent)),
)
def test_cogs_never_import_each_other(path: Path) -> None:
    name = module_name(path)
    rel = name.removeprefix("bot.app.exts.").split(".")[0]
    others = [
        target
        for _line, target in imports(path)
        if target.startswith("bot.app.exts.") and target.split(".")[3] != rel
    ]
    assert others == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(BOT.parent)))
def test_features_use_each_other_only_through_their_package(path: Path) -> None:
    """A feature reaches another feature only through its package's public names: no
    `bot.library.actions` from bot/follows, no `bot.app.exts.library.views` from another ext."""
    mine = feature_of(module_name(path))
    bad = []
    for line, target in imports(path):
        theirs = feature_of(target) if target.startswith("bot.") else None
        if mine is None or theirs is None or theirs == mine or not is_module(target):
            continue
        if target.startswith("bot.app.exts."):
            bad.append(f"line {line}: imports the Discord side of another feature, {target}")
        elif target != f"bot.{theirs}":
            bad.append(f"line {line}: imports {target}, inside the feature bot.{theirs}")
    assert bad == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(BOT.parent)))
def test_rooms_keep_their_promises(path: Path) -> None:
    """bot/papers imports no numpy (sources tidy records without the engine); evaluation is
    imported by no serving code; the console uses feature packages, never a cog module."""
    name = module_name(path)
    bad = []
    for line, target in imports(path):
        if name.startswith("bot.papers") and target.split(".")[0] == "numpy":
            bad.append(f"line {line}: bot/papers imports numpy")
        if name.startswith(SERVING) and target.startswith("bot.evaluation"):
            bad.append(f"line {line}: serving code imports {target}")
        if name.startswith("bot.console") and target.endswith(".cog") and "exts" in target:
            bad.append(f"line {line}: the console imports the cog module {target}")
        if (
            name.startswith("bot.app.")
            and not name.startswith("bot.app.exts.")
            and target.startswith("bot.app.exts.")
        ):
            bad.append(f"line {line}: shared app code imports the feature {target}")
    assert bad == []

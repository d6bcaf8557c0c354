"""A settings table -> its section dataclass, checked by msgspec; a refusal as one clear line.

msgspec does every check: each key's type, list items, the range or pattern declared with it
in `sections`, literal choices, required keys and unknown keys. This module only hands it the
declarations and turns its error into one line that names the table, the key, the value given
and what is allowed, e.g. `[search] k1 = -1.0 is out of range: use 0.0 to 100.0`. Only the
path (`$.k1`) and a named field are read from msgspec's message; the words come from the
declarations (`msgspec.inspect`) and the value from the table itself.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, fields, replace
from pathlib import Path
from types import GenericAlias
from typing import Any, TypeVar, get_type_hints

import msgspec
from msgspec import inspect as mi

from bot.config.paths import PROJECT_ROOT, resolve
from bot.config.sections import SECTIONS, ConfigError, SourcesSettings

T = TypeVar("T")

_AT = re.compile(r" - at `(\$[^`]*)`$")
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
_FIELD = re.compile(r"(unknown|missing required) field `([^`]+)`")
_SHOW = reprlib.Repr()
_SHOW.maxstring = 60
_SHOW.maxother = 60
_TABLES: dict[type, type[msgspec.Struct]] = {}


def _table(cls: type) -> type[msgspec.Struct]:
    """`cls` (a section dataclass) as a Struct with the same fields, types and defaults.

    Why a Struct: msgspec refuses unknown keys only for Structs (`forbid_unknown_fields`); on
    a dataclass it drops them silently, and a typo would fall back to the default unseen.
    """
    if cls in _TABLES:
        return _TABLES[cls]
    hints = get_type_hints(cls, include_extras=True)
    spec = [
        (f.name, hints[f.name]) if f.default is MISSING else (f.name, hints[f.name], f.default)
        for f in fields(cls)
    ]
    table = msgspec.defstruct(
        f"{cls.__name__}Table", spec, kw_only=True, forbid_unknown_fields=True
    )
    _TABLES[cls] = table
    return table


def _path_hook(base: Path) -> Callable[[type, Any], Any]:
    """msgspec's hook for `Path` fields: a non-empty string, taken against `base`."""

    def hook(kind: type, value: Any) -> Any:
        if kind is Path and isinstance(value, str) and value:
            return resolve(base, value)
        raise ValueError(f"not a {kind.__name__}")

    return hook


def convert(
    raw: Any, cls: type[T], base: Path, where: str, aliases: Mapping[str, str] | None = None
) -> T:
    """The table `raw` (named `where`, e.g. `[search]`) as a `cls`; ConfigError if refused.

    `aliases` maps another name a key may be written under to the field it sets.
    """
    aliases = aliases or {}
    shown: dict[str, str] = {}
    if isinstance(raw, dict):
        # An error names the key as written: `[storage] url = 5`, not `database`.
        shown = {aliases[key]: key for key in raw if key in aliases}
        raw = {aliases.get(key, key): value for key, value in raw.items()}
    table = _checked(raw, _table(cls), base, where, aliases, shown)
    return cls(**msgspec.structs.asdict(table))


def convert_list(raw: Any, cls: type[T], base: Path, where: str) -> tuple[T, ...]:
    """An array of tables (`[[where]]`) as `cls` items; an error names the table by number."""
    tables = _checked(raw, GenericAlias(tuple, (_table(cls), ...)), base, where, {}, {})
    return tuple(cls(**msgspec.structs.asdict(table)) for table in tables)


def check_range(name: str, key: str, value: float | str) -> None:
    """ConfigError unless `value` suits `[name] key` (as written in settings.toml)."""
    cls = {**SECTIONS, "sources": SourcesSettings}[name]
    convert({key: value}, cls, PROJECT_ROOT, f"[{name}]")


def _checked(
    raw: Any,
    kind: Any,
    base: Path,
    where: str,
    aliases: Mapping[str, str],
    shown: Mapping[str, str],
) -> Any:
    try:
        return msgspec.convert(raw, kind, dec_hook=_path_hook(base))
    except msgspec.ValidationError as exc:
        spot = _locate(str(exc), raw, mi.type_info(kind), where)
        spot = replace(spot, key=shown.get(spot.key or "", spot.key))
        raise ConfigError(_message(str(exc), spot, aliases)) from None


@dataclass(frozen=True, slots=True)
class _Spot:
    """Where msgspec's error points: the table, the key, its declared type, the value."""

    where: str
    key: str | None
    declared: mi.Type
    kind: mi.Type
    value: Any
    item: int | None


def _locate(error: str, raw: Any, info: mi.Type, where: str) -> _Spot:
    """Follow the error's path (`$.key`, `$[0].key`, `$.key[2]`) through `raw` and `info`."""
    at = _AT.search(error)
    steps = [(name or int(index)) for name, index in _STEP.findall(at.group(1) if at else "")]
    spot = _Spot(where, None, info, info, raw, None)
    for step in steps:
        value = spot.value[step] if isinstance(spot.value, dict | list) else None
        kind = _inside(spot.kind, step)
        if isinstance(step, str):
            spot = _Spot(spot.where, step, kind, kind, value, None)
        elif spot.key is None:
            spot = _Spot(f"{spot.where} #{step + 1}", None, kind, kind, value, None)
        else:
            spot = _Spot(spot.where, spot.key, spot.declared, kind, value, step + 1)
    return spot


def _message(error: str, spot: _Spot, aliases: Mapping[str, str]) -> str:
    """msgspec's `error` at `spot` as one line, in the words of the settings file."""
    written = {field: alias for alias, field in aliases.items()}
    named = _FIELD.search(error)
    if named:
        table = _plain(spot.kind)
        declared = (
            {f.name: f.type for f in table.fields} if isinstance(table, mi.StructType) else {}
        )
        if named.group(1) == "missing required":
            key = named.group(2)
            return f"{spot.where} needs {key} = {_noun(declared.get(key, mi.AnyType()))}"
        keys = [f"{key} (or {written[key]})" if key in written else key for key in declared]
        return f"{spot.where} has unknown key {named.group(2)}; the keys are {', '.join(keys)}"
    if spot.key is None:
        return f"{spot.where} must be {_noun(spot.kind)}, got {_show(spot.value)}"
    span = _range(_plain(spot.kind), spot.value)
    if span:
        shown = _show(spot.value, spot.kind)
        return f"{spot.where} {spot.key} = {shown} is out of range: {span}"
    if spot.item is None:
        wants = _described(spot.declared) or f"must be {_noun(spot.declared)}"
        return f"{spot.where} {spot.key} {wants}, got {_show(spot.value)}"
    # A bad item of a list: `[discord] shard_ids must be whole numbers, got 'a' (item 2)`.
    wants = _described(spot.declared) or f"must be {_plural(_noun(spot.kind))}"
    return f"{spot.where} {spot.key} {wants}, got {_show(spot.value)} (item {spot.item})"


def _plain(kind: mi.Type) -> mi.Type:
    return kind.type if isinstance(kind, mi.Metadata) else kind


def _inside(kind: mi.Type, step: str | int) -> mi.Type:
    """The type one step (a key, a list index) into `kind`."""
    kind = _plain(kind)
    if isinstance(step, int) and isinstance(kind, mi.VarTupleType | mi.ListType):
        return kind.item_type
    if isinstance(step, str) and isinstance(kind, mi.StructType):
        return next((f.type for f in kind.fields if f.name == step), mi.AnyType())
    return mi.AnyType()


def _described(kind: mi.Type) -> str:
    """`takes …` from the key's own description (Meta(description=…)), if it has one."""
    extra = kind.extra_json_schema if isinstance(kind, mi.Metadata) else None
    text = (extra or {}).get("description")
    return f"takes {text}" if text else ""


def _range(kind: mi.Type, value: Any) -> str:
    """`use LOW to HIGH` when `value` is a number of the right kind, so its range refused it."""
    if isinstance(value, bool) or not isinstance(kind, mi.IntType | mi.FloatType):
        return ""
    if not isinstance(value, int if isinstance(kind, mi.IntType) else int | float):
        return ""
    low, high = kind.ge, kind.le
    if low is not None and high is not None:
        return f"use {low} to {high}"
    return f"use at least {low}" if low is not None else f"use at most {high}"


def _noun(kind: mi.Type) -> str:
    """What a value of `kind` is, in the words of the settings file."""
    kind = _plain(kind)
    if isinstance(kind, mi.VarTupleType | mi.ListType):
        return f"a list of {_plural(_noun(kind.item_type))}"
    if isinstance(kind, mi.LiteralType):
        return "one of " + ", ".join(str(v) for v in kind.values)
    if isinstance(kind, mi.StrType) and kind.pattern:
        return f"a string matching {kind.pattern}"
    names = {
        mi.BoolType: "true or false",
        mi.IntType: "a whole number",
        mi.FloatType: "a number",
        mi.StrType: "a string",
        mi.StructType: "a table",
    }
    if isinstance(kind, mi.CustomType):
        return f"a {kind.cls.__name__.lower()}"
    return names.get(type(kind), "a value")


def _plural(noun: str) -> str:
    """`a path` -> `paths`; a noun without `a ` (`one of x, y`) is left as it is."""
    return f"{noun[2:]}s" if noun.startswith("a ") else noun


def _show(value: Any, kind: mi.Type | None = None) -> str:
    """`value` as TOML would show it (a float key's whole number as a float: `-1.0`)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(kind, mi.FloatType) and isinstance(value, int):
        value = float(value)
    return _SHOW.repr(value)

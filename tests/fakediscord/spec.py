"""Discord's OpenAPI spec (../shared/discord/openapi.json) as request-body validators.

Why: the spec is Discord's own statement of what each route accepts (lengths, counts, enums,
required keys), so the stand-in refuses what it refuses without a hand-kept copy of every
number. It is read lazily, once per process, and each route's compiled validator is cached.
Where the spec is stricter than Discord (ids typed as strings that discord.py sends as
integers; `default_member_permissions`), it is loosened here, as its SOURCE.md says. Where it is
looser, `validate.py` adds the rules by hand. Without ../shared (a user's clone) there is no
spec and only those hand-written rules apply.
"""

from __future__ import annotations

import copy
import functools
import json
import logging
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError, best_match

log = logging.getLogger(__name__)

SPEC_PATH = Path(__file__).resolve().parents[2].parent / "shared" / "discord" / "openapi.json"
URL_SCHEMES = ("http", "https", "attachment")
_HOST = re.compile(r"^(?=.*[a-z0-9])[a-z0-9-]+(\.[a-z0-9-]+)*\.?$|^\[[0-9a-f:.]+\]$", re.I)


def well_formed_url(url: object) -> bool:
    """Discord's idea of a usable link: http(s) (or attachment://), a real host, no spaces."""
    if not isinstance(url, str) or not url or any(c.isspace() for c in url):
        return False
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return False
    if parts.scheme == "attachment":
        return bool(parts.netloc)
    return parts.scheme in URL_SCHEMES and bool(_HOST.match(host))


FORMATS = FormatChecker(formats=())
FORMATS.checks("uri")(well_formed_url)


@dataclass
class Spec:
    """The loaded spec: routes as regexes, and one compiled validator per route on demand."""

    document: dict[str, Any]
    load_seconds: float
    routes: list[tuple[str, re.Pattern[str], str]] = field(default_factory=list)
    _validators: dict[tuple[str, str], Draft202012Validator | None] = field(default_factory=dict)
    _templates: dict[tuple[str, str], str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for template, item in self.document.get("paths", {}).items():
            for method in item:
                regex = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template))
                self.routes.append((method.upper(), re.compile(regex), template))
        # literal segments (".../@original") win over parameters ("{message_id}")
        self.routes.sort(key=lambda route: route[2].count("{"))

    def template(self, method: str, path: str) -> str | None:
        key = (method, path)
        if key not in self._templates:
            found = None
            for route_method, regex, template in self.routes:
                if route_method == method and regex.fullmatch(path):
                    found = template
                    break
            self._templates[key] = found
        return self._templates[key]

    def validator(self, method: str, path: str) -> Draft202012Validator | None:
        """The request-body validator of the route `path` belongs to (None: no body schema)."""
        template = self.template(method, path)
        if template is None:
            return None
        key = (method, template)
        if key not in self._validators:
            operation = self.document["paths"][template][method.lower()]
            content = (operation.get("requestBody") or {}).get("content") or {}
            schema = (content.get("application/json") or {}).get("schema")
            validator = None
            if schema is not None:
                root = {**schema, "components": self.document["components"]}
                validator = Draft202012Validator(root, format_checker=FORMATS)
            self._validators[key] = validator
        return self._validators[key]

    def errors(self, method: str, path: str, body: Any) -> list[tuple[list[str | int], str]]:
        """(field path, message) for every way `body` breaks the route's schema."""
        validator = self.validator(method, path)
        if validator is None or body is None:
            return []
        found = []
        for error in validator.iter_errors(body):
            error = _deepest(error)
            found.append((list(error.absolute_path), _message(error)))
        return found


def _branch_misses(errors: list[ValidationError]) -> bool:
    """True when a oneOf/anyOf branch fails only because it is the wrong kind of object."""
    for error in errors:
        rel = list(error.relative_path)
        if error.validator in ("enum", "const") and rel and rel[-1] in ("type", "style"):
            return True
        if error.validator == "type" and not rel:
            return True
    return False


def _deepest(error: ValidationError) -> ValidationError:
    """For anyOf/oneOf, the error of the branch the payload meant (same `type` discriminator)."""
    while error.context:
        branches: dict[Any, list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        meant = [errs for errs in branches.values() if not _branch_misses(errs)]
        if not meant:
            return best_match(error.context) or error
        error = min(meant, key=len)[0]
    return error


def _message(error: ValidationError) -> str:
    """Discord-like wording: 'Must be 256 or fewer in length.'"""
    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "maxLength":
        return f"Must be {schema.get('maxLength')} or fewer in length."
    if error.validator == "minLength":
        return f"Must be {schema.get('minLength')} or more in length."
    if error.validator == "maxItems":
        return f"Must be {schema.get('maxItems')} or fewer in length."
    if error.validator == "minItems":
        return f"Must be {schema.get('minItems')} or more in length."
    if error.validator == "format":
        return "Not a well formed URL."
    if error.validator == "required":
        return "This field is required"
    return str(error.message)[:200]


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _loosen(document: dict[str, Any]) -> None:
    """Accept what Discord accepts although the spec says otherwise (see SOURCE.md)."""
    schemas = document["components"]["schemas"]
    schemas["SnowflakeType"] = {
        "anyOf": [schemas["SnowflakeType"], {"type": "integer", "minimum": 0}]
    }
    for node in _walk(document["components"]):
        props = node.get("properties")
        if isinstance(props, dict) and "default_member_permissions" in props:
            props["default_member_permissions"] = {
                "anyOf": [
                    props["default_member_permissions"],
                    {"type": "string", "pattern": "^[0-9]+$"},
                ]
            }


def _kinds(document: dict[str, Any], branch: Any) -> list[Any] | None:
    """The `type` values a oneOf/anyOf branch accepts, when `type` is required and enumerated."""
    if isinstance(branch, dict) and "$ref" in branch:
        ref = str(branch["$ref"])
        if not ref.startswith("#/components/schemas/"):
            return None
        branch = document["components"]["schemas"].get(ref.rsplit("/", 1)[1])
    if not isinstance(branch, dict) or "type" not in (branch.get("required") or []):
        return None
    kind = (branch.get("properties") or {}).get("type") or {}
    values = kind.get("enum") or ([kind["const"]] if "const" in kind else None)
    return list(values) if values else None


def _simplify(document: dict[str, Any]) -> None:
    """Cheaper forms of two patterns the spec repeats everywhere, accepting the same payloads.

    `oneOf: [{"type": "null"}, X]` becomes `anyOf: [X, {"type": "null"}]` (the branches cannot
    both match, and anyOf stops at the first that does, so X alone is checked for a value);
    an `allOf: [{"$ref": "...Types"}]` beside an `enum` is dropped (the enum is narrower).
    """
    for node in _walk([document["components"], document.get("paths", {})]):
        branches = node.get("oneOf")
        if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
            other = [b for b in branches if b != {"type": "null"}]
            del node["oneOf"]
            node["anyOf"] = [*other, {"type": "null"}]
        if (
            "enum" in node
            and isinstance(node.get("allOf"), list)
            and all(set(b) == {"$ref"} for b in node["allOf"])
        ):
            del node["allOf"]


def _discriminate(document: dict[str, Any]) -> None:
    """Turn a oneOf/anyOf told apart by a required `type` into if/then per `type` value.

    Why: jsonschema validates a payload against every branch of a oneOf (eleven option kinds
    for each command option, a dozen component kinds for each component), which made one
    command sync cost ~100 ms; with if/then only the branch the `type` names is checked, and
    its errors carry the field path directly. Left alone when the kinds overlap or a branch
    does not require `type`, so the accepted payloads are the same.
    """
    for node in _walk([document["components"], document.get("paths", {})]):
        for key in ("oneOf", "anyOf"):
            branches = node.get(key)
            if not isinstance(branches, list) or len(branches) < 2:
                continue
            kinds = [_kinds(document, b) for b in branches]
            flat = [v for k in kinds for v in (k or [])]
            if any(k is None for k in kinds) or len(flat) != len(set(map(repr, flat))):
                continue
            rules: list[dict[str, Any]] = [{"required": ["type"]}]
            rules.append({"properties": {"type": {"enum": flat}}})
            for branch, values in zip(branches, kinds, strict=True):
                condition = {"properties": {"type": {"enum": values}}}
                rules.append({"if": condition, "then": branch})
            del node[key]
            node.setdefault("allOf", []).extend(rules)


@functools.cache
def load(path: Path = SPEC_PATH) -> Spec | None:
    """The spec, read once per process; None (hand-written rules only) when it is absent."""
    if not path.exists():
        log.info("no Discord OpenAPI spec at %s: hand-written rules only", path)
        return None
    started = time.perf_counter()
    document = json.loads(path.read_text(encoding="utf-8"))
    _loosen(document)
    _simplify(document)
    _discriminate(document)
    spec = Spec(document, time.perf_counter() - started)
    log.info("Discord OpenAPI spec loaded in %.3f s", spec.load_seconds)
    return spec


def schema(name: str) -> dict[str, Any] | None:
    """A copy of one `components/schemas` entry (for the limits cross-check), or None."""
    spec = load()
    if spec is None:
        return None
    return copy.deepcopy(spec.document["components"]["schemas"].get(name))

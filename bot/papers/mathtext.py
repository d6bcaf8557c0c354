"""Superscripts, subscripts and fractions of inline math, written so they keep their meaning.

pylatexenc flattens `$dn^{\\frac{d+1}{d}}$` to `dn^d+1/d`, which reads as (dn^d)+(1/d). Here,
inside a math span and before pylatexenc sees it, each `^{...}`, `_{...}` and `\\frac{a}{b}`
becomes plain text: a script in Unicode superscript or subscript letters when every character
has one (`n²`, `xᵢ`, `kₜ₊₁`), else `^x` for one character and `^(...)` around more
(`n^(-1/2)`, `dn^((d+1)/d)`); a fraction `a/b`, each side in parentheses unless it is one word
or number (`(d+1)/d`). The analyzer folds to NFKD, so `xᵢ` is still the word `xi` it indexed
when it read `x_i`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

SUPERSCRIPTS = dict(
    zip(
        "0123456789+-−=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVWαβγδθφχι",
        "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂᵅᵝᵞᵟᶿᵠᵡᶥ",
        strict=True,
    )
)
SUBSCRIPTS = dict(
    zip(
        "0123456789+-−=()aehijklmnoprstuvxβγρφχ",
        "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ",
        strict=True,
    )
)
# Scripts already written in Unicode stay as they are inside a longer one (`e^{-x^2}`: e⁻ˣ²).
_ALREADY_SUP = set(SUPERSCRIPTS.values())
_ALREADY_SUB = set(SUBSCRIPTS.values())
FRACTIONS = ("\\dfrac", "\\tfrac", "\\cfrac", "\\frac")
_MACRO = re.compile(r"\\(?:[A-Za-z]+|.)", re.S)
_ATOM = re.compile(r"^(?:[√∛∜]?[^\W_]+|.|\(.*\))$", re.S)
# Characters pylatexenc would read as markup if a rendered piece were spliced back unescaped.
_PROTECT = str.maketrans({"{": "\\{", "}": "\\}", "%": "\\%", "&": "\\&", "#": "\\#", "~": " "})


def _argument(src: str, i: int) -> tuple[str, int] | None:
    """The argument starting at `src[i]` (spaces skipped): a `{group}`, a macro, or one
    character; with the index after it. None when there is none (end, or an unmatched brace)."""
    while i < len(src) and src[i] == " ":
        i += 1
    if i >= len(src) or src[i] in "}^_":
        return None
    if src[i] == "{":
        depth = 0
        for j in range(i, len(src)):
            if src[j] == "\\":
                continue
            if src[j] == "{" and (j == 0 or src[j - 1] != "\\"):
                depth += 1
            elif src[j] == "}" and src[j - 1] != "\\":
                depth -= 1
                if depth == 0:
                    return src[i + 1 : j], j + 1
        return None
    if src[i] == "\\":
        macro = _MACRO.match(src, i)
        assert macro is not None
        if macro.group(0) in FRACTIONS:  # `^\\frac{2}{5}`: the fraction is the argument
            top = _argument(src, macro.end())
            bottom = _argument(src, top[1]) if top is not None else None
            if bottom is not None:
                return src[i : bottom[1]], bottom[1]
        return macro.group(0), macro.end()
    return src[i], i + 1


def script(text: str, superscript: bool) -> str:
    """`text` raised or lowered: Unicode when every character has a form, else ^x / ^(...)."""
    text = " ".join(text.split())
    table, already = (SUPERSCRIPTS, _ALREADY_SUP) if superscript else (SUBSCRIPTS, _ALREADY_SUB)
    if text and all(ch in table or ch in already for ch in text):
        return "".join(table.get(ch, ch) for ch in text)
    mark = "^" if superscript else "_"
    if len(text) == 1 or (text.startswith("(") and text.endswith(")") and _balanced(text)):
        return mark + text
    return f"{mark}({text})"


def _balanced(text: str) -> bool:
    """`(a)(b)` is not one parenthesised group; `(a(b))` is."""
    depth = 0
    for index, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and index < len(text) - 1:
            return False
    return depth == 0


def fraction(top: str, bottom: str) -> str:
    """`a/b`, each side in parentheses unless it is one word, one character or already
    parenthesised."""
    sides = []
    for side in (" ".join(top.split()), " ".join(bottom.split())):
        sides.append(side if _ATOM.match(side) and _balanced_or_plain(side) else f"({side})")
    return "/".join(sides)


def _balanced_or_plain(side: str) -> bool:
    return not side.startswith("(") or _balanced(side)


def _splice(out: list[str], text: str) -> None:
    """Add rendered `text`, protected from pylatexenc, and kept apart from a macro before it
    (`\\epsilonₘᵢₙ` would read as one macro name: pylatexenc takes any letter)."""
    if out and out[-1].startswith("\\") and out[-1][-1].isalpha():
        out.append("{}")
    out.append(text.translate(_PROTECT))


def rewrite(src: str, render: Callable[[str], str]) -> str:
    """The math source `src` with its scripts and fractions replaced by plain text; `render`
    turns an argument's LaTeX into text (it is the span converter, so arguments nest)."""
    if "^" not in src and "_" not in src and "frac" not in src:
        return src
    out: list[str] = []
    i = 0
    while i < len(src):
        ch = src[i]
        if ch in "^_":
            found = _argument(src, i + 1)
            if found is None:
                out.append(ch)
                i += 1
                continue
            arg, i = found
            _splice(out, script(render(arg), ch == "^"))
        elif ch == "\\":
            macro = _MACRO.match(src, i)
            assert macro is not None
            name = macro.group(0)
            top = _argument(src, macro.end()) if name in FRACTIONS else None
            bottom = _argument(src, top[1]) if top is not None else None
            if top is None or bottom is None:
                out.append(name)
                i = macro.end()
                continue
            _splice(out, fraction(render(top[0]), render(bottom[0])))
            i = bottom[1]
        else:
            out.append(ch)
            i += 1
    return "".join(out)

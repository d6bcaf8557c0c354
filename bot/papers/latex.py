"""LaTeX fragments to readable Unicode, shared by the analyzer (words) and display (people).

Abstracts carry inline math (`$\\ell_1$`, `$O(\\log k)$`), text macros (`\\texttt{qPOTS}`),
escapes (`80\\%`) and TeX quotes. Running pylatexenc over a whole abstract costs milliseconds
and treats a bare `50%` as a comment that eats the rest of the line, so only the LaTeX spans
themselves are converted, and each distinct span once (they repeat a lot across a corpus).

No word may be lost on the way (a title that loses `\\texttt{qPOTS}` loses the one word people
search for), so the rules are: every text-style macro keeps its text; a macro pylatexenc does
not know keeps its argument (`\\ours{ProtoNet}` -> ProtoNet) or, standing alone, its own name
(`\\manifoldmixup` -> manifoldmixup: the author's shorthand for the method); accents stay
accents (`\\widetilde{O}` -> Õ, a different symbol from O). Deliberately dropped: citation
keys, environment names, colours, link targets and the names of symbol macros (`\\epsilon`
is shown as ε); a "no word lost" property over every paper list holds the rest to this.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from typing import Any, NamedTuple

from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db
from pylatexenc.latexwalker import LatexWalker
from pylatexenc.latexwalker import get_default_latex_context_db as walker_db
from pylatexenc.macrospec import MacroSpec

from bot.papers.mathtext import rewrite

# $$...$$, $...$, \(...\), {\em ...} groups, a command with its brace arguments
# (\textit{...}, \cite{a,b}), or an accent command (\"o, \'{e}).
LATEX_SPAN = re.compile(
    r"\$\$[^$]+\$\$"
    r"|\$(?=\S)[^$\n]{0,400}?(?<=\S)\$(?!\d)"
    r"|\\\((?:[^\\]|\\(?!\)))*?\\\)"
    r"|\{\\[A-Za-z]+\s[^{}\n]{0,400}\}"
    r"|\\[A-Za-z]+\*?(?:\[[^\]\n]{0,100}\])?(?:\{[^{}\n]{0,400}\})*"
    r"|\\['\"`^~=.](?:\{[A-Za-z]\}|[A-Za-z])"
)
# Escaped characters outside math: `80\%` is a percentage, `R\&D` an ampersand.
_ESCAPE = re.compile(r"\\([%&_#{}])|\\(['\"`])(?=\s)")
_PERCENT_AFTER_NUMBER = re.compile(r"(?<=\d)\s*\\%")
_DOLLAR = "\ue000"  # a literal `\$` hides here while math spans are found
# Bounded: an unbounded `(.+?)''` scans to the end for every `` without a closing '' (code
# fences in an abstract), which made a 170 KB abstract take ~20 s.
_TEX_QUOTES = re.compile(r"``(.{1,400}?)''", re.DOTALL)
_MACRO_NAME = re.compile(r"\\([A-Za-z]+)(\s*)(?=(\{)?)")
_SPACES = re.compile(r"\s+")
# Citations are no text a reader can use: `~\cite{key}` and the `<cit.>` other converters
# leave are dropped with the space or tie before them, and so are brackets left empty.
CITE_MACROS = "cite citep citet citealp citealt citeauthor citeyear citenum nocite".split()
_CITATION = re.compile(
    r"[ \t]*~?[ \t]*(?:\\(?:" + "|".join(CITE_MACROS) + r")\*?(?:\[[^\]\n]{0,100}\])*"
    r"\{[^{}\n]{0,400}\}|<cit\.>)"
)
_EMPTY_BRACKETS = re.compile(r"[ \t]*(?:\([ \t,;]*\)|\[[ \t,;]*\])")
_EM_DASH = re.compile(r"(?<!-)---(?!-)")
# A math span's delimiters: its inside gets `mathtext.rewrite` (scripts and fractions).
_MATH = re.compile(r"^(\$\$|\$|\\\()(.*?)(\$\$|\$|\\\))$", re.S)

# Text-style macros whose argument is the text (pylatexenc's defaults drop some of them).
TEXT_MACROS = (
    "texttt",
    "textbf",
    "textit",
    "textsc",
    "textsf",
    "textrm",
    "textup",
    "textsl",
    "textmd",
    "textnormal",
    "emph",
    "mathrm",
    "mathbf",
    "mathit",
    "mathsf",
    "mathtt",
    "mathnormal",
    "boldsymbol",
    "bm",
    "operatorname",
    "text",
    "mbox",
    "hbox",
    "enquote",
    "underline",
    "uline",
    "textcolor",
    "colorbox",
    "hl",
)
# Macros in abstracts that are not standard LaTeX but have one obvious reading.
SHORTHANDS = {
    "eg": "e.g.",
    "ie": "i.e.",
    "etal": "et al.",
    "eps": "ε",
    "R": "ℝ",
    "otilde": "Õ",
    "Ot": "Õ",
    "tlO": "Õ",
    "texttimes": "×",
    "textmu": "µ",
    "micro": "µ",
    "textemdash": "—",
    "LaTeX": "LaTeX",
    "poly": "poly",
    "norm": "",
}
# Delimiter sizes (`\\left(`, `\\big)`): no text, the delimiter after them is.
SHORTHANDS.update(
    dict.fromkeys(
        "left right middle big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr Biggl Biggr".split(),
        "",
    )
)
# Font switches (`{\\em word}`): the words inside stay, the switch itself is no text.
FONT_SWITCHES = (
    "em it bf rm sc tt sf sl cal up md normalfont bfseries itshape ttfamily scshape sffamily "
    "rmfamily small large Large LARGE huge Huge normalsize footnotesize scriptsize tiny"
).split()

# pylatexenc warns on every macro it cannot expand (\url, \underline): noise, not a problem.
logging.getLogger("pylatexenc").setLevel(logging.ERROR)


def _accent(combining: str) -> Callable[[Any, LatexNodes2Text], str]:
    """A replacement that puts `combining` over each letter of the macro's argument."""

    def render(node: Any, l2tobj: LatexNodes2Text) -> str:
        args = node.nodeargd.argnlist if node.nodeargd else []
        inner = l2tobj.nodelist_to_text([a for a in args if a is not None]).strip()
        return unicodedata.normalize("NFC", "".join(ch + combining for ch in inner))

    return render


_SUPERSCRIPT = str.maketrans("0123456789n", "⁰¹²³⁴⁵⁶⁷⁸⁹ⁿ")


def _root(node: Any, l2tobj: LatexNodes2Text) -> str:
    """`\\sqrt[4]{T}` -> ⁴√(T): the root's index is a number people read, not markup."""
    args = node.nodeargd.argnlist if node.nodeargd else []
    index = l2tobj.nodelist_to_text([args[0]]).strip() if args and args[0] is not None else ""
    body = l2tobj.nodelist_to_text([a for a in args[1:] if a is not None]).strip()
    if index and index.translate(_SUPERSCRIPT) != index:
        index = index.translate(_SUPERSCRIPT)
    return f"{index}√({body})" if len(body) > 1 else f"{index}√{body}"


def _keep_args(node: Any, l2tobj: LatexNodes2Text) -> str:
    """The last argument's text (`\\textcolor{red}{word}` -> word; `\\texttt{x}` -> x)."""
    args = [a for a in (node.nodeargd.argnlist if node.nodeargd else []) if a is not None]
    return str(l2tobj.nodelist_to_text(args[-1:])) if args else ""


class _Tools(NamedTuple):
    converter: LatexNodes2Text
    parse_db: Any  # pylatexenc's LatexContextDb for the walker: which macros take arguments
    known: frozenset[str]


@lru_cache(maxsize=1)
def _converter() -> _Tools:
    """The converter with the project's macro rules, and the macro names it knows.

    Built on first use, not at import: pylatexenc's databases take a moment to assemble.
    """
    db = get_default_latex_context_db()
    specs = [MacroTextSpec(name, simplify_repl=_keep_args) for name in TEXT_MACROS]
    specs += [
        MacroTextSpec("widetilde", simplify_repl=_accent("\u0303")),
        MacroTextSpec("widehat", simplify_repl=_accent("\u0302")),
        MacroTextSpec("overline", simplify_repl=_accent("\u0305")),
        MacroTextSpec("sqrt", simplify_repl=_root),
    ]
    specs += [MacroTextSpec(name, simplify_repl=text) for name, text in SHORTHANDS.items()]
    specs += [MacroTextSpec(name, discard=True) for name in FONT_SWITCHES]
    specs += [MacroTextSpec(name, discard=True) for name in CITE_MACROS]
    db.add_context_category("paperbot", macros=specs, prepend=True)
    parse_db = walker_db()
    parse_db.add_context_category(
        "paperbot",
        macros=[MacroSpec(name, "{") for name in ("mbox", "hbox", "operatorname", "bm", "hl")]
        + [MacroSpec(name, "{{") for name in ("textcolor", "colorbox", "href")]
        + [MacroSpec(name, "{") for name in ("uline", "url", "enquote")],
        prepend=True,
    )
    known = frozenset(spec.macroname for spec in db.iter_macro_specs()) | frozenset(
        spec.macroname for spec in parse_db.iter_macro_specs()
    )
    converter = LatexNodes2Text(latex_context=db, math_mode="text", strict_latex_spaces=False)
    return _Tools(converter, parse_db, known)


def _unknown_macros(span: str, known: frozenset[str]) -> str:
    """Unknown macros: with a `{argument}` the argument stays, alone the name becomes a word."""

    def replace(match: re.Match[str]) -> str:
        name, space, brace = match.group(1), match.group(2), match.group(3)
        if name in known:
            return match.group(0)
        return "" if brace else name + (space or " ")

    return _MACRO_NAME.sub(replace, span)


@lru_cache(maxsize=65536)
def span_to_text(span: str) -> str:
    """One LaTeX span as plain Unicode; falls back to the span without markup if it won't parse."""
    tools = _converter()
    math = _MATH.match(span)
    if math:  # scripts and fractions first: `\\tfrac` is no macro pylatexenc knows
        span = math[1] + rewrite(math[2], _argument_text) + math[3]
    source = _unknown_macros(span, tools.known).replace("%", r"\%")
    try:
        walker = LatexWalker(source, latex_context=tools.parse_db, tolerant_parsing=True)
        nodes, _pos, _len = walker.get_latex_nodes()
        text = str(tools.converter.nodelist_to_text(nodes))
    except Exception:  # noqa: BLE001 - pylatexenc raises many types on odd input; plain text is fine
        text = re.sub(r"[\\${}]", " ", span)
    return _SPACES.sub(" ", text).strip()


def _argument_text(arg: str) -> str:
    """A script's or fraction's argument as text (through `span_to_text`, so they nest)."""
    return span_to_text("$" + arg + "$") if arg.strip() else ""


def has_latex(text: str) -> bool:
    return "$" in text or "\\" in text or "``" in text


def latex_to_unicode(text: str) -> str:
    """Replace every LaTeX span in `text` by its Unicode rendering; other text is untouched."""
    if "---" in text:
        text = _EM_DASH.sub("—", text)
    if "<cit.>" in text or "\\cite" in text:
        text = _drop_citations(text)
    if not has_latex(text):
        return text
    if "``" in text:
        text = _TEX_QUOTES.sub(lambda m: "“" + m.group(1) + "”", text)
    if "\\" in text:
        text = text.replace("\\$", _DOLLAR)
        if "\\%" in text:  # the pattern starts with a lookbehind: tried at every character
            text = _PERCENT_AFTER_NUMBER.sub(" %", text)
        text = _ESCAPE.sub(lambda m: m.group(1) or m.group(2), text)
    if "$" in text or "\\" in text:
        text = LATEX_SPAN.sub(lambda m: span_to_text(m.group(0)), text)
    return text.replace(_DOLLAR, "$")


def _drop_citations(text: str) -> str:
    dropped = _CITATION.sub("", text)
    return dropped if dropped == text else _EMPTY_BRACKETS.sub("", dropped)


def display_title(title: str) -> str:
    """A title as people read it on every surface: LaTeX rendered, line breaks folded."""
    return " ".join(latex_to_unicode(title).split())

"""LaTeX fragments to readable Unicode, shared by the analyzer (words) and display (people).

Abstracts carry inline math (`$\\ell_1$`, `$O(\\log k)$`) and the odd `\\textit{...}`. Running
pylatexenc over a whole abstract costs milliseconds and treats a bare `50%` as a comment that
eats the rest of the line, so only the LaTeX spans themselves are converted, and each distinct
span once (they repeat a lot across a corpus).
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache

from pylatexenc.latex2text import LatexNodes2Text

# $$...$$, $...$, \(...\), or a command with its brace arguments (\textit{...}, \cite{a,b}).
LATEX_SPAN = re.compile(
    r"\$\$[^$]+\$\$"
    r"|\$(?=\S)[^$\n]{0,400}?(?<=\S)\$(?!\d)"
    r"|\\\((?:[^\\]|\\(?!\)))*?\\\)"
    r"|\\[A-Za-z]+\*?(?:\[[^\]\n]{0,100}\])?(?:\{[^{}\n]{0,400}\})*"
)

# pylatexenc warns on every macro it cannot expand (\url, \underline): noise, not a problem.
logging.getLogger("pylatexenc").setLevel(logging.ERROR)

_converter = LatexNodes2Text(math_mode="text", strict_latex_spaces=False)


@lru_cache(maxsize=65536)
def span_to_text(span: str) -> str:
    """One LaTeX span as plain Unicode; falls back to the span without markup if it won't parse."""
    try:
        text = _converter.latex_to_text(span.replace("%", r"\%"))
    except Exception:  # noqa: BLE001 - pylatexenc raises many types on odd input; plain text is fine
        text = re.sub(r"[\\${}]", " ", span)
    return text.strip()


def has_latex(text: str) -> bool:
    return "$" in text or "\\" in text


def latex_to_unicode(text: str) -> str:
    """Replace every LaTeX span in `text` by its Unicode rendering; other text is untouched."""
    if not has_latex(text):
        return text
    return LATEX_SPAN.sub(lambda m: span_to_text(m.group(0)), text)

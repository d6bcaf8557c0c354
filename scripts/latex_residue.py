"""How many abstracts of the paper lists still show LaTeX residue once rendered (issue 28.5).

Counts, over every abstract of the six Paper Copilot lists, the rendered abstracts
(`latex_to_unicode`, what Discord and the console show) that keep:

* `---`: TeX's em dash, left as three hyphens;
* citation residue: `<cit.>` or a `\\cite` left in the text;
* a flattened script: a math span with a script of two or more characters
  (`$n^{-1/2}$`) rendered as `^` or `_` followed by two or more characters that are not in
  parentheses (`n^-1/2`, `dn^d+1/d`, `k_t+1`), which reads as something else;
* a flattened fraction: a `\\frac` with a compound side (`\\frac{d+1}{d}`) whose rendering
  has no parentheses around that side.

`--module PATH` renders with another copy of `bot/papers/latex.py` (the "before" figures:
`git show 31b838d:bot/papers/latex.py > /tmp/latex_before.py`).

    .venv/bin/python scripts/latex_residue.py [--module /tmp/latex_before.py]
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.papers.corpus import load_file  # noqa: E402

PAPERLISTS = ROOT.parent / "shared" / "data" / "paperlists"
FLAT_SCRIPT = re.compile(r"[\^_](?![(])[^\s(),.;:]{2,}")
CITATION = re.compile(r"<cit\.>|\\cite")
LONG_SCRIPT = re.compile(r"[\^_]\{[^{}]{2,}\}")
COMPOUND_FRACTION = re.compile(r"\\[dtc]?frac\{([^{}]*[-+*/ ][^{}]*)\}\{([^{}]*)\}")
MATH = re.compile(r"\$[^$]+\$")


def renderer(module: Path | None) -> Callable[[str], str]:
    if module is None:
        from bot.papers.latex import latex_to_unicode

        return latex_to_unicode
    spec = importlib.util.spec_from_file_location("latex_under_test", module)
    assert spec is not None
    assert spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    render: Callable[[str], str] = loaded.latex_to_unicode
    return render


def flattened_script(abstract: str, render: Callable[[str], str]) -> bool:
    """A math span with a multi-character script that renders flattened."""
    return any(
        FLAT_SCRIPT.search(render(span))
        for span in MATH.findall(abstract)
        if LONG_SCRIPT.search(span)
    )


def flattened_fraction(abstract: str, render: Callable[[str], str]) -> bool:
    """A compound-sided `\\frac` in a math span that renders without a `(` before its `/`."""
    for span in MATH.findall(abstract):
        if COMPOUND_FRACTION.search(span):
            shown = render(span)
            if "/" in shown and ")/" not in shown:
                return True
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--module", type=Path, help="render with this copy of latex.py")
    args = parser.parse_args()
    if not PAPERLISTS.is_dir():
        print(f"{PAPERLISTS} is absent (shared data)", file=sys.stderr)
        return 1
    render = renderer(args.module)
    counts = {"abstracts": 0, "---": 0, "citation": 0, "script": 0, "fraction": 0}
    for path in sorted(PAPERLISTS.glob("*.json")):
        for paper in load_file(path, exclude_status=()).papers:
            counts["abstracts"] += 1
            shown = render(paper.abstract)
            counts["---"] += "---" in shown
            counts["citation"] += bool(CITATION.search(shown))
            counts["script"] += flattened_script(paper.abstract, render)
            counts["fraction"] += flattened_fraction(paper.abstract, render)
    print(
        f"{counts['abstracts']} abstracts; keeping `---`: {counts['---']}; citation residue: "
        f"{counts['citation']}; flattened scripts: {counts['script']}; flattened fractions: "
        f"{counts['fraction']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

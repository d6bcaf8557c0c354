"""LaTeX that keeps its meaning (issue 28.5): scripts, fractions, dashes and citations."""

from __future__ import annotations

import pytest

from bot.papers.latex import latex_to_unicode
from bot.papers.mathtext import fraction, script
from bot.search.analysis.analyzer import Analyzer


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        (r"$dn^{\frac{d+1}{d}}$", "dn^((d+1)/d)"),  # was dn^d+1/d: (dn^d) + 1/d
        (r"$O(n^2)$", "O(n²)"),
        (r"$x_i^2$", "xᵢ²"),
        (r"$k_{t+1}$", "kₜ₊₁"),
        (r"$n^{-1/2}$", "n^(-1/2)"),  # '/' has no superscript: parentheses
        (r"$\mathcal{O}(T^{2/3})$", "𝒪(T^(2/3))"),
        (r"$e^{-x^2}$", "e⁻ˣ²"),  # nested scripts
        (r"$x^{(i)}$", "x⁽ⁱ⁾"),
        (r"$A^\top$", "A^⊤"),  # one character without a superscript form
        (r"$\mathbb{R}^{d \times n}$", "ℝ^(d × n)"),
        (r"$\epsilon_{\text{min}}$", "ϵₘᵢₙ"),  # not read as the macro \epsilonₘᵢₙ
        (r"$\frac{1}{2}$", "1/2"),
        (r"$\tfrac{1}{n}$", "1/n"),  # was "1n"
        (r"$\frac{a+b}{c+d}$", "(a+b)/(c+d)"),
        (r"$(\frac{\sqrt{d}}{M})^\frac{2}{5}$", "(√d/M)^(2/5)"),
        (r"$\frac12k$", "1/2k"),
        (r"$\ell_1$ and $2^{n}$", "ℓ₁ and 2ⁿ"),
    ],
)
def test_scripts_and_fractions_keep_their_meaning(source: str, shown: str) -> None:
    assert latex_to_unicode(source) == shown


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("models---we show", "models—we show"),
        ("a -- b and c ---- d", "a -- b and c ---- d"),  # only TeX's em dash
        (r"as shown~\cite{smith2020}.", "as shown."),
        (r"prior work \citep[see][p. 3]{a,b} does", "prior work does"),
        ("as in <cit.> and others (<cit.>).", "as in and others."),
        (r"trained (\citet{x}; \citep{y}) well", "trained well"),
    ],
)
def test_dashes_and_citations(source: str, shown: str) -> None:
    assert latex_to_unicode(source) == shown


def test_unicode_scripts_are_the_same_search_words() -> None:
    """The analyzer folds to NFKC/NFKD: `xᵢ` indexes as `xi`, as `x_i` did."""
    words = Analyzer().words
    assert latex_to_unicode("$x_i$ and $n^2$") == "xᵢ and n²"
    assert words("$x_i$ and $n^2$") == ["xi", "n2"]  # as `x_i` and `n^2` were indexed


def test_script_and_fraction_rules() -> None:
    assert script("2k-2", True) == "²ᵏ⁻²"
    assert script("q", True) == "^q"  # q has no superscript letter
    assert script("2/3", False) == "_(2/3)"
    assert script("(a)(b)", True) == "⁽ᵃ⁾⁽ᵇ⁾"
    assert script("(a)*(b)", True) == "^((a)*(b))"
    assert fraction("(a+b)", "c") == "(a+b)/c"
    assert fraction("√d", "2π") == "√d/2π"
    assert fraction("d", "2 π") == "d/(2 π)"


def test_delimiter_sizes_are_no_words() -> None:
    """`\\left(` was shown as "left (": the size is no text, the delimiter is."""
    assert latex_to_unicode(r"$O\left(n^{2}\right)$") == "O(n²)"
    assert latex_to_unicode(r"$\big(x\big)^2$") == "(x)²"

"""No word is lost between a paper's source text and what people see or search.

Every alphanumeric run of a title or abstract must survive in the rendered text (what Discord,
the console and the CLI show) or in the analyzer's words (what the index holds). The runs that
are deliberately dropped are spelled out below, each with its reason.
"""

import re
from pathlib import Path

import pytest

from bot.config import PROJECT_ROOT
from bot.papers.corpus import load_file
from bot.papers.latex import display_title, latex_to_unicode
from bot.papers.records import Paper
from bot.search.analysis.analyzer import Analyzer, fold
from bot.sources.seed import read_seed

A = Analyzer()
SHARED = PROJECT_ROOT.parent / "shared"
PAPERLISTS = SHARED / "data" / "paperlists"
SEED = SHARED / "seeds" / "icml2026-abstracts.txt"
SAMPLE = Path(__file__).resolve().parents[2] / "data" / "latex_sample.json"

# Deliberate drops, by kind: markup that is no text.
# Macro names (`\epsilon` is shown as ε), citation/reference keys, environment names,
# colours and link targets are removed from the source before its words are compared.
MARKUP = re.compile(
    r"\\(?:cite[tp]?|ref|eqref|label|begin|end|textcolor|colorbox)\{[^}]*\}"
    r"|\\href\{[^}]*\}"
    r"|\\[A-Za-z]+"
)
# Runs the source glues together that the rendering rightly splits: `\frac12k` is ½k in
# LaTeX (1/2k when rendered), so the run "12k" of the raw text is no word of the paper.
KNOWN_DROPS = {("iclr2018/B1J_rgWRW", "12k")}
RUN = re.compile(r"[^\W_]+")


def lost_words(text: str, rendered: str) -> list[str]:
    """Runs of `text` found neither in `rendered` nor among the analyzer's words of `text`."""
    tokens = set(RUN.findall(fold(rendered))) | set(A.words(text))
    lost = []
    for run in RUN.findall(fold(MARKUP.sub(" ", text))):
        if run not in tokens and not any(run in token for token in tokens):
            lost.append(run)
    return lost


def paper_losses(papers: list[Paper]) -> list[tuple[str, str, str]]:
    found = []
    for paper in papers:
        texts = (
            ("title", paper.title, display_title(paper.title)),
            ("abstract", paper.abstract, latex_to_unicode(paper.abstract)),
        )
        for name, text, rendered in texts:
            found += [
                (paper.id, name, run)
                for run in lost_words(text, rendered)
                if (paper.id, run) not in KNOWN_DROPS
            ]
    return found


def test_no_word_lost_in_the_sample():
    """Always runs: paper-list records with \\texttt, \\sqrt[4] and ``quotes''."""
    papers = load_file(SAMPLE, exclude_status=()).papers
    assert len(papers) == 9
    assert paper_losses(papers) == []


def test_sample_titles_keep_their_names():
    papers = {p.id.split("/")[-1]: p for p in load_file(SAMPLE, exclude_status=()).papers}
    assert display_title(papers["5qYVbLA1lK"].title).startswith("qPOTS: Efficient Batch")
    assert display_title(papers["udH3b2Lsx5"].title).startswith("SPIN: distilling Skill-RRT for")
    assert "qpot" in A(papers["5qYVbLA1lK"].title)


@pytest.mark.skipif(not PAPERLISTS.is_dir(), reason=f"{PAPERLISTS} absent (shared data)")
def test_no_word_lost_in_any_paper_list():
    papers: list[Paper] = []
    for path in sorted(PAPERLISTS.glob("*.json")):
        papers += load_file(path, exclude_status=()).papers
    assert len(papers) == 4042
    assert paper_losses(papers) == []


@pytest.mark.skipif(not SEED.is_file(), reason=f"{SEED} absent (shared data)")
def test_no_word_lost_in_the_seed():
    lost = [run for text in read_seed(SEED) for run in lost_words(text, latex_to_unicode(text))]
    assert lost == []


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        (r"\texttt{qPOTS} wins", "qPOTS wins"),
        (r"$\widetilde{O}(\sqrt{T})$ regret", "Õ(√T) regret"),
        (r"$\tilde{O}(d)$", "Õ(d)"),
        (r"improves by 80\%", "improves by 80 %"),
        (r"``world models''", "“world models”"),
        (r"\textbf{A} \textit{B} \textsc{C} \emph{D} \mathrm{E} \mathbf{F}", "A B C D E F"),
        (r"$\mathcal{O}$ $\mathbb{R}$", "𝒪 ℝ"),
        (r"\operatorname{softmax} \text{and} \mbox{box}", "softmax and box"),
        (r"\ourmethod{ProtoNet} is new", "ProtoNet is new"),
        (r"\manifoldmixup helps", "manifoldmixup helps"),
        (r"{\em stress} and {\bf bold}", "stress and bold"),
        (r"$\sqrt[4]{T}$", "⁴√T"),
        (r"R\&D costs \$5 and $x$", "R&D costs $5 and x"),
        (r"G\"odel", "Gödel"),
    ],
)
def test_latex_renders_every_word(source, shown):
    assert latex_to_unicode(source) == shown


def test_widetilde_is_not_plain_o():
    """Õ(·) hides log factors: reading it as O(·) changes the claim."""
    assert "Õ" in latex_to_unicode(r"$\widetilde{O}(n)$")
    assert "Õ" in display_title(r"A $\widetilde{O}(\sqrt{T})$ Regret Bound")

import json

from bot.search.analysis.analyzer import Analyzer
from bot.search.analysis.snippets import highlight, make_snippet, sentences

A = Analyzer()
ABSTRACT = (
    "Optimal Transport (OT) relies on a fixed ground cost. While sampling approaches exist, "
    "they are slow. We introduce Sinkhorn-parameterized inference over transport plans. "
    "Our key insight is that the Sinkhorn map is differentiable. Experiments follow."
)


def test_sentences_split_on_sentence_ends():
    assert len(sentences(ABSTRACT)) == 5
    assert sentences("e.g. this. And that")[-1] == "And that"


def test_best_sentences_with_bold_matches():
    snippet = make_snippet(ABSTRACT, set(A("sinkhorn transport plans")), A, lambda t: 1.0)
    assert "**Sinkhorn**-parameterized" in snippet
    assert "**transport** **plans**" in snippet
    assert "Experiments follow" not in snippet


def test_rare_terms_beat_common_ones():
    idf = {"sinkhorn": 5.0}.get
    snippet = make_snippet(ABSTRACT, set(A("sinkhorn ground")), A, lambda t: idf(t, 0.1))
    assert snippet.startswith("We introduce") or "**Sinkhorn** map" in snippet


def test_no_match_gives_the_first_sentence():
    snippet = make_snippet(ABSTRACT, {"zzz"}, A, lambda t: 1.0)
    assert snippet.startswith("Optimal Transport (OT)")
    assert "**" not in snippet


def test_hyphenated_name_is_bolded_whole_and_markdown_does_not_clash():
    text = "We introduce **A**ttribution-**G**uided **REP**resentation (AG-REPA) for audio."
    snippet = make_snippet(text, set(A("AG-REPA")), A, lambda t: 1.0)
    assert "(**AG-REPA**)" in snippet
    assert "**A**ttribution" not in snippet


def test_long_sentences_are_shortened_without_breaking_bold():
    text = "word " * 200 + "target here " + "word " * 200 + "."
    snippet = make_snippet(text, {"target"}, A, lambda t: 1.0, max_chars=120)
    assert len(snippet) <= 125
    assert "**target**" in snippet
    assert snippet.count("**") % 2 == 0


def test_highlight_counts():
    text, count = highlight("Graph neural networks on graphs", {"graph"}, A)
    assert count == 2
    assert text == "**Graph** neural networks on **graphs**"


def test_a_sentences_term_set_is_the_terms_of_its_spans():
    """Snippets choose sentences by `term_set` and highlight by `token_spans`: the two must
    agree on every sentence, hyphenated, accented and ligatured words included."""
    from tests.conftest import ICML

    texts = [
        "Schrödinger-type ﬁne-tuning of naïve Bayes: state-of-the-art self-supervised models.",
        "A non‑breaking‐hyphen word, an e-mail, and -leading or trailing- hyphens.",
        "The the THE And of: stopwords only.",
    ]
    for line in ICML.read_text(encoding="utf-8").splitlines():
        texts += sentences(json.loads(line)["abstract"])
    for text in texts:
        assert A.term_set(text) == {term for _start, _end, term in A.token_spans(text)}, text


def test_sentence_scores_do_not_depend_on_set_order():
    """Equal idf sums once depended on the order Python iterated a set of terms (it changes
    with the hash seed): float addition is not associative. The terms are summed sorted."""
    import subprocess
    import sys

    # A bare `bot.search` package: its __init__ imports the whole engine (numpy and all,
    # four fifths of each child's start-up), and the snippet code needs only analysis/.
    code = (
        "import sys, types, bot; package = types.ModuleType('bot.search');"
        "package.__path__ = [bot.__path__[0] + '/search']; sys.modules['bot.search'] = package;"
        "from bot.search.analysis.analyzer import Analyzer;"
        "from bot.search.analysis.snippets import make_snippet;"
        "A = Analyzer(); idf = {'a1': 0.1, 'b2': 0.2, 'c3': 0.3, 'd6': 0.6, 'e7': 0.65}.get;"
        "text = 'Alpha d6 here. Beta a1 b2 c3 here. Gamma e7 here.';"
        "print(make_snippet(text, set(idf.__self__), A, lambda t: idf(t, 0.0)))"
    )
    children = [
        subprocess.Popen(
            [sys.executable, "-c", code],
            env={"PYTHONHASHSEED": str(seed), "PATH": ""},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in range(12)
    ]
    outputs = set()
    for child in children:
        out, err = child.communicate(timeout=60)
        assert child.returncode == 0, err
        outputs.add(out)
    assert len(outputs) == 1, outputs
    assert outputs.pop().strip(), "no snippet printed"

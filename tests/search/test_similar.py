"""Issue 27: "more like this" is about the paper (title, keywords, TL;DR), not its citations,
years and boilerplate."""

from bot.papers.records import Paper
from bot.search.analysis.analyzer import Analyzer
from bot.search.engine import SearchEngine
from bot.search.query.similar import clean_citations, weighted_counts


def test_citation_residue_is_cut():
    text = "As in Jang et al. (2016) and [3, 12], see <cit.> or Smith et al 1998a; end."
    cleaned = clean_citations(text).split()
    assert cleaned == ["As", "in", "(", ")", "and", ",", "see", "or", ";", "end."]


def test_topic_fields_weigh_more_and_filler_is_left_out():
    paper = Paper(
        id="p",
        title="Sinkhorn networks",
        abstract="We propose a novel end-to-end method (Jang et al., 2016) for sinkhorn sorting.",
        venue="V",
        keywords=("permutations",),
        tldr="Sorting with sinkhorn.",
    )
    analyzer = Analyzer()
    counts = weighted_counts(paper, analyzer)
    (sinkhorn,) = analyzer("sinkhorn")
    (permutation,) = analyzer("permutations")
    (sorting,) = analyzer("sorting")
    assert counts[sinkhorn] == 3 + 2 + 1  # title, TL;DR, abstract
    assert counts[permutation] == 3
    assert counts[sorting] == 2 + 1
    for word in ("propose", "novel", "method", "jang", "al", "2016", "end"):
        assert not set(analyzer(word)) & set(counts), word


def _similar_to(engine: SearchEngine, title: str) -> tuple[Paper, list[Paper], tuple[str, ...]]:
    paper = engine.search(title, limit=1, snippets=False).hits[0].paper
    assert paper.title.lower().startswith(title.lower())
    result = engine.similar(paper.id, limit=5)
    return paper, [hit.paper for hit in result.hits], result.terms


def test_gumbel_sinkhorn_brings_papers_on_its_topic(lists):
    _paper, hits, terms = _similar_to(lists, "Learning Latent Permutations with Gumbel-Sinkhorn")
    for residue in ("et", "al", "2016", "endtoend"):
        assert residue not in terms
    topical = ("gumbel", "sinkhorn", "permutation", "optimal transport", "sorting")
    on_topic = [p for p in hits if any(w in (p.title + p.abstract).lower() for w in topical)]
    assert len(on_topic) == 5, [p.title for p in hits]
    # The title's words lead, not the abstract's filler.
    assert set(terms[:3]) <= {"sinkhorn", "gumbel", "permut", "sort"}


def test_mixup_brings_manifold_mixup(lists):
    _paper, hits, _terms = _similar_to(lists, "mixup: Beyond Empirical Risk Minimization")
    assert any(p.title.startswith("Manifold Mixup") for p in hits), [p.title for p in hits]

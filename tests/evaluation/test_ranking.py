"""Issue 27, ranking half: the idf setting (Lucene's by default, rank_bm25's as a parity mode),
the TL;DR known-item kind, and the ICML seed headlines ranking their paper first."""

from dataclasses import replace

import numpy as np
import pytest

from bot.config import SearchSettings, load_settings
from bot.evaluation.harness import apply_overrides
from bot.evaluation.knownitem import KINDS, known_item_set, split_of
from bot.papers.records import Paper
from bot.search.analysis.analyzer import Analyzer
from bot.search.engine import SearchEngine
from bot.search.index.bm25 import idf_of, lucene_idf
from bot.search.index.postings import BM25Index, BM25Params
from bot.search.parts import doc_text
from bot.sources.seed import read_seed, seed_records
from tests.conftest import ICML, PROJECT_ROOT


def test_lucene_idf_is_lucenes_formula_positive_and_falling():
    df = np.array([1.0, 2.0, 5.0, 9.0, 10.0])
    idf = lucene_idf(df.copy(), 10)
    assert idf == pytest.approx(np.log(1 + (10 - df + 0.5) / (df + 0.5)))
    assert (idf > 0).all()
    assert (np.diff(idf) < 0).all()
    okapi = idf_of(df.copy(), 10, BM25Params(idf="okapi", epsilon=0.25))
    assert okapi[-1] == okapi[-2] == okapi[2]  # all floored: common words tie


def test_unknown_idf_is_refused():
    with pytest.raises(ValueError, match="unknown idf 'bm42'"):
        idf_of(np.ones(2), 4, BM25Params(idf="bm42"))
    with pytest.raises(Exception, match="idf"):
        apply_overrides(SearchSettings(), ["idf=bm42"])
    assert apply_overrides(SearchSettings(), ["idf=okapi"]).idf == "okapi"


def test_the_default_is_lucene_and_ranks_as_bm25s(icml_engine):
    bm25s = pytest.importorskip("bm25s")
    assert SearchSettings().idf == "lucene"
    s = replace(icml_engine.settings, proximity_weight=0.0, min_score_ratio=0.0)
    engine = SearchEngine(icml_engine.papers, settings=s)
    analyzer = Analyzer()
    model = bm25s.BM25(k1=s.k1, b=s.b)
    model.index([analyzer(doc_text(p, s.title_weight)) for p in icml_engine.papers])
    query = "flow matching anomaly detection"
    ref = np.asarray(model.get_scores(analyzer(query)))
    hits = engine.search(query, limit=19).hits
    assert len(hits) == int((ref > 0).sum())
    ids = [p.id for p in icml_engine.papers]
    for hit in hits:
        # rank_bm25's saturation carries the (k1 + 1) factor bm25s leaves out.
        assert hit.score == pytest.approx(ref[ids.index(hit.paper.id)] * (s.k1 + 1), rel=1e-6)


def test_okapi_mode_changes_the_scores():
    docs = [["model", "world"], ["model"], ["model", "graph"], ["graph"]]
    okapi = BM25Index.build(docs, BM25Params(idf="okapi", epsilon=0.0))
    lucene = BM25Index.build(docs, BM25Params(idf="lucene"))
    assert okapi.term_idf("model") == pytest.approx(0.01)  # the floor (MIN_IDF)
    assert lucene.term_idf("model") == pytest.approx(np.log(1 + 1.5 / 3.5))
    assert BM25Params(idf="lucene").saved()[-1] == "lucene"


def _paper(pid: str, tldr: str) -> Paper:
    return Paper(id=pid, title=f"Title {pid}", abstract="An abstract.", venue="V", tldr=tldr)


def test_tldr_known_items_split_in_fixed_halves():
    assert "tldr" in KINDS
    papers = [_paper(f"p{i}", f"We sum up paper {i}." if i % 3 else "") for i in range(40)]
    whole = known_item_set(papers, "tldr")
    assert len(whole.queries) == sum(1 for p in papers if p.tldr)
    assert whole.queries["p1"] == "We sum up paper 1."
    train, test = known_item_set(papers, "tldr", "train"), known_item_set(papers, "tldr", "test")
    assert set(train.queries).isdisjoint(test.queries)
    assert set(train.queries) | set(test.queries) == set(whole.queries)
    assert all(split_of(pid) == "train" for pid in train.queries)
    assert train.qrels["p" + next(iter(train.queries))[1:]] == {next(iter(train.queries)): 1}


SEED = PROJECT_ROOT / "data" / "icml2026-abstracts.txt"


@pytest.mark.parametrize("idf", ["lucene", "okapi"])
def test_every_seed_headline_finds_its_paper_first(icml_engine, idf):
    records = seed_records(read_seed(SEED))
    engine = icml_engine
    if idf != icml_engine.settings.idf:
        settings = replace(icml_engine.settings, idf=idf)
        engine = SearchEngine(icml_engine.papers, settings=settings)
    for record in records:
        hits = engine.search(record["title"], limit=1, snippets=False).hits
        assert hits, record["title"]
        assert hits[0].paper.id == record["id"], record["title"]


def test_a_saved_index_keeps_the_idf_it_was_asked_for(tmp_path):
    """The setting reaches a saved index (its key and meta), built and then loaded."""
    base = load_settings(env={}).with_corpus([ICML])
    for idf in ("okapi", "lucene"):
        search = replace(base.search, idf=idf)
        settings = replace(base, search=search, corpus=replace(base.corpus, index_dir=tmp_path))
        SearchEngine.load(settings)  # builds and saves
        loaded = SearchEngine.load(settings)  # from the saved files
        assert loaded.index.params.idf == idf
        df = np.diff(loaded.index.indptr).astype(np.float64)
        expected = idf_of(df, loaded.index.n_docs, BM25Params(epsilon=search.epsilon, idf=idf))
        assert np.array_equal(loaded.index.idf, expected)
    assert len([p for p in tmp_path.iterdir() if p.is_dir()]) == 2  # one folder per idf


def test_eval_runs_the_tldr_kind_from_the_console(tmp_path):
    """`python -m bot eval --paperlists DIR --kind tldr`: the accepted papers' TL;DRs."""
    import io
    import shutil

    from bot.console.cli import main
    from tests.conftest import TEST_DATA

    shutil.copy(TEST_DATA / "iclr2018_sample.json", tmp_path / "iclr2018.json")
    out, err = io.StringIO(), io.StringIO()
    args = ["eval", "--paperlists", str(tmp_path), "--kind", "tldr", "--split", "all"]
    assert main(args, out=out, err=err) == 0, err.getvalue()
    assert "known items: tldr (all): 3 docs, 3 queries" in out.getvalue()
    assert "idf=lucene" in out.getvalue()

from bot.search.analysis.analyzer import Analyzer, clean, fold

A = Analyzer()


def test_latex_math_becomes_words():
    assert A(r"$\ell_1$-regression") == ["l1regress", "l1", "regress"]
    assert A(r"$O(\log k)$") == ["log", "k"]
    assert A(r"$\textit{Sparse tOpology-aware}$") == ["spars", "topologyawar", "topolog", "awar"]


def test_markdown_emphasis_is_dropped():
    assert A("**A**ttribution-**G**uided") == ["attributionguid", "attribut", "guid"]
    assert A("introduces *policy lag*") == A("introduces policy lag")


def test_hyphenated_names_are_found_whole_and_by_parts():
    doc = set(A("we introduce AG-REPA for audio"))
    assert {"agrepa", "ag", "repa"} <= doc
    assert set(A("ag repa")) <= doc
    assert set(A("AGREPA")) <= doc
    assert set(A("k-means")) == {"kmean", "k", "mean"}


def test_urls_are_not_words():
    assert A("code at https://github.com/WillDreamer/ARL-Arena.git now") == ["code"]
    assert "github" not in A("see www.example.org/github")


def test_stopwords_and_stems():
    assert A("The of and a") == []
    assert A("running runs") == ["run", "run"]
    assert A("Transformers") == A("transformer")


def test_unicode_is_normalised():
    assert fold("Schrödinger ＡＢＣ") == "schrodinger abc"
    assert A("Schrödinger") == A("schrodinger")
    assert A("ﬁne-tuning") == A("fine-tuning")


def test_same_analysis_for_documents_and_queries():
    text = r"Capacitated fair-range $k$-clustering"
    assert A(text) == A(text.lower())


def test_clean_keeps_words_drops_markup():
    assert clean(r"**Bold** $\alpha$-divergence https://x.y/z").split() == ["bold", "α-divergence"]


def test_token_spans_point_into_the_original_text():
    text = "Mixture-of-Experts denial"
    spans = A.token_spans(text)
    words = {text[s:e] for s, e, _t in spans}
    assert {"Mixture-of-Experts", "Mixture", "Experts", "denial"} <= words
    assert all(term for _s, _e, term in spans)


def test_stem_cache_is_bounded():
    """Issue 12 item 15: every distinct word ever analysed used to stay cached (1.26 M after
    40k queries). The cache now holds at most two generations of STEM_CACHE words."""
    from bot.search.analysis.analyzer import STEM_CACHE, StemCache

    assert StemCache().size == STEM_CACHE
    analyzer = Analyzer(_cache=StemCache(1000))
    words = [f"zq{i:06d}word" for i in range(10_000)]
    for start in range(0, len(words), 500):
        analyzer(" ".join(words[start : start + 500]))
        assert len(analyzer._cache) <= 2 * 1000
    assert analyzer(words[-1]) == [words[-1]]
    # Still right after eviction, through both paths.
    assert analyzer("learning models") == ["learn", "model"]
    assert analyzer.stem_word("studies") == "studi"

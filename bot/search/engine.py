"""The one search API every surface uses: Discord cogs, the console, the CLI and evaluation.

`SearchEngine.load(settings)` reads the corpus, then loads the saved index or builds and saves
it. Queries are parsed (`bot.search.query.parser`), analysed with the same analyzer as the
documents, scored by the postings index and cut to the requested page by `top_k`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from bot.config import SearchSettings, Settings
from bot.papers.corpus import LoadReport
from bot.papers.records import Paper
from bot.search.analysis.analyzer import Analyzer, raw_words
from bot.search.analysis.snippets import make_snippet
from bot.search.files.columns import IdLookup
from bot.search.files.integrity import IntegrityCheck
from bot.search.files.opening import load_engine
from bot.search.files.paperstore import PaperStore
from bot.search.index.postings import BM25Index, BM25Params
from bot.search.query.feedback import distinctive_terms, expand
from bot.search.query.filters import PlanFilters
from bot.search.query.parser import merge_filters, parse_query
from bot.search.query.proximity import rescore
from bot.search.ranking.pages import pruned_page
from bot.search.ranking.topk import top_k
from bot.search.results import BadFilter, EmptyQuery, Filters, Hit, Plan, SearchResult
from bot.search.suggest.spelling import Speller
from bot.search.suggest.titles import TitleIndex

log = logging.getLogger(__name__)

MAX_LIMIT = 100
DOC_TERMS_CACHE = 4096


def doc_text(paper: Paper, title_weight: int = 1) -> str:
    """What is indexed: the title and the keywords (each repeated `title_weight` times) and
    the abstract.

    Keywords are the authors' own words for the topic (OpenReview venues carry them): a
    search for `world models` should find a paper that lists it even if its abstract says
    "learned simulators". Like the title they name what the paper is about, so they weigh
    as much (keyword known-item set, train half: nDCG@10 0.9329 once, 0.9609 weighted).
    BEIR collections have none, so their figures do not move.
    """
    weight = max(1, title_weight)
    parts = [paper.title] * weight + [paper.abstract]
    if paper.keywords:
        parts += ["; ".join(paper.keywords)] * weight
    return " ".join(parts)


class SearchEngine(PlanFilters):
    def __init__(
        self,
        papers: Sequence[Paper],
        *,
        analyzer: Analyzer | None = None,
        settings: SearchSettings | None = None,
        index: BM25Index | None = None,
    ) -> None:
        self.settings = settings or SearchSettings()
        self.analyzer = analyzer or Analyzer()
        s = self.settings
        if isinstance(papers, PaperStore):
            # A saved store (SearchEngine.load): papers are decoded on access, and the columns
            # below come ready-made instead of from a pass over every paper.
            self.papers: Sequence[Paper] = papers
            self._ids: Sequence[str] = papers.ids
            titles: Sequence[str] = papers.titles
            self._venues = list(papers.venues)
            self._venue_of, self._year_of = papers.venue_of, papers.year_of
            self.added: Sequence[str | None] = papers.added
            self._lookup, self._title_index = papers.lookup, papers.title_index
        else:
            self.papers = list(papers)
            self._ids = [p.id for p in self.papers]
            titles = [p.title for p in self.papers]
            self._lookup = IdLookup.of(self._ids)
            self._title_index = TitleIndex.of(titles)
            self._venues = sorted({p.venue for p in self.papers})
            venue_pos = {v: i for i, v in enumerate(self._venues)}
            self._venue_of = np.array([venue_pos[p.venue] for p in self.papers], dtype=np.int32)
            self._year_of = np.array([p.year or 0 for p in self.papers], dtype=np.int32)
            self.added = [p.added for p in self.papers]  # first-seen stamps (bot/search/recent)
        self.index = index or BM25Index.build_parallel(
            self.papers,
            lambda p: raw_words(doc_text(p, s.title_weight)),
            BM25Params(s.k1, s.b, s.epsilon),
            expand=self.analyzer.expand,
        )
        if self.index.n_docs != len(self.papers):
            raise ValueError("index and corpus disagree on the number of papers")
        self._titles = titles
        # How the corpus was read (files, skipped records, problems); set by `load`.
        self.load_report: LoadReport | None = None
        # The digest check of the saved files (`load`), and what it found damaged.
        self.integrity: IntegrityCheck | None = None
        self._damaged: str | None = None

    @classmethod
    def load(cls, settings: Settings) -> SearchEngine:
        """Load the configured corpus; reuse the saved index when its key still matches.

        A reused index and store are checked by size here and by digest in the background
        (`bot.search.files.integrity`); damage found there makes the engine refuse searches and
        rebuild itself (`_rebuild`), and the next start rebuilds too
        (`bot.search.files.opening`)."""
        return load_engine(cls, settings)

    def _rebuild(self, settings: Settings, problem: str) -> None:
        """Refuse while the saved files are rebuilt from the corpus, then serve the rebuilt
        engine (same corpus, so the same positions: a search in flight stays consistent)."""
        self._damaged = problem
        try:
            fresh = SearchEngine.load(settings)
        except Exception:  # the corpus itself may be gone: keep refusing, say why
            log.exception("could not rebuild the damaged index; searches are refused")
            return
        state = dict(vars(fresh), _damaged=problem)
        vars(self).update(state)
        for key in set(vars(self)) - set(state):  # caches built on the damaged index
            vars(self).pop(key, None)
        self._damaged = None
        log.warning("index rebuilt after damage: %s", problem)

    def wait_verified(self, timeout: float | None = None) -> bool:
        """Wait for the saved files' digest check (and a rebuild it started); True if done."""
        while True:
            check = self.integrity
            if check is None:
                return True
            if not check.wait(timeout):
                return False
            if self.integrity is check:
                return True

    @property
    def damaged(self) -> str | None:
        """What the integrity check found damaged, while the engine refuses to answer."""
        return self._damaged

    # -- search -----------------------------------------------------------------------------

    def _phrase_docs(self, phrases: Sequence[tuple[str, ...]]) -> np.ndarray:
        """Ascending ids of the documents holding every phrase as a run of terms.

        From the index's term positions (`bot.search.index.positions`), from each phrase's own
        terms: re-analysing each candidate's text cost ~15 s of CPU for a common phrase on
        100k papers. Each phrase searches only among the documents holding the previous ones.
        """
        found: np.ndarray | None = None
        for phrase in phrases:
            found = self.index.phrase_docs(phrase, found)
            if not found.shape[0]:
                break
        return found if found is not None else np.empty(0, np.int32)

    def _doc_terms(self, doc: int) -> list[str]:
        """Index terms of one paper, for feedback; cached because top hits repeat."""
        cache: dict[int, list[str]] = self.__dict__.setdefault("_doc_terms_cache", {})
        found = cache.get(doc)
        if found is None:
            if len(cache) >= DOC_TERMS_CACHE:
                cache.clear()
            found = cache[doc] = self.analyzer(
                doc_text(self.papers[doc], self.settings.title_weight)
            )
        return found

    def _select(self, plan: Plan) -> tuple[np.ndarray, np.ndarray]:
        """The one filtering path (`/search`, daily topic pools, `/similar`): the documents
        `plan` matches, ascending, with their scores (0.0 each when there are no words)."""
        # Only documents holding the phrases can match: those alone are scored and filtered.
        within = self._phrase_docs(plan.phrases) if plan.phrases else None
        if plan.terms:
            terms = [*plan.terms, *plan.extra]
            if within is None:
                ids, scores = self.index.score(terms, plan.weights)
            else:
                ids, scores = self.index.score_docs(terms, plan.weights, within)
            keep = scores > 0
        else:
            ids = np.arange(self.index.n_docs, dtype=np.int32) if within is None else within
            scores = np.zeros(ids.shape[0], dtype=np.float64)
            keep = np.ones(ids.shape[0], dtype=bool)
        return self._narrow(plan, ids, scores, keep)

    def _narrow(
        self, plan: Plan, ids: np.ndarray, scores: np.ndarray, keep: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """`_select`'s filters (skip, exclusions, author/venue/year) and its cut of weak
        matches, applied to the candidates `ids[keep]`."""
        allowed = self._allowed(plan)
        if allowed is not None:
            keep &= allowed[ids]
        ids, scores = ids[keep], scores[keep]
        ratio = self.settings.min_score_ratio
        if plan.terms and ratio > 0 and scores.shape[0]:
            # Where matches get weak: far below the best match, a paper shares only the
            # query's common words (`world model` -> papers that say only "model").
            strong = scores >= ratio * float(scores.max())
            ids, scores = ids[strong], scores[strong]
        return ids, scores

    def _run(
        self,
        plan: Plan,
        limit: int,
        offset: int,
        *,
        snippets: bool = True,
        exhaustive: bool = False,
    ) -> SearchResult:
        """Select, rank and page. Feedback terms (`plan.extra`) rank, and they are
        highlighted only in hits that contain none of the typed terms. Pruned where that
        stays exact (`_rank`), unless `exhaustive`: every match scored, the total exact."""
        limit = max(1, min(int(limit), MAX_LIMIT))
        offset = max(0, int(offset))
        total, exact = 0, True
        if plan.terms:
            best_ids, best_scores, total, exact = self._rank(plan, offset + limit, exhaustive)
        else:
            # Nothing to rank by (`author:jordan` alone): newest first, then corpus order.
            ids, scores = self._select(plan)
            order = np.lexsort((ids, -self._year_of[ids]))[: offset + limit]
            best_ids, best_scores, total = ids[order], scores[order], int(ids.shape[0])
        wanted = set(plan.terms)
        hits = []
        for rank, (doc, score) in enumerate(
            zip(best_ids[offset:].tolist(), best_scores[offset:].tolist(), strict=True),
            start=offset + 1,
        ):
            paper = self.papers[doc]
            snippet = ""
            if snippets:
                shown = wanted
                if plan.extra and wanted.isdisjoint(self._doc_terms(doc)):
                    shown = set(plan.extra)
                snippet = make_snippet(paper.abstract, shown, self.analyzer, self.index.term_idf)
            hits.append(Hit(paper=paper, score=float(score), snippet=snippet, rank=rank))
        return SearchResult(
            query=plan.query,
            hits=hits,
            total=total,
            offset=offset,
            limit=limit,
            terms=tuple(dict.fromkeys(plan.terms)),
            suggestion=plan.suggestion,
            total_exact=exact,
        )

    def _rank(
        self, plan: Plan, k: int, exhaustive: bool
    ) -> tuple[np.ndarray, np.ndarray, int, bool]:
        """The best k matches of a plan with words (ids, scores, best first), the word-order
        bonus added; and the number of matches, or a true lower bound of it (False).

        Pruned (`bot.search.ranking.pages`) unless the plan has phrases (their candidates are
        few and scored alone already) or pruning cannot stay exact; then every match is
        scored (`_select`), the reference the pruned path equals hit for hit."""
        found = None
        if not exhaustive and not plan.phrases:
            allowed = self._allowed(plan)
            found = pruned_page(self.index, plan, k, allowed, self.settings)
        if found is None:
            ids, scores = self._select(plan)
            total, exact = int(ids.shape[0]), True
            if plan.skip is None:  # typed words, in order (not /similar's bag)
                weight = self.settings.proximity_weight
                scores = rescore(self.index, plan.terms, ids, scores, weight)
        else:
            ids, total, exact, scores = found.ids, found.total, found.exact, found.scores
        best_ids, best_scores = top_k(ids, scores, k)
        return best_ids, best_scores, total, exact

    @property
    def speller(self) -> Speller:
        found: Speller | None = self.__dict__.get("_speller")
        if found is None:
            found = self.__dict__["_speller"] = Speller(
                self.analyzer, self.index, lambda doc: doc_text(self.papers[doc])
            )
        return found

    def plan(self, query: str, filters: Filters | None = None, *, suggest: bool = False) -> Plan:
        """`query` parsed and analysed as every surface runs it; EmptyQuery when it holds
        neither a word to rank by nor a filter to list by.

        With `prf_docs`/`prf_terms`/`prf_weight` set, the query is widened with words of its
        best first-pass hits (`bot.search.query.feedback`). `suggest` looks for corrections of words
        the index does not know (people see them; evaluation and daily pools need none).
        """
        self._refuse_if_damaged()
        parsed = parse_query(query or "")
        if parsed.problems:
            raise BadFilter(" ".join(parsed.problems))
        s = self.settings
        terms, term_weights = self.analyzer.query_terms(parsed.text, s.compound_weight)
        merged = merge_filters(parsed.filters, filters)
        if not terms and merged.is_empty():
            if parsed.text.strip():
                raise EmptyQuery(
                    "Nothing to search for: those are all very common words. "
                    "Try the words that make the paper special."
                )
            raise EmptyQuery()
        if merged.venue:
            self.resolve_venues(merged.venue)  # an unknown venue is an error, said now
        phrases = [tuple(t) for t in (self.analyzer(p) for p in parsed.phrases) if t]
        # All-1 weights are left out so a plain query scores exactly as rank_bm25 would.
        weights: Sequence[float] | None = None
        if any(w != 1.0 for w in term_weights):
            weights = term_weights
        extra: tuple[str, ...] = ()
        if terms and s.prf_docs > 0 and s.prf_terms > 0 and s.prf_weight > 0:
            ids, scores = self.index.score(terms, weights)
            expansion = expand(
                terms,
                ids,
                scores,
                self._doc_terms,
                docs=s.prf_docs,
                n_terms=s.prf_terms,
                weight=s.prf_weight,
                weights=weights,
            )
            extra = expansion.added
            if extra:
                weights = expansion.weights
        return Plan(
            query=query,
            terms=tuple(terms),
            weights=tuple(weights) if weights is not None else None,
            filters=merged,
            phrases=tuple(phrases),
            excludes=parsed.excludes,
            extra=extra,
            suggestion=self.speller.suggest_query(query, terms, phrases) if suggest else None,
        )

    def search(
        self,
        query: str,
        limit: int = 10,
        offset: int = 0,
        filters: Filters | None = None,
        *,
        snippets: bool = True,
        suggest: bool = True,
        exhaustive: bool = False,
    ) -> SearchResult:
        """Ranked hits for `query`; raises EmptyQuery when nothing is left to search for.
        Evaluation turns `snippets` and `suggest` off for speed (neither changes the ranking).
        `exhaustive` scores every match: the same hits, and always the exact total."""
        plan = self.plan(query, filters, suggest=suggest)
        return self._run(plan, limit, offset, snippets=snippets, exhaustive=exhaustive)

    def similar(self, ref: str, limit: int = 10, offset: int = 0) -> SearchResult:
        """Papers like `ref`, itself left out. Like Lucene's MoreLikeThis, the query is the
        paper's most distinctive terms by tf-idf (`similar_terms` of them), not its whole
        text, which would match nearly every paper through words like "propose"."""
        paper = self.paper(ref)
        doc = self._lookup.find(paper.id)
        assert doc is not None, "a paper found by `paper` has a position"
        terms = distinctive_terms(
            self._doc_terms(doc),
            self.index.doc_freq,
            self.index.n_docs,
            self.settings.similar_terms,
        )
        plan = Plan(query=f"more like: {paper.title}", terms=tuple(terms), skip=doc)
        return self._run(plan, limit, offset)

    def matching_ids(self, query: str) -> list[str]:
        """Every paper id `/search` would list for `query` (a daily topic), in corpus order:
        the same plan and the same `_select`, so a pool never differs from the search."""
        ids, _scores = self._select(self.plan(query))
        return [self._ids[i] for i in ids.tolist()]

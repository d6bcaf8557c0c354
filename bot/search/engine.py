"""The one search API every surface uses: Discord cogs, the console, the CLI and evaluation.

`SearchEngine.load(settings)` reads the corpus, then loads the saved index or builds and saves
it. Queries are parsed (`bot.search.query.parser`), analysed with the same analyzer as the
documents, scored by the postings index and cut to the requested page by `top_k`.

The engine is composed of its parts (`bot.search.parts.EngineParts`: the papers' lookups, the
index, the plan filters, the caches), held in one attribute: a rebuild after damage swaps
them all in one store (`_rebuild`). Lookups that rank nothing are `PaperLookups`'s, passed
through here, where a damaged engine refuses them. Every method that reads the saved files is
`serving` (`bot.search.damage`): a record found damaged while answering is a rebuild, never a
traceback.
"""

from __future__ import annotations

import logging
import random as random_module
from collections.abc import Sequence

import numpy as np

from bot.config import SearchSettings, Settings
from bot.papers.corpus import LoadReport
from bot.papers.records import Paper
from bot.search.analysis.analyzer import Analyzer
from bot.search.analysis.snippets import make_snippet
from bot.search.damage import Damage, serving, serving_quietly
from bot.search.files.integrity import IntegrityCheck
from bot.search.files.opening import load_engine
from bot.search.index.postings import BM25Index
from bot.search.parts import EngineParts, Part
from bot.search.query.filters import PlanFilters
from bot.search.query.notices import finish
from bot.search.query.planning import make_plan
from bot.search.query.proximity import rescore
from bot.search.query.similar import similar_query
from bot.search.ranking.pages import pruned_page, sorted_page
from bot.search.ranking.topk import top_k
from bot.search.results import Filters, Hit, IndexDamaged, Plan, SearchResult
from bot.search.suggest.lookups import PaperLookups
from bot.search.suggest.spelling import Speller

log = logging.getLogger(__name__)

MAX_LIMIT = 100


class SearchEngine:
    """Queries run over one set of parts (`EngineParts`), read through `_parts`, which a
    rebuild replaces whole; the lookups and the parts are passed through for every surface."""

    def __init__(
        self,
        papers: Sequence[Paper],
        *,
        analyzer: Analyzer | None = None,
        settings: SearchSettings | None = None,
        index: BM25Index | None = None,
    ) -> None:
        self._parts = EngineParts.build(
            papers, analyzer or Analyzer(), settings or SearchSettings(), index
        )
        # What was found damaged, while the engine refuses to answer, and the rebuild.
        self._damage = Damage()
        # The settings `load` read: what a rebuild after damage loads again (None: built from
        # papers in memory, which nothing can damage).
        self.rebuild_with: Settings | None = None

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
        engine's parts (same corpus, so the same positions: a search in flight stays
        consistent). One store swaps every part, and the caches built on the damaged ones."""
        self._damage.problem = problem
        try:
            fresh = SearchEngine.load(settings)
        except Exception:  # the corpus itself may be gone: keep refusing, say why
            log.exception("could not rebuild the damaged index; searches are refused")
            return
        self._parts = fresh._parts
        self._damage.problem = None
        log.warning("index rebuilt after damage: %s", problem)

    def damage_found(self, problem: str) -> None:
        """Damage met while serving (`bot.search.damage`): refused from now on, the store's
        folder untrusted at once, and rebuilt in the background as the digest check does."""
        settings = self.rebuild_with
        rebuild = None if settings is None else lambda: self._rebuild(settings, problem)
        self._damage.found(problem, self.papers, rebuild)

    def wait_verified(self, timeout: float | None = None) -> bool:
        """Wait for the saved files' digest check (and a rebuild it or `damage_found`
        started); True if done."""
        if not self._damage.wait(timeout):
            return False
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
        return self._damage.problem

    def _refuse_if_damaged(self) -> None:
        if self._damage.problem is not None:
            raise IndexDamaged()

    def cache_sizes(self) -> dict[str, tuple[int, int]]:
        """(size, bound) of every cache that what users type reaches (`EngineParts`)."""
        return self._parts.cache_sizes()

    # -- parts ------------------------------------------------------------------------------

    settings: Part[SearchSettings] = Part()
    analyzer: Part[Analyzer] = Part()
    index: Part[BM25Index] = Part()
    lookups: Part[PaperLookups] = Part()
    filters: Part[PlanFilters] = Part()
    speller: Part[Speller] = Part()
    papers: Part[Sequence[Paper]] = Part("lookups.papers")
    # Paper ids and first-seen stamps in corpus order (positions match `papers`).
    ids: Part[Sequence[str]] = Part("lookups.ids")
    added: Part[Sequence[str | None]] = Part("lookups.added")
    # How the corpus was read, and the digest check of the saved files: set by `load`.
    load_report: Part[LoadReport | None] = Part(settable=True)
    integrity: Part[IntegrityCheck | None] = Part(settable=True)

    # -- lookups (`PaperLookups`) -------------------------------------------------------------

    @serving
    def paper(self, ref: str) -> Paper:
        """Exact id, then an id without its venue prefix, then the title (exact, then prefix)."""
        self._refuse_if_damaged()
        return self.lookups.paper(ref)

    @serving
    def random(self, venue: str | None = None, rng: random_module.Random | None = None) -> Paper:
        self._refuse_if_damaged()
        return self.lookups.random(venue, rng)

    @serving_quietly
    def suggest(self, prefix: str, limit: int = 25) -> list[tuple[str, str]]:
        """(id, title) pairs for autocomplete, from memory only; none while damaged
        (autocomplete offers nothing rather than an error)."""
        return [] if self._damage.problem is not None else self.lookups.suggest(prefix, limit)

    @serving_quietly
    def complete(self, prefix: str, limit: int = 25) -> list[Paper]:
        """The papers of `suggest`, for surfaces that show more than a title."""
        return [] if self._damage.problem is not None else self.lookups.complete(prefix, limit)

    @serving_quietly
    def suggest_authors(self, prefix: str, limit: int = 25) -> list[tuple[str, int]]:
        """(name, number of papers) for autocomplete where an option is an author."""
        return self.lookups.suggest_authors(prefix, limit)

    @serving
    def has_paper(self, paper_id: str) -> bool:
        return self.lookups.has_paper(paper_id)

    def venues(self) -> dict[str, int]:
        return self.lookups.venues()

    def resolve_venues(self, venue: str) -> list[int]:
        """Venue positions matching `venue`; BadFilter names the venues when none match."""
        return self.lookups.resolve_venues(venue)

    def in_venue(self, venue: str) -> list[int]:
        """Positions of the papers of `venue`; BadFilter names the venues when none match."""
        return self.lookups.in_venue(venue)

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
        return self._parts.doc_terms(doc)

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
        allowed = self.filters.allowed(plan)
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
        if plan.terms and plan.sort == "relevance":
            best_ids, best_scores, total, exact = self._rank(plan, offset + limit, exhaustive)
            best, ranked = best_scores, best_ids
        else:  # nothing to rank by (`author:jordan` alone: newest first), or `sort:new`
            ids, best = self._select(plan)
            ranked = None  # plain scores already: no word-order bonus here
            lookups, total = self.lookups, int(ids.shape[0])
            best_ids, best_scores = sorted_page(
                plan.sort, ids, best, lookups.year_of, lookups.venue_of, offset + limit
            )
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
        result = SearchResult(
            query=plan.query,
            hits=hits,
            total=total,
            offset=offset,
            limit=limit,
            terms=tuple(dict.fromkeys(plan.terms)),
            suggestion=plan.suggestion,
            total_exact=exact,
        )
        return finish(self._parts, plan, result, best, ranked)  # notices, order, authors

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
            allowed = self.filters.allowed(plan)
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

    @serving
    def plan(self, query: str, filters: Filters | None = None, *, suggest: bool = False) -> Plan:
        """`query` parsed and analysed as every surface runs it (`make_plan`); EmptyQuery when
        it holds neither a word to rank by nor a filter to list by. `suggest` looks for
        corrections of words the index does not know (people see them; evaluation and daily
        pools need none)."""
        self._refuse_if_damaged()
        return make_plan(self._parts, query, filters, suggest=suggest)

    @serving
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

    @serving
    def similar(self, ref: str, limit: int = 10, offset: int = 0) -> SearchResult:
        """Papers like `ref`, itself left out. Like Lucene's MoreLikeThis, the query is the
        paper's most distinctive terms by tf-idf (`similar_terms` of them), its title, keywords
        and TL;DR weighted over its abstract, citations and filler left out
        (`bot.search.query.similar`)."""
        paper = self.paper(ref)
        doc = self.lookups.lookup.find(paper.id)
        assert doc is not None, "a paper found by `paper` has a position"
        like = similar_query(
            paper,
            self.analyzer,
            self.index.doc_freq,
            self.index.n_docs,
            self.settings.similar_terms,
        )
        plan = Plan(f"more like: {paper.title}", like.terms, like.weights, skip=doc)
        return self._run(plan, limit, offset)

    @serving
    def matching_ids(self, query: str) -> list[str]:
        """Every paper id `/search` would list for `query` (a daily topic), in corpus order:
        the same plan and the same `_select`, so a pool never differs from the search."""
        ids, _scores = self._select(self.plan(query))
        ids_of = self.ids
        return [ids_of[i] for i in ids.tolist()]

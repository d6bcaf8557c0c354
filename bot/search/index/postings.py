"""BM25Okapi over postings: the exact scores of `rank_bm25.BM25Okapi`, without its full scan.

`rank_bm25.get_scores` walks every document for every query term. Here each term keeps a
postings list (doc ids, term frequencies), so a query touches only the documents that contain
its terms; per-document length normalisation is precomputed once. The arithmetic follows
rank_bm25 operation for operation, so scores agree to float rounding (1e-9 relative).

Scoring (`score`), top-k selection (`top_k`) and persistence (`save` / `load`) are separate
pieces that search composes and that can each be measured alone.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from bot.papers.files import atomic_folder, check_sizes, file_digest, read_meta
from bot.search.index.blockmax import BlockMax
from bot.search.index.bm25 import MIN_IDF as MIN_IDF  # re-exported
from bot.search.index.bm25 import idf_of, length_norms, posting_saturation
from bot.search.index.build import Expand, Partial, merge_partials, partial, tokenize_parallel
from bot.search.index.pairs import PairIndex
from bot.search.index.positions import Runs
from bot.search.query.phrases import PositionIndex

log = logging.getLogger(__name__)
T = TypeVar("T")

# 3: `forward` (phrase checks); 4: term positions instead (bot/search/index/positions); 5:
# block maxima (bot/search/ranking/pruning); 6: positions of frequent adjacent pairs
# (bot/search/index/pairs)
INDEX_FORMAT = 6
SAVED_ARRAYS = ("indptr", "doc_ids", "tfs", "doc_len", "sat", "pos_indptr", "positions")
# Dense accumulation once the postings touched reach 1/_DENSE_RATIO of the documents.
_DENSE_RATIO = 8


@dataclass(frozen=True, slots=True)
class BM25Params:
    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25
    # "okapi" (rank_bm25's, the parity mode) or "lucene" (`bot.search.index.bm25.idf_of`).
    idf: str = "okapi"

    def saved(self) -> list[float | str]:
        """What an index's meta.json records of these (and its cache key)."""
        return [self.k1, self.b, self.epsilon, self.idf]


class IndexCacheError(Exception):
    """A saved index is missing, stale or damaged; the caller rebuilds it."""


@dataclass(eq=False)
class BM25Index:
    """Term postings in CSR form: term t's documents are `doc_ids[indptr[t]:indptr[t+1]]`.

    The fields are what is saved; everything else is derived from them in `__post_init__`
    (`saturation` is passed when a saved index already holds it).
    """

    vocab: dict[str, int]
    indptr: np.ndarray
    doc_ids: np.ndarray
    tfs: np.ndarray
    doc_len: np.ndarray
    params: BM25Params
    saturation: InitVar[np.ndarray | None] = None
    # Where each term occurs in each of its documents, aligned with its postings
    # (`bot.search.index.positions`): phrases are checked without re-analysing any text.
    pos_indptr: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    positions: np.ndarray = field(default_factory=lambda: np.empty(0, np.uint16))

    # Score bounds per term and block (`bot.search.ranking.pruning`): loaded with a saved index,
    # else computed on first use.
    bounds: InitVar[BlockMax | None] = None
    # Positions of adjacent pairs of frequent terms (`bot.search.index.pairs`): loaded with a saved
    # index, else built from the positions above.
    pair_index: InitVar[PairIndex | None] = None

    def __post_init__(
        self,
        saturation: np.ndarray | None,
        bounds: BlockMax | None,
        pair_index: PairIndex | None,
    ) -> None:
        doc_len, params, tfs, doc_ids = self.doc_len, self.params, self.tfs, self.doc_ids
        self.n_docs = int(doc_len.shape[0])
        df = np.diff(self.indptr).astype(np.float64)
        self.idf = idf_of(df, self.n_docs, params)
        self.avgdl, self.norm = length_norms(doc_len, params)
        # Per posting, rank_bm25's tf * (k1 + 1) / (tf + norm[doc]) (float64, same operations):
        # a query then costs one multiply by idf and one scatter-add per postings list. Saved
        # with the index and memory-mapped on load, so it costs no start-up and no private RSS.
        self.sat = (
            saturation
            if saturation is not None
            else posting_saturation(tfs, doc_ids, self.norm, params.k1)
        )
        terms = Runs(self.indptr, doc_ids, tfs, self.pos_indptr, self.positions)
        self.pairs = pair_index if pair_index is not None else PairIndex.build(terms, doc_len)
        self.phrases = PositionIndex(terms, doc_len, self.pairs)
        self._block_max = bounds

    @property
    def block_max(self) -> BlockMax:
        """Per-term and per-block saturation bounds, for pruned top-k."""
        if self._block_max is None:
            self._block_max = BlockMax.build(self.indptr, self.doc_ids, self.sat, self.n_docs)
        return self._block_max

    # -- building ---------------------------------------------------------------------------

    @classmethod
    def build(cls, docs: Iterable[Sequence[str]], params: BM25Params | None = None) -> BM25Index:
        """Index tokenised documents (lists of terms, repeats counted), in corpus order."""
        return cls._merge([partial(docs)], params or BM25Params())

    @classmethod
    def build_parallel(
        cls,
        items: Sequence[T],
        tokenize: Callable[[T], Iterable[str]],
        params: BM25Params | None = None,
        *,
        workers: int | None = None,
        expand: Expand = None,
    ) -> BM25Index:
        """`build(tokenize(x) for x in items)`, tokenising chunks in forked worker processes
        (`indexbuild.tokenize_parallel`); identical to `build`, term ids included. With
        `expand`, `tokenize` gives words and `expand` their terms (`Analyzer.expand`)."""
        partials = tokenize_parallel(items, tokenize, workers, expand)
        if partials is None:
            partials = [partial((tokenize(x) for x in items), expand)]
        return cls._merge(partials, params or BM25Params())

    @classmethod
    def _merge(cls, partials: Sequence[Partial], params: BM25Params) -> BM25Index:
        """Partial indexes of consecutive document ranges into one, in corpus order."""
        merged = merge_partials(partials)
        return cls(
            merged.vocab,
            merged.indptr,
            merged.doc_ids,
            merged.tfs,
            merged.lengths,
            params,
            pos_indptr=merged.pos_indptr,
            positions=merged.positions,
        )

    # -- scoring ----------------------------------------------------------------------------

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        tid = self.vocab.get(term)
        if tid is None:
            return np.empty(0, np.int32), np.empty(0, np.uint16)
        start, end = self.indptr[tid], self.indptr[tid + 1]
        return self.doc_ids[start:end], self.tfs[start:end]

    def doc_freq(self, term: str) -> int:
        """How many documents contain `term` (0 when it is not in the vocabulary)."""
        tid = self.vocab.get(term)
        return 0 if tid is None else int(self.indptr[tid + 1] - self.indptr[tid])

    def phrase_matches(self, docs: np.ndarray, phrase: Sequence[str]) -> np.ndarray:
        """Mask of `docs` whose terms contain `phrase` as a run (stopwords are not terms, so
        "learning a model" holds the phrase "learning model", as the analyzer sees it).

        Exact, and no text is analysed: from the term positions (`bot.search.index.positions`).
        """
        found = self.phrase_docs(phrase, docs)
        mark = np.zeros(self.n_docs, dtype=bool)
        mark[found] = True
        kept: np.ndarray = mark[docs]
        return kept

    def phrase_docs(self, phrase: Sequence[str], within: np.ndarray | None = None) -> np.ndarray:
        """Ascending ids of the documents holding `phrase` (among the ids `within`, if given)."""
        tids = [self.vocab.get(t) for t in phrase]
        if not tids or any(t is None for t in tids):
            return np.empty(0, np.int32)
        mask = None
        if within is not None:
            mask = np.zeros(self.n_docs, dtype=bool)
            mask[within] = True
        return self.phrases.docs_with([t for t in tids if t is not None], mask)

    def term_idf(self, term: str) -> float:
        tid = self.vocab.get(term)
        return 0.0 if tid is None else float(self.idf[tid])

    def score(
        self, terms: Sequence[str], weights: Sequence[float] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(doc ids ascending, scores) of the documents a query term gives a non-zero score.

        Repeated query terms count again, as in rank_bm25. `weights` scales each term's
        contribution (1.0 when omitted; query expansion uses lower weights). Every document
        containing a query term is returned except one whose total is exactly 0.0, which no
        caller keeps (only positive scores rank).

        Each document's score is accumulated term by term in query order, starting from 0.0,
        with rank_bm25's float64 operations: the sums are bit-identical to `get_scores`. Few
        postings are merged sparsely (sort + scatter); many are added into a dense buffer of
        one float per document, which is cheaper than sorting them.
        """
        parts: list[tuple[np.ndarray, np.ndarray]] = []
        touched = 0
        idf, indptr = self.idf, self.indptr
        for i, term in enumerate(terms):
            tid = self.vocab.get(term)
            if tid is None:
                continue
            start, end = int(indptr[tid]), int(indptr[tid + 1])
            if start == end:
                continue
            ids = self.doc_ids[start:end]
            contrib = self.sat[start:end] * idf[tid]
            if weights is not None and weights[i] != 1.0:
                contrib *= weights[i]
            parts.append((ids, contrib))
            touched += end - start
        if not parts:
            return np.empty(0, np.int32), np.empty(0, np.float64)
        if len(parts) == 1:
            ids, contrib = parts[0]
            keep = contrib != 0
            return np.asarray(ids[keep], dtype=np.int32), contrib[keep]
        all_ids = np.concatenate([ids for ids, _contrib in parts])
        if touched * _DENSE_RATIO >= self.n_docs:
            # bincount adds the weights in array order: per document, term by term from 0.0.
            dense = np.bincount(
                all_ids, weights=np.concatenate([c for _ids, c in parts]), minlength=self.n_docs
            )
            mask = dense != 0
            return np.flatnonzero(mask).astype(np.int32), dense[mask]
        uniq, inverse = np.unique(all_ids, return_inverse=True)
        totals = np.zeros(uniq.shape[0], dtype=np.float64)
        offset = 0
        for _ids, contrib in parts:
            n = contrib.shape[0]
            totals[inverse[offset : offset + n]] += contrib
            offset += n
        keep = totals != 0
        return uniq[keep].astype(np.int32), totals[keep]

    def score_docs(
        self, terms: Sequence[str], weights: Sequence[float] | None, docs: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """`score` for the ascending ids `docs` alone: the same pairs, sums bit for bit (each
        document's terms added in query order from 0.0, the same float64 operations).

        A phrase query can match only the documents holding the phrase, usually a few hundred
        of a million: looking their postings up costs far less than scoring every document
        that holds one of the words (`SearchEngine._select`).
        """
        docs = np.asarray(docs, dtype=np.int32)
        totals = np.zeros(docs.shape[0], dtype=np.float64)
        for i, term in enumerate(terms):
            tid = self.vocab.get(term)
            if tid is None or not docs.shape[0]:
                continue
            start, end = int(self.indptr[tid]), int(self.indptr[tid + 1])
            block = np.asarray(self.doc_ids[start:end])
            at = np.searchsorted(block, docs)
            found = at < block.shape[0]
            found[found] = block[at[found]] == docs[found]
            contrib = self.sat[start + at[found]] * self.idf[tid]
            if weights is not None and weights[i] != 1.0:
                contrib *= weights[i]
            totals[found] += contrib
        keep = totals != 0
        return docs[keep], totals[keep]

    def get_scores(self, terms: Sequence[str]) -> np.ndarray:
        """Dense scores for every document, as `rank_bm25.BM25Okapi.get_scores` returns."""
        dense = np.zeros(self.n_docs, dtype=np.float64)
        ids, scores = self.score(terms)
        dense[ids] = scores
        return dense

    # -- persistence ------------------------------------------------------------------------

    def save(self, folder: Path, meta: dict[str, Any]) -> None:
        """Write into a temporary folder, then rename: a crash never leaves half an index."""
        with atomic_folder(folder) as tmp:
            arrays = {name: getattr(self, name) for name in SAVED_ARRAYS}
            arrays |= self.block_max.arrays() | self.pairs.arrays()
            for name, values in arrays.items():
                np.save(tmp / f"{name}.npy", np.ascontiguousarray(values))
            terms = sorted(self.vocab, key=self.vocab.__getitem__)
            (tmp / "vocab.txt").write_text("\n".join(terms), encoding="utf-8")
            write_meta(tmp, list(arrays), meta, self.n_docs, len(self.vocab), self.params)

    @classmethod
    def load(cls, folder: Path, expect: dict[str, Any], *, mmap: bool = False) -> BM25Index:
        """Load a saved index whose meta matches `expect`; raise IndexCacheError otherwise."""
        meta = read_meta(folder, "index", INDEX_FORMAT, expect, IndexCacheError)
        arrays = {}
        try:
            # Sizes here; digests after start-up (`saved_digests`, bot.search.files.integrity):
            # hashing ~1.4 GB of arrays was most of a 1M-paper start.
            check_sizes(folder, meta.get("sizes", {}), meta.get("sizes", {}), IndexCacheError)
            for name in (*SAVED_ARRAYS, *BlockMax.NAMES, *PairIndex.NAMES):
                path = folder / f"{name}.npy"
                arrays[name] = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
            text = (folder / "vocab.txt").read_text(encoding="utf-8")
        except (OSError, ValueError) as exc:
            raise IndexCacheError(f"{folder}: cannot read index ({exc})") from exc
        terms = text.split("\n") if text else []
        vocab = {term: i for i, term in enumerate(terms)}
        indptr = arrays["indptr"]
        if (
            len(vocab) != meta.get("n_terms")
            or indptr.shape[0] != len(vocab) + 1
            or arrays["doc_len"].shape[0] != meta.get("n_docs")
            or int(indptr[-1]) != arrays["doc_ids"].shape[0]
        ):
            raise IndexCacheError(f"{folder}: arrays do not fit together")
        params = BM25Params(*meta["params"])
        pos_indptr = arrays["pos_indptr"]
        bounds = BlockMax.from_arrays(arrays, len(arrays["doc_len"]))
        pairs = PairIndex.from_arrays(arrays, len(vocab))
        if (
            pairs is None
            or arrays["sat"].shape != arrays["doc_ids"].shape
            or pos_indptr.shape != indptr.shape
            or int(pos_indptr[-1]) != arrays["positions"].shape[0]
            or bounds is None
            or bounds.term_max.shape[0] != len(vocab)
        ):
            raise IndexCacheError(f"{folder}: arrays do not fit together")
        return cls(
            vocab,
            indptr,
            arrays["doc_ids"],
            arrays["tfs"],
            arrays["doc_len"],
            params,
            saturation=arrays["sat"],
            pos_indptr=pos_indptr,
            positions=arrays["positions"],
            bounds=bounds,
            pair_index=pairs,
        )


def saved_digests(folder: Path) -> dict[str, str]:
    """File name -> digest of a saved index, for the check after start-up (`integrity`)."""
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        digests = meta["digests"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise IndexCacheError(f"{folder}: no readable digests ({exc})") from exc
    return {(f"{k}.npy" if k != "vocab" else "vocab.txt"): str(v) for k, v in digests.items()}


def write_meta(
    folder: Path,
    arrays: Sequence[str],
    meta: dict[str, Any],
    n_docs: int,
    n_terms: int,
    params: BM25Params,
) -> None:
    """meta.json of an index whose `arrays` (.npy) and vocab.txt are written in `folder`:
    `meta`, the format, every file's size and digest, the counts and the BM25 parameters."""
    digests = {name: file_digest(folder / f"{name}.npy") for name in arrays}
    digests["vocab"] = file_digest(folder / "vocab.txt")
    sizes = {f"{n}.npy": (folder / f"{n}.npy").stat().st_size for n in arrays}
    sizes["vocab.txt"] = (folder / "vocab.txt").stat().st_size
    full_meta = dict(
        meta,
        format=INDEX_FORMAT,
        sizes={name: {"bytes": size} for name, size in sizes.items()},
        n_docs=n_docs,
        n_terms=n_terms,
        digests=digests,
        params=params.saved(),
    )
    (folder / "meta.json").write_text(json.dumps(full_meta, indent=1), encoding="utf-8")

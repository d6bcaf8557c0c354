"""BM25Okapi over postings: the exact scores of `rank_bm25.BM25Okapi`, without its full scan.

`rank_bm25.get_scores` walks every document for every query term. Here each term keeps a
postings list (doc ids, term frequencies), so a query touches only the documents that contain
its terms; per-document length normalisation is precomputed once. The arithmetic follows
rank_bm25 operation for operation, so scores agree to float rounding (tests check 1e-9).

Scoring (`score`), top-k selection (`top_k`) and persistence (`save` / `load`) are separate
pieces: search composes them, benchmarks and parity tests call them directly.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

INDEX_FORMAT = 1
MAX_TF = np.iinfo(np.uint16).max
_ARRAYS = ("indptr", "doc_ids", "tfs", "doc_len")


@dataclass(frozen=True, slots=True)
class BM25Params:
    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25


class IndexCacheError(Exception):
    """A saved index is missing, stale or damaged; the caller rebuilds it."""


class BM25Index:
    """Term postings in CSR form: term t's documents are `doc_ids[indptr[t]:indptr[t+1]]`."""

    def __init__(self, vocab: dict[str, int], indptr: np.ndarray, doc_ids: np.ndarray,
                 tfs: np.ndarray, doc_len: np.ndarray, params: BM25Params) -> None:
        self.vocab = vocab
        self.indptr = indptr
        self.doc_ids = doc_ids
        self.tfs = tfs
        self.doc_len = doc_len
        self.params = params
        self.n_docs = int(doc_len.shape[0])
        self.avgdl = float(doc_len.sum()) / self.n_docs if self.n_docs else 0.0
        df = np.diff(indptr).astype(np.float64)
        self.idf = _okapi_idf(df, self.n_docs, params.epsilon)
        p = params
        # rank_bm25: q_freq + k1 * (1 - b + b * doc_len / avgdl), per document, computed once.
        safe_avgdl = self.avgdl or 1.0
        self.norm = p.k1 * (1 - p.b + p.b * doc_len.astype(np.float64) / safe_avgdl)

    # -- building ---------------------------------------------------------------------------

    @classmethod
    def build(cls, docs: Iterable[Sequence[str]], params: BM25Params | None = None) -> BM25Index:
        """Index tokenised documents (lists of terms, repeats counted), in corpus order."""
        vocab: dict[str, int] = {}
        term_ids = array("I")
        counts = array("I")
        uniques = array("I")
        lengths = array("I")
        for tokens in docs:
            counter = Counter(tokens)
            lengths.append(len(tokens))
            uniques.append(len(counter))
            for term, count in counter.items():
                tid = vocab.get(term)
                if tid is None:
                    tid = vocab[term] = len(vocab)
                term_ids.append(tid)
                counts.append(count)
        n_docs = len(lengths)
        t = np.frombuffer(term_ids, dtype=np.uint32)
        c = np.minimum(np.frombuffer(counts, dtype=np.uint32), MAX_TF).astype(np.uint16)
        d = np.repeat(np.arange(n_docs, dtype=np.int32), np.frombuffer(uniques, dtype=np.uint32))
        order = np.argsort(t, kind="stable")  # stable: each postings list stays in corpus order
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(t, minlength=len(vocab)), out=indptr[1:])
        return cls(vocab, indptr, d[order], c[order],
                   np.frombuffer(lengths, dtype=np.uint32).copy(), params or BM25Params())

    # -- scoring ----------------------------------------------------------------------------

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        tid = self.vocab.get(term)
        if tid is None:
            return np.empty(0, np.int32), np.empty(0, np.uint16)
        start, end = self.indptr[tid], self.indptr[tid + 1]
        return self.doc_ids[start:end], self.tfs[start:end]

    def term_idf(self, term: str) -> float:
        tid = self.vocab.get(term)
        return 0.0 if tid is None else float(self.idf[tid])

    def score(self, terms: Sequence[str],
              weights: Sequence[float] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(doc ids ascending, scores) of every document containing a query term.

        Repeated query terms count again, as in rank_bm25. `weights` scales each term's
        contribution (1.0 when omitted; query expansion uses lower weights).
        """
        parts_ids: list[np.ndarray] = []
        parts_scores: list[np.ndarray] = []
        k1p1 = self.params.k1 + 1
        for i, term in enumerate(terms):
            tid = self.vocab.get(term)
            if tid is None:
                continue
            start, end = self.indptr[tid], self.indptr[tid + 1]
            ids = self.doc_ids[start:end]
            tf = self.tfs[start:end].astype(np.float64)
            contrib = self.idf[tid] * (tf * k1p1 / (tf + self.norm[ids]))
            if weights is not None and weights[i] != 1.0:
                contrib = contrib * weights[i]
            parts_ids.append(ids)
            parts_scores.append(contrib)
        if not parts_ids:
            return np.empty(0, np.int32), np.empty(0, np.float64)
        if len(parts_ids) == 1:
            return parts_ids[0].astype(np.int32), parts_scores[0]
        all_ids = np.concatenate(parts_ids)
        uniq, inverse = np.unique(all_ids, return_inverse=True)
        # Accumulate term by term (in query order) like rank_bm25, not in arbitrary order.
        totals = np.zeros(uniq.shape[0], dtype=np.float64)
        offset = 0
        for contrib in parts_scores:
            n = contrib.shape[0]
            totals[inverse[offset:offset + n]] += contrib
            offset += n
        return uniq.astype(np.int32), totals

    def get_scores(self, terms: Sequence[str]) -> np.ndarray:
        """Dense scores for every document, as `rank_bm25.BM25Okapi.get_scores` returns."""
        dense = np.zeros(self.n_docs, dtype=np.float64)
        ids, scores = self.score(terms)
        dense[ids] = scores
        return dense

    # -- persistence ------------------------------------------------------------------------

    def save(self, folder: Path, meta: dict) -> None:
        """Write into a temporary folder, then rename: a crash never leaves half an index."""
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
        try:
            digests = {}
            for name in _ARRAYS:
                path = tmp / f"{name}.npy"
                np.save(path, np.ascontiguousarray(getattr(self, name)))
                digests[name] = _file_digest(path)
            terms = sorted(self.vocab, key=self.vocab.__getitem__)
            vocab_path = tmp / "vocab.txt"
            vocab_path.write_text("\n".join(terms), encoding="utf-8")
            digests["vocab"] = _file_digest(vocab_path)
            full_meta = dict(meta, format=INDEX_FORMAT, n_docs=self.n_docs,
                             n_terms=len(self.vocab), digests=digests,
                             params=[self.params.k1, self.params.b, self.params.epsilon])
            (tmp / "meta.json").write_text(json.dumps(full_meta, indent=1), encoding="utf-8")
            if folder.exists():
                shutil.rmtree(folder)
            os.replace(tmp, folder)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)

    @classmethod
    def load(cls, folder: Path, expect: dict, *, mmap: bool = False) -> BM25Index:
        """Load a saved index whose meta matches `expect`; raise IndexCacheError otherwise."""
        try:
            meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise IndexCacheError(f"{folder}: no readable meta.json ({exc})") from exc
        if meta.get("format") != INDEX_FORMAT:
            raise IndexCacheError(f"{folder}: index format {meta.get('format')} != {INDEX_FORMAT}")
        for key, value in expect.items():
            if meta.get(key) != value:
                raise IndexCacheError(f"{folder}: stale index ({key} changed)")
        digests = meta.get("digests", {})
        arrays = {}
        try:
            for name in (*_ARRAYS, "vocab"):
                path = folder / (f"{name}.npy" if name != "vocab" else "vocab.txt")
                if _file_digest(path) != digests.get(name):
                    raise IndexCacheError(f"{folder}: {path.name} is damaged (checksum)")
                if name != "vocab":
                    arrays[name] = np.load(path, mmap_mode="r" if mmap else None,
                                           allow_pickle=False)
            text = (folder / "vocab.txt").read_text(encoding="utf-8")
        except (OSError, ValueError) as exc:
            raise IndexCacheError(f"{folder}: cannot read index ({exc})") from exc
        terms = text.split("\n") if text else []
        vocab = {term: i for i, term in enumerate(terms)}
        indptr = arrays["indptr"]
        if (len(vocab) != meta.get("n_terms") or indptr.shape[0] != len(vocab) + 1
                or arrays["doc_len"].shape[0] != meta.get("n_docs")
                or int(indptr[-1]) != arrays["doc_ids"].shape[0]):
            raise IndexCacheError(f"{folder}: arrays do not fit together")
        params = BM25Params(*meta["params"])
        return cls(vocab, indptr, arrays["doc_ids"], arrays["tfs"], arrays["doc_len"], params)


def _okapi_idf(df: np.ndarray, n_docs: int, epsilon: float) -> np.ndarray:
    """rank_bm25's idf: log((N - n + 0.5) / (n + 0.5)), negatives floored at eps * mean idf."""
    if df.size == 0:
        return df
    idf = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
    average = float(idf.sum()) / idf.size
    idf[idf < 0] = epsilon * average
    return idf


def top_k(doc_ids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best (doc id, score) pairs, best first; equal scores keep corpus order.

    Selection is O(n) (a partition around the k-th score), then only the k winners are sorted.
    Documents scoring 0 or less are never returned: they did not match.
    """
    keep = scores > 0
    if not keep.all():
        doc_ids, scores = doc_ids[keep], scores[keep]
    n = scores.shape[0]
    if k <= 0 or n == 0:
        return doc_ids[:0], scores[:0]
    if n > k:
        threshold = np.partition(scores, n - k)[n - k]
        above = scores > threshold
        ties = np.flatnonzero(scores == threshold)[: k - int(above.sum())]
        chosen = np.concatenate([np.flatnonzero(above), ties])
        doc_ids, scores = doc_ids[chosen], scores[chosen]
    order = np.lexsort((doc_ids, -scores))
    return doc_ids[order], scores[order]


def _file_digest(path: Path) -> str:
    digest = hashlib.blake2b(digest_size=16)
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()

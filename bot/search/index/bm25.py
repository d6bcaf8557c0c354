"""BM25's arithmetic (rank_bm25's BM25Okapi, or with Lucene's idf), shared by the index in
memory (`BM25Index`) and the streamed build that writes its arrays to files
(`bot.search.index.streamed`): the same float64 operations in the same order, so both give the
same bits. `[search] idf` chooses the idf (`idf_of`); "okapi" is rank_bm25's to the bit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from bot.search.index.postings import BM25Params

# The idf formulas `[search] idf` chooses between (`idf_of`).
IDF_FORMULAS = ("lucene", "okapi")


def length_norms(doc_len: np.ndarray, params: BM25Params) -> tuple[float, np.ndarray]:
    """(avgdl, per document rank_bm25's k1 * (1 - b + b * doc_len / avgdl)), computed once."""
    n_docs = int(doc_len.shape[0])
    avgdl = float(doc_len.sum()) / n_docs if n_docs else 0.0
    p = params
    return avgdl, p.k1 * (1 - p.b + p.b * doc_len.astype(np.float64) / (avgdl or 1.0))


def posting_saturation(
    tfs: np.ndarray, doc_ids: np.ndarray, norm: np.ndarray, k1: float
) -> np.ndarray:
    """tf * (k1 + 1) / (tf + norm[doc]) for every posting, in blocks (small temporaries)."""
    out = np.empty(tfs.shape[0], dtype=np.float64)
    k1p1 = k1 + 1
    step = 1 << 20
    for a in range(0, tfs.shape[0], step):
        tf = tfs[a : a + step].astype(np.float64)
        block = tf * k1p1
        block /= tf + norm[doc_ids[a : a + step]]
        out[a : a + step] = block
    return out


# The idf a word present in at least half the documents gets when eps * mean idf is not
# positive (a corpus of a handful of papers): small, but it still counts.
MIN_IDF = 0.01


def okapi_idf(df: np.ndarray, n_docs: int, epsilon: float) -> np.ndarray:
    """rank_bm25's idf: log((N - n + 0.5) / (n + 0.5)), floored at eps * mean idf.

    rank_bm25 floors only negative idf (n > N/2). Two departures, both where its idf is not
    positive, so a paper containing the query word is never "no match": a word in exactly
    half the documents (idf 0, e.g. 2 of 4 papers) gets the floor too, and when the floor
    itself is not positive (tiny corpora whose mean idf is <= 0) it is MIN_IDF. Wherever
    rank_bm25's idf is positive the two agree to the bit (the parity tests pin it).
    """
    if df.size == 0:
        return df
    idf = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
    average = float(idf.sum()) / idf.size
    floor = epsilon * average
    idf[idf <= 0] = floor if floor > 0 else MIN_IDF
    return idf


def lucene_idf(df: np.ndarray, n_docs: int) -> np.ndarray:
    """Lucene's (and bm25s's, tantivy's) idf: log(1 + (N - n + 0.5) / (n + 0.5)).

    Always positive and falling steadily with df, so a common word ("model", in most
    papers) still counts a little and never more than a rarer one; no floor is needed.
    """
    if df.size == 0:
        return df
    return np.log1p((n_docs - df + 0.5) / (df + 0.5))


def idf_of(df: np.ndarray, n_docs: int, params: BM25Params) -> np.ndarray:
    """The idf `params.idf` names: `okapi` (rank_bm25's, floored by `params.epsilon`) or
    `lucene` (epsilon unused)."""
    if params.idf == "okapi":
        return okapi_idf(df, n_docs, params.epsilon)
    if params.idf == "lucene":
        return lucene_idf(df, n_docs)
    raise ValueError(f"unknown idf {params.idf!r}; choose one of {', '.join(IDF_FORMULAS)}")

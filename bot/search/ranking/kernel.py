"""The compiled search kernels (`bot/search/ranking/csrc/`, the C extension
`bot.search.ranking._kernel` that the project's own install builds): the pruned top-k
traversal, and the word-order bonus's pair counts. Used wherever the extension was built, with
numpy's versions (`bot.search.ranking.pruning.prune`, `bot.search.query.proximity.occurrences`)
where it was not: the same answers, bit for bit (tests/search/ranking/test_pruning.py,
tests/search/query/test_proximity.py).

The extension is optional on purpose: `pip install` compiles it when a C compiler and Python's
headers are there (setup.py) and still succeeds without them. It costs a process a few
kilobytes, nothing at start-up (no compile at run time, no background load), and holds no GIL
while it runs. `PAPERBOT_TOPK_KERNEL=numpy` turns it off, to compare the two traversals or to
rule the extension out.
"""

from __future__ import annotations

import functools
import importlib
import os
import weakref
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from bot.search.index.blockmax import QUANT, SLACK

if TYPE_CHECKING:
    from bot.search.index.postings import BM25Index

# "numpy" keeps queries on the numpy traversal even where the extension was built.
ENV = "PAPERBOT_TOPK_KERNEL"
MODULE = "bot.search.ranking._kernel"

# (index, term ids, weights, k, seed blocks, allowed) -> (ids, scores), or None for an index
# whose arrays are not of the kernel's types.
Kernel = Callable[..., tuple[np.ndarray, np.ndarray] | None]

# The index arrays the kernel reads (doc ids, saturations, indptr, idf, term maxima, block
# rows, block maxima), as the C code takes them.
DTYPES = tuple(
    np.dtype(t)
    for t in (np.int32, np.float64, np.int64, np.float64, np.float64, np.int32, np.uint8)
)


@functools.cache
def _module() -> ModuleType | str:
    """The extension, or why it is not there."""
    try:
        return importlib.import_module(MODULE)
    except ImportError as exc:
        return f"not built ({exc}); `pip install .` builds it where a C compiler is present"


# The last indexes' arrays as the kernel takes them (contiguous, of its types), kept with the
# index: checking seven arrays costs more than a short query. Dropped with the index.
_ARRAYS: dict[int, tuple[np.ndarray, ...] | None] = {}


def arrays_of(index: BM25Index) -> tuple[np.ndarray, ...] | None:
    """The index's arrays the kernel reads, or None if of other types."""
    key = id(index)
    if key not in _ARRAYS:
        bounds = index.block_max
        arrays = [np.asarray(getattr(index, name)) for name in ("doc_ids", "sat", "indptr", "idf")]
        arrays += [np.asarray(a) for a in (bounds.term_max, bounds.rows, bounds.maxima)]
        fits = tuple(a.dtype for a in arrays) == DTYPES and all(
            a.flags.c_contiguous for a in arrays
        )
        _ARRAYS[key] = tuple(arrays) if fits else None
        weakref.finalize(index, _ARRAYS.pop, key, None)
    return _ARRAYS[key]


def run(
    index: BM25Index,
    tids: list[int],
    weights: list[float],
    k: int,
    seeds: int,
    allowed: np.ndarray | None = None,
    stats: list[int] | None = None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """(ids, scores) of the k best documents, best first, equal scores in corpus order: the
    extension over the index's arrays (None where they are not of its types). `seeds`: how
    many best-bounded blocks the first round scores. `stats` gets the blocks scored."""
    module = _module()
    arrays = arrays_of(index)
    if isinstance(module, str) or arrays is None:
        return None
    ids = np.empty(max(k, 0), np.int32)
    scores = np.empty(max(k, 0), np.float64)
    mask = None if allowed is None else np.ascontiguousarray(allowed, dtype=np.bool_)
    found, scored = module.top_k(
        *arrays,
        arrays[-1].shape[1],
        index.block_max.shift,
        np.array(tids, dtype=np.int64),
        np.array(weights, dtype=np.float64),
        k,
        seeds,
        mask,
        ids,
        scores,
        SLACK,
        float(QUANT),
    )
    if stats is not None:
        stats.append(scored)
    return ids[:found], scores[:found]


def pair_counts(
    index: BM25Index,
    first: tuple[int, int, int, np.ndarray],
    second: tuple[int, int, int, np.ndarray],
    checkpoint: int,
    docs: np.ndarray,
) -> np.ndarray | None:
    """How often each of the ascending `docs` holds term `first` right before term `second`
    (int64 counts), or None where the extension is not there or not wanted. Each term is
    (first posting, end, first position, run starts every `checkpoint` postings)."""
    module = _module()
    if isinstance(module, str) or not wanted():
        return None
    out = np.zeros(docs.shape[0], np.int64)
    module.pair_counts(
        np.asarray(index.doc_ids),
        np.asarray(index.tfs),
        np.asarray(index.positions),
        first,
        second,
        checkpoint,
        np.ascontiguousarray(docs, dtype=np.int64),
        out,
    )
    return out


def wanted() -> bool:
    """Whether this process's settings let queries take the extension (`ENV`)."""
    return os.environ.get(ENV, "").strip().lower() != "numpy"


def compiled() -> Kernel | None:
    """The kernel if it is built and wanted, else None (queries take numpy's traversal)."""
    return run if wanted() and not isinstance(_module(), str) else None


def describe() -> str:
    """Which traversal pruned queries take, and why (logs, `--check`, benchmark reports)."""
    module = _module()
    if isinstance(module, str):
        return f"numpy traversal (compiled kernel: {module})"
    if not wanted():
        return f"numpy traversal (compiled kernel: off, {ENV}=numpy)"
    return "compiled kernel (C extension)"

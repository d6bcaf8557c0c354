"""The compiled top-k traversal (`bot.search.blockmax_kernel`, numba), loaded off the start-up
path, and the numpy traversal until it is ready or wherever numba is not installed.

numba is an optional extra (`pip install -e ".[fast]"`): importing it and compiling the kernel
(or loading the machine code numba caches next to the module, else in the user's cache
folder) takes from ~1 s (cached) to tens of seconds (first compile on a busy machine), more
than the bot's whole start-up budget. So nothing here runs at import: the first pruned query
starts a background thread that loads the kernel, and queries take the numpy path until it is
ready. `load(wait=True)` is for callers that want the kernel now (benchmarks, tests).
Both paths return the same ids and scores, bit for bit (tests/search/test_pruning.py).
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from bot.search.index import BM25Index

log = logging.getLogger(__name__)

# "numpy" turns the compiled kernel off (a process that must not compile, or a comparison).
ENV = "PAPERBOT_TOPK_KERNEL"

Kernel = Callable[..., tuple[np.ndarray, np.ndarray]]


class _Loader:
    """One background load per process; `kernel` is set once it answers."""

    def __init__(self) -> None:
        self.kernel: Kernel | None = None
        self.done = threading.Event()
        self.error: str | None = None
        self._lock = threading.Lock()
        self._started = False

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
        if os.environ.get(ENV, "").lower() == "numpy":
            self.error = f"turned off ({ENV}=numpy)"
            self.done.set()
            return
        threading.Thread(target=self._run, name="topk-kernel", daemon=True).start()

    def _run(self) -> None:
        try:
            blockmax_kernel = importlib.import_module("bot.search.blockmax_kernel")
        except ImportError as exc:  # numba is an optional extra
            self.error = f"numba is not installed ({exc})"
        except (RuntimeError, OSError) as exc:  # e.g. no writable cache folder for numba
            self.error = f"cannot load ({exc})"
            log.warning("compiled top-k kernel unavailable, numpy traversal kept: %s", exc)
        else:
            _warm(blockmax_kernel.block_max_top_k)
            self.kernel = blockmax_kernel.block_max_top_k
            log.info("compiled top-k kernel ready")
        self.done.set()


# The index arrays the kernel reads (doc ids, saturations, indptr, idf, term maxima, block
# rows, block maxima): other types would make numba compile another version mid-query.
DTYPES = tuple(
    np.dtype(t)
    for t in (np.int32, np.float64, np.int64, np.float64, np.float64, np.int32, np.uint8)
)


def _warm(run: Kernel) -> None:
    """Compile (or load from numba's cache) the one signature queries use: the index arrays
    read-only (as a memory-mapped index has them), int64 term ids, float64 weights."""
    doc_ids = np.array([0, 3, 40], np.int32)
    sat = np.ones(3, np.float64)
    indptr = np.array([0, 3], np.int64)
    one = np.ones(1, np.float64)
    rows = np.zeros(1, np.int32)
    maxima = np.ones((1, 2), np.uint8)
    arrays = [readonly(a) for a in (doc_ids, sat, indptr, one, one, rows, maxima)]
    tids = np.zeros(1, np.int64)
    run(*arrays, 5, tids, one.copy(), 2, 16, readonly(np.ones(41, np.bool_)), True)


# The last index's arrays as the kernel takes them: making seven read-only views costs more
# than a short query. Dropped with the index (a reload makes a new one).
_ARRAYS: dict[int, tuple[np.ndarray, ...]] = {}


def arrays_of(index: BM25Index) -> tuple[np.ndarray, ...] | None:
    """The index's arrays the kernel reads, read-only, or None if of other types."""
    found = _ARRAYS.get(id(index))
    if found is None:
        bounds = index.block_max
        names = ("doc_ids", "sat", "indptr", "idf")
        arrays = [getattr(index, name) for name in names]
        arrays += [bounds.term_max, bounds.rows, bounds.maxima]
        if tuple(a.dtype for a in arrays) != DTYPES:
            return None
        found = tuple(map(readonly, arrays))
        _ARRAYS[id(index)] = found
        weakref.finalize(index, _ARRAYS.pop, id(index), None)
    return found


def readonly(values: np.ndarray) -> np.ndarray:
    """A read-only plain view: saved indexes are memory-mapped read-only, built ones are not,
    and numba compiles one version per flavour; this way both share one."""
    view = np.asarray(values).view()
    view.flags.writeable = False
    return view


_LOADER = _Loader()


def compiled() -> Kernel | None:
    """The kernel if it is ready; else None (and its load starts in the background)."""
    if _LOADER.kernel is None:
        _LOADER.start()
    return _LOADER.kernel


def load(wait: bool = True, timeout: float | None = None) -> str:
    """Start loading the kernel; with `wait`, until it is ready or cannot be. A description
    of the traversal that queries take (for logs and benchmark reports)."""
    _LOADER.start()
    if wait:
        _LOADER.done.wait(timeout)
    return describe()


def describe() -> str:
    if _LOADER.kernel is not None:
        return "compiled kernel (numba)"
    reason = _LOADER.error or "still loading"
    return f"numpy traversal (compiled kernel: {reason})"

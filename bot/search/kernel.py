"""The compiled top-k traversal (`bot.search.blockmax_kernel`, numba): opt-in, loaded off the
start-up path, with the numpy traversal until it is ready and wherever it is not wanted.

Two steps turn it on, on purpose: the optional extra (`pip install -e ".[fast]"`) and
`PAPERBOT_TOPK_KERNEL=numba`. Why not whenever numba is installed: loading numba and LLVM adds
~50 MB of private memory to each bot process (plus ~125 MB of shared library pages), which
counts against a small container and against a second process on the same machine, and at 1M
papers the numpy traversal already answers in about a quarter of bm25s's time; the kernel's
gain is largest at ~100k papers (benchmarks/README.md). Test and benchmark environments have
numba installed, and their bots stay as deployed by default.

Importing numba and compiling the kernel (or loading the machine code numba caches next to
the module, else in the user's cache folder) takes from ~1 s (cached) to tens of seconds
(first compile on a busy machine), more than the bot's whole start-up budget. So nothing runs
at import: with the variable set, the first pruned query starts a background thread that
loads the kernel, and queries take the numpy path until it is ready. `load()` starts it
whatever the variable says (benchmarks, tests). Both paths return the same ids and scores,
bit for bit (tests/search/test_pruning.py).
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

# "numba" lets pruned queries load and use the compiled kernel (off by default, see above).
ENV = "PAPERBOT_TOPK_KERNEL"

Kernel = Callable[..., tuple[np.ndarray, np.ndarray]]


class _Loader:
    """One background load per process; `kernel` is set once it answers."""

    def __init__(self) -> None:
        self.kernel: Kernel | None = None
        self.done = threading.Event()
        self.error: str | None = None
        self._lock = threading.Lock()
        self.started = False

    def start(self) -> None:
        with self._lock:
            if self.started:
                return
            self.started = True
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


def wanted() -> bool:
    """Whether this process's settings ask for the compiled kernel (`ENV`)."""
    return os.environ.get(ENV, "").strip().lower() == "numba"


def compiled() -> Kernel | None:
    """The kernel if it is ready; else None (and, where wanted, its load starts)."""
    if _LOADER.kernel is None and wanted():
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
    if _LOADER.error:
        reason = _LOADER.error
    elif _LOADER.done.is_set() or not (wanted() or _LOADER.started):
        reason = f"not asked for ({ENV} is not numba)"
    else:
        reason = "still loading"
    return f"numpy traversal (compiled kernel: {reason})"

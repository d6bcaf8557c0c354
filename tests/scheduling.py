"""xdist's `load` scheduling with the long test files handed out first, spread over the workers.

Why: `load` gives each worker a run of consecutive tests, so where the long files fall in the
collection decides when they start; one started near the end kept a single worker busy while
the others had finished (a tail of the run's wall time on two cores). Here the files below go
first, each whole (module fixtures are built once), to the worker with the least estimated
work so far (longest first: the classic greedy), and the rest follows as `load` sends it.

The weights are seconds each file took alone (`pytest FILE -n 0 --durations=0`, a loaded
machine); only their order matters, and a stale figure costs some balance, never a test.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdist.scheduler import LoadScheduling

LONG_FILES: dict[str, float] = {
    "tests/app/test_shutdown.py": 70,
    "tests/console/test_startup_errors.py": 58,
    "tests/daily/test_scheduler.py": 46,
    "tests/app/exts/daily/test_processes.py": 41,
    "tests/test_benchmarks.py": 30,
    "tests/search/index/test_postings.py": 25,
    "tests/console/test_repl.py": 26,
    "tests/app/exts/daily/test_cog.py": 22,
    "tests/app/exts/daily/test_processes_overlap.py": 20,
    "tests/app/exts/daily/test_cog_faults.py": 20,
    "tests/test_searchpath.py": 12,
    "tests/evaluation/test_harness.py": 10,
    "tests/app/test_shutdown_states.py": 10,
    "tests/app/test_input.py": 8,
    "tests/test_phrase_benchmark.py": 10,
    "tests/search/test_caches.py": 9,
    "tests/search/test_precise_lists.py": 9,
    "tests/test_deploy.py": 9,
    "tests/search/analysis/test_no_word_lost.py": 7,
}


def long_groups(collection: Sequence[str]) -> list[tuple[float, list[int]]]:
    """(weight, indices in the collection) of each long file present, longest first."""
    groups: dict[str, list[int]] = {}
    for index, nodeid in enumerate(collection):
        path = nodeid.split("::", 1)[0]
        if path in LONG_FILES:
            groups.setdefault(path, []).append(index)
    return sorted(((LONG_FILES[p], ids) for p, ids in groups.items()), key=lambda g: -g[0])


class LongFirstScheduling(LoadScheduling):
    """`LoadScheduling` whose first distribution places the long files (see the module)."""

    def schedule(self) -> None:
        if self.collection is not None or not self._check_nodes_have_same_collection():
            super().schedule()  # a later call, or different collections (it aborts, saying so)
            return
        self.collection = next(iter(self.node2collection.values()))
        self.pending[:] = range(len(self.collection))
        if self.maxschedchunk is None:
            self.maxschedchunk = len(self.collection)
        work = dict.fromkeys(self.nodes, 0.0)
        for weight, indices in long_groups(self.collection):
            node = min(work, key=work.__getitem__)
            work[node] += weight
            taken = set(indices)
            self.pending[:] = [i for i in self.pending if i not in taken]
            self.node2pending[node].extend(indices)
            node.send_runtest_some(indices)
        for node in self.nodes:
            self.check_schedule(node)  # the rest as `load` sends it; shuts a node down at the end

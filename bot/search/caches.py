"""The one bounded cache of the engine, for everything remembered per word, paper or term.

Why bounded, and by so little: what a user types reaches these caches (a query's words, the
papers its hits show, the terms it ranks by), so a process that answers distinct queries for
weeks must not keep a little of each. Issue 26 measured the console at +19 % peak RSS from
2,000 to 20,000 distinct queries; `benchmarks/query_memory.py` measures it again. Each bound is
chosen so the steady state is small (a few MB) and costs no measurable search time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most `bound` entries (or, with `weigh`, entries weighing `bound` in all), the least
    recently used dropped first. Thread-safe: searches run in several threads at once."""

    def __init__(self, bound: int, weigh: Callable[[V], int] | None = None) -> None:
        self.bound = bound
        self._weigh = weigh
        self._weight = 0
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size(self) -> int:
        """What counts against `bound`: the entries, or their total weight."""
        return self._weight if self._weigh is not None else len(self._entries)

    def __contains__(self, key: K) -> bool:
        return key in self._entries

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> V:
        """Remember `value` (and return it); an entry heavier than `bound` is not kept."""
        weight = self._weigh(value) if self._weigh is not None else 1
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None and self._weigh is not None:
                self._weight -= self._weigh(old)
            if weight > self.bound:
                return value
            self._entries[key] = value
            self._weight += weight if self._weigh is not None else 0
            while self.size > self.bound:
                _key, dropped = self._entries.popitem(last=False)
                if self._weigh is not None:
                    self._weight -= self._weigh(dropped)
            return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._weight = 0

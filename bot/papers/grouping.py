"""Grouping a corpus's papers into works (`bot.papers.versions` says when two records are
versions of one work and how they merge): in memory (`group`, `merge_lists`), or streamed
(`Plan` then `merged_stream`).

Streamed: a first pass over the files keeps 64-bit hashes of each paper's blocking keys;
papers whose key is shared with another file are the only ones held back in the second pass
and compared at its end, so memory grows with the candidates, not the corpus.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from bot.papers.records import Paper
from bot.papers.versions import block_keys, merge_group, same_work


@dataclass(frozen=True, slots=True)
class Merge:
    """One merge made: the merged paper's id, the ids it joined, and why each joined."""

    paper_id: str
    ids: tuple[str, ...]
    reasons: tuple[str, ...]


@dataclass
class Grouping:
    """Papers grouped into works; `merges` lists every group of two or more."""

    papers: list[Paper] = field(default_factory=list)
    merges: list[Merge] = field(default_factory=list)


def group(papers: Sequence[Paper], sources: Sequence[int]) -> Grouping:
    """Group `papers` (from corpus file `sources[i]`) into works and merge each group; the
    output keeps the input order, a merged paper where its first member was."""
    buckets: dict[str, list[int]] = {}
    for i, paper in enumerate(papers):
        for key in block_keys(paper):
            buckets.setdefault(key, []).append(i)
    pairs: list[tuple[int, int, int, str]] = []
    checked: set[tuple[int, int]] = set()
    for members in buckets.values():
        for x, i in enumerate(members):
            for j in members[x + 1 :]:
                if sources[i] == sources[j] or (i, j) in checked:
                    continue
                checked.add((i, j))
                reason = same_work(papers[i], papers[j])
                if reason is not None:
                    strength = 0 if reason in ("arxiv id", "doi", "openreview id") else 1
                    pairs.append((strength, i, j, reason))
    parent = list(range(len(papers)))
    files: dict[int, set[int]] = {i: {sources[i]} for i in range(len(papers))}
    why: dict[int, list[str]] = {}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for _strength, i, j, reason in sorted(pairs):
        ri, rj = root(i), root(j)
        if ri == rj or files[ri] & files[rj]:  # one record per file in a work
            continue
        parent[rj] = ri
        files[ri] |= files.pop(rj)
        why.setdefault(ri, []).extend([*why.pop(rj, []), reason])
    grouped: dict[int, list[int]] = {}
    for i in range(len(papers)):
        grouped.setdefault(root(i), []).append(i)
    out = Grouping()
    for r, members in sorted(grouped.items(), key=lambda item: item[1][0]):
        merged = merge_group([papers[i] for i in members])
        out.papers.append(merged)
        if len(members) > 1:
            ids = tuple(papers[i].id for i in members)
            out.merges.append(Merge(merged.id, ids, tuple(why.get(r, []))))
    return out


def merge_versions(papers: Sequence[Paper], sources: Sequence[int]) -> list[Paper]:
    """`group(papers, sources).papers`."""
    return group(papers, sources).papers


# --- streamed: plan in a first pass, merge in the second -----------------------------------


class Plan:
    """Which papers may have a version in another file (`maybe`), from hashes of every
    paper's blocking keys (a first pass over the files; a few bytes per key)."""

    def __init__(self) -> None:
        self._keys = array("q")
        self._files = array("q")
        self._ids = array("q")
        self.candidates: set[int] = set()  # hashes of the ids held back in the second pass

    def add(self, paper: Paper, source: int) -> None:
        for key in block_keys(paper):
            self._keys.append(hash(key))
            self._files.append(source)
            self._ids.append(hash(paper.id))

    def finish(self) -> Plan:
        """Find the keys shared by two files; their papers are the candidates."""
        order = sorted(range(len(self._keys)), key=self._keys.__getitem__)
        start = 0
        while start < len(order):
            end = start
            key = self._keys[order[start]]
            while end < len(order) and self._keys[order[end]] == key:
                end += 1
            run = order[start:end]
            if len({self._files[k] for k in run}) > 1:
                self.candidates.update(self._ids[k] for k in run)
            start = end
        self._keys, self._files, self._ids = array("q"), array("q"), array("q")
        return self

    def maybe(self, paper: Paper) -> bool:
        return hash(paper.id) in self.candidates


def merge_lists(per_file: Sequence[Sequence[Paper]]) -> list[Paper]:
    """The papers of files already in memory (one list per file) merged, in the order
    `merged_stream` gives when it reads the files."""
    plan = Plan()
    for source, papers in enumerate(per_file):
        for paper in papers:
            plan.add(paper, source)
    return list(merged_stream((iter(papers) for papers in per_file), plan.finish()))


def merged_stream(
    files: Iterable[Iterator[Paper]], plan: Plan, merges: list[Merge] | None = None
) -> Iterator[Paper]:
    """The papers of `files` (the second pass) with versions merged: papers the plan names
    are held back and grouped at the end, every other one passes at once."""
    held: list[Paper] = []
    sources: list[int] = []
    for source, papers in enumerate(files):
        for paper in papers:
            if plan.maybe(paper):
                held.append(paper)
                sources.append(source)
            else:
                yield paper
    grouping = group(held, sources)
    if merges is not None:
        merges.extend(grouping.merges)
    yield from grouping.papers

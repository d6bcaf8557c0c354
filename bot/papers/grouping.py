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

_KEY_MASK = (1 << 40) - 1


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
    paper's blocking keys (a first pass over the files): 16 bytes per key, ~5 keys a paper.

    A key's hash is cut to 40 bits and packed with its file's number (16 bits) into one
    int64, so finding the keys two files share is one sort of plain integers; a collision of
    40-bit hashes only holds back a paper more (it is compared, not merged, at the end)."""

    def __init__(self) -> None:
        self._packed = array("q")  # (key hash: 40 bits) << 16 | file number
        self._ids = array("q")  # hash of the paper id of each key
        self.candidates: set[int] = set()  # hashes of the ids held back in the second pass

    def add(self, paper: Paper, source: int) -> None:
        paper_hash = hash(paper.id)
        for key in block_keys(paper):
            self._packed.append((hash(key) & _KEY_MASK) << 16 | (source & 0xFFFF))
            self._ids.append(paper_hash)

    def finish(self) -> Plan:
        """Find the keys of two files or more; their papers are the candidates."""
        shared: set[int] = set()
        last_key, last_file = -1, -1
        for packed in sorted(self._packed):
            key, file = packed >> 16, packed & 0xFFFF
            if key == last_key and file != last_file:
                shared.add(key)
            last_key, last_file = key, file
        if shared:
            self.candidates = {
                paper
                for packed, paper in zip(self._packed, self._ids, strict=True)
                if packed >> 16 in shared
            }
        self._packed, self._ids = array("q"), array("q")
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

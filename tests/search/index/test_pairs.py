"""Issue 17 (phrase p99 at 1M): adjacent pairs of frequent terms are indexed, and phrase checks
through them find exactly the documents that hold the run.

Proves: `PairIndex.build` gives, for every adjacent pair of frequent terms, exactly the
documents, counts and offsets found by walking every document's terms (for one chunk of
documents and for many, serial and parallel builds, saved and memory-mapped); phrase checks
that use pairs agree with a brute-force scan of the analysed papers of tests/ on random phrases
(1-5 terms, repeats, absent runs) at several frequency thresholds, with and without a filter; a
damaged pair array is refused at load; the word-order bonus from pair counts is the bonus from
positions.
"""

from __future__ import annotations

import random
from collections import defaultdict
from itertools import pairwise

import numpy as np
import pytest

from bot.search.index.pairs import PairIndex
from bot.search.index.postings import BM25Index, BM25Params, IndexCacheError
from bot.search.query.proximity import pair_bonus
from tests.search.index.test_positions import contains_run, docs, random_corpus, three_builds

__all__ = ["docs"]  # the module's fixture: the analysed papers of tests/


def brute_pairs(
    docs: list[list[str]], frequent: set[str]
) -> dict[tuple[str, str], dict[int, list[int]]]:
    """(first, second) -> document -> offsets, from walking every document's terms."""
    found: dict[tuple[str, str], dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for d, tokens in enumerate(docs):
        for i in range(len(tokens) - 1):
            if tokens[i] in frequent and tokens[i + 1] in frequent:
                found[(tokens[i], tokens[i + 1])][d].append(i)
    return found


def saved_pairs(index: BM25Index) -> dict[tuple[str, str], dict[int, list[int]]]:
    """The same mapping, read from the index's pair arrays."""
    terms = sorted(index.vocab, key=index.vocab.__getitem__)
    pairs, runs = index.pairs, index.pairs.runs
    n = len(terms)
    out: dict[tuple[str, str], dict[int, list[int]]] = {}
    for p, key in enumerate(pairs.keys.tolist()):
        docs = runs.doc_ids[runs.indptr[p] : runs.indptr[p + 1]].tolist()
        tfs = runs.tfs[runs.indptr[p] : runs.indptr[p + 1]].tolist()
        offsets = runs.positions[runs.pos_indptr[p] : runs.pos_indptr[p + 1]].tolist()
        per_doc = {}
        for d, tf in zip(docs, tfs, strict=True):
            per_doc[d], offsets = offsets[:tf], offsets[tf:]
        assert not offsets
        out[(terms[key // n], terms[key % n])] = per_doc
    return out


@pytest.mark.parametrize("chunk", [1 << 16, 7])  # 7: pairs from many document chunks
def test_pairs_are_every_adjacent_pair_of_frequent_terms(tmp_path, monkeypatch, chunk) -> None:
    monkeypatch.setattr("bot.search.index.pairs.CHUNK_DOCS", chunk)
    docs = random_corpus(random.Random(4), 600, 30)
    serial, parallel, loaded = three_builds(docs, tmp_path, monkeypatch, 250)
    df = {t: sum(t in set(d) for d in docs) for t in serial.vocab}
    frequent = {t for t, n in df.items() if n >= 0.2 * len(docs)}
    assert 3 <= len(frequent) < len(df)  # the premise: some terms are frequent, not all
    want = {k: dict(v) for k, v in brute_pairs(docs, frequent).items()}
    for index in (serial, parallel, loaded):
        assert saved_pairs(index) == want
        ids = sorted(index.vocab[t] for t in frequent)
        assert index.pairs.frequent.tolist() == ids


def test_wide_offsets_pair_too() -> None:
    long_doc = ["x", "y"] * 35_000 + ["a", "b"]
    index = BM25Index.build([["a", "b"], long_doc, ["b", "a"]], BM25Params())
    assert index.pairs.runs.positions.dtype == np.uint32
    assert saved_pairs(index)[("a", "b")] == {0: [0], 1: [70_000]}
    assert index.phrase_docs(("y", "a", "b")).tolist() == [1]


@pytest.mark.parametrize("share", [0.1, 0.02, 0.0])  # 0.0: every adjacent pair is indexed
def test_phrases_through_pairs_find_what_a_scan_finds(docs, monkeypatch, share) -> None:
    """Random runs of the tests' papers (and runs that exist nowhere) against a scan of
    every analysed paper; the index with pairs and without (a threshold no term reaches)
    agree with the scan and so with each other."""
    monkeypatch.setattr("bot.search.index.pairs.MIN_SHARE", share)
    index = BM25Index.build(docs, BM25Params())
    monkeypatch.setattr("bot.search.index.pairs.MIN_SHARE", 2.0)
    plain = BM25Index.build(docs, BM25Params())
    assert plain.pairs.frequent.shape[0] == 0
    rng = random.Random(int(share * 100) + 1)
    common = sorted(index.vocab, key=index.doc_freq, reverse=True)[:8]
    phrases: list[tuple[str, ...]] = []
    for _ in range(250):
        tokens = docs[rng.randrange(len(docs))]
        size = rng.randint(1, 5)
        start = rng.randrange(max(1, len(tokens) - size + 1))
        run = list(tokens[start : start + size])
        if rng.random() < 0.3:  # a word swapped for a common one: often a run of nowhere
            run[rng.randrange(len(run))] = rng.choice(common)
        phrases.append(tuple(run))
    phrases += [(a, b) for a in common[:4] for b in common[:4]]  # frequent pairs, repeats too
    with_pairs = 0
    subset = np.array(sorted(rng.sample(range(len(docs)), len(docs) // 3)), dtype=np.int32)
    for phrase in phrases:
        want = [d for d, tokens in enumerate(docs) if contains_run(tokens, phrase)]
        tids = [index.vocab[t] for t in phrase]
        with_pairs += any(g[0] is index.pairs.runs for g in index.phrases.grams(tids))
        assert index.phrase_docs(phrase).tolist() == want, phrase
        assert plain.phrase_docs(phrase).tolist() == want, phrase
        kept = sorted(set(want) & set(subset.tolist()))
        assert index.phrase_docs(phrase, subset).tolist() == kept, phrase
    assert with_pairs >= len(phrases) // 10  # the premise: many checks went through pairs


def test_a_pair_of_frequent_terms_that_occurs_nowhere_matches_nothing() -> None:
    docs = [["a", "b", "c"], ["b", "a", "c"], ["c", "b", "a"], ["a", "c"]]
    index = BM25Index.build(docs, BM25Params())
    assert index.pairs.frequent.shape[0] == 3  # every term is in at least a fifth
    assert index.phrases.grams([index.vocab["c"], index.vocab["c"]]) == []
    assert index.phrase_docs(("c", "c")).tolist() == []
    assert index.phrase_docs(("a", "b", "c")).tolist() == [0]
    assert index.phrase_docs(("b", "a", "c")).tolist() == [1]
    assert index.phrase_docs(("b", "a")).tolist() == [1, 2]


def test_a_damaged_pair_array_is_refused(tmp_path) -> None:
    docs = random_corpus(random.Random(2), 200, 20)
    BM25Index.build(docs, BM25Params()).save(tmp_path / "idx", {"k": 1})
    path = tmp_path / "idx" / "pair_indptr.npy"
    indptr = np.load(path)
    assert indptr.shape[0] > 2
    np.save(path, indptr[:-1])
    with pytest.raises(IndexCacheError):
        BM25Index.load(tmp_path / "idx", {"k": 1})


def test_pairs_of_no_positions_are_empty() -> None:
    empty = np.zeros(1, np.int64)
    index = BM25Index.build([["a", "b"], ["a", "b"]], BM25Params())
    bare = BM25Index(
        index.vocab, index.indptr, index.doc_ids, index.tfs, index.doc_len, index.params
    )
    assert bare.pos_indptr.tolist() == empty.tolist()
    assert bare.pairs.keys.shape[0] == 0
    assert isinstance(bare.pairs, PairIndex)


def test_word_order_bonus_from_pairs_is_the_bonus_from_positions(monkeypatch) -> None:
    """The proximity bonus reads an indexed pair's counts from its postings: the same floats
    as finding the runs in the terms' positions (an index with no pairs)."""
    rng = random.Random(9)
    docs = random_corpus(rng, 800, 25)
    index = BM25Index.build(docs, BM25Params())
    monkeypatch.setattr("bot.search.index.pairs.MIN_SHARE", 2.0)
    plain = BM25Index.build(docs, BM25Params())
    words = sorted(index.vocab, key=index.doc_freq, reverse=True)
    through_pairs = 0
    for _ in range(150):
        query = rng.choices(words[:12], k=rng.randint(2, 5))
        ranked = np.array(sorted(rng.sample(range(len(docs)), rng.choice([1, 10, 100]))))
        shuffled = rng.sample(ranked.tolist(), len(ranked))  # top matches come in any order
        top = np.array(shuffled, dtype=np.int64)
        assert pair_bonus(index, query, top).tolist() == pair_bonus(plain, query, top).tolist()
        tids = [index.vocab[t] for t in query]
        through_pairs += any(
            index.phrases.pair_counts(a, b, ranked) is not None for a, b in pairwise(tids)
        )
    assert through_pairs > 50  # the premise: most queries had an indexed pair

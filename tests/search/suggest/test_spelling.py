"""Did you mean: one and two edits at a word's start, middle and end, swaps, the most
frequent word winning, and silence for words that are nowhere near the vocabulary."""

import random

import numpy as np
import pytest

from bot.papers.records import Paper
from bot.search.engine import SearchEngine
from bot.search.suggest.spelling import Lexicon, edit_distance, prefix_distances

TEXTS = [
    ("Diffusion models for images", "Diffusion and score matching with transformers."),
    ("Diffusion policies", "Diffusion for robot control with reinforcement learning."),
    ("Layer normalization", "Normalization of attention layers in transformers."),
    ("Batch normalization revisited", "Normalization helps convolutional networks train."),
    ("Attention is all you need", "Attention with convolutional layers and reinforcement."),
    ("Modal logic", "A modal logic of model checking; model theory."),
    ("Model selection", "Model averaging for a modal model."),
    ("Density estimation", "Kernel density estimates."),
    ("Density ratios", "Density ratio estimation."),
]


@pytest.fixture(scope="module")
def engine() -> SearchEngine:
    papers = [
        Paper(id=f"p{i}", title=title, abstract=abstract, venue="ICML 2025", year=2025)
        for i, (title, abstract) in enumerate(TEXTS)
    ]
    return SearchEngine(papers)


@pytest.mark.parametrize(
    ("typo", "word", "distance"),
    [
        ("iffusion", "diffusion", 1),  # start: a letter dropped
        ("difusion", "diffusion", 1),  # middle
        ("diffusio", "diffusion", 1),  # end
        ("attnetion", "attention", 1),  # a swap
        ("idfusion", "diffusion", 2),  # start: swap of the first two letters and a drop
        ("reinfrocment", "reinforcement", 2),  # middle: a swap and a drop
        ("diffusnio", "diffusion", 2),  # end: the ending scrambled
        ("normalizatn", "normalization", 2),  # end: two letters of the ending dropped
        ("difusoin", "diffusion", 2),  # middle and end
        ("tarnsfromers", "transformers", 2),  # two swaps
        ("convolutoinl", "convolutional", 2),
        ("dneisty", "density", 2),  # two swaps; the stem writes the y as i (densiti)
    ],
)
def test_one_and_two_edits_anywhere_in_the_word(engine, typo, word, distance) -> None:
    assert edit_distance(typo, word, 3) == distance
    assert engine.speller.correct(typo) == word
    result = engine.search(typo)
    assert result.suggestion == word


@pytest.mark.parametrize("far", ["qwertyuiop", "zzzzzzzz", "diffxyzzy", "normxyzation"])
def test_no_suggestion_for_words_far_from_every_word(engine, far) -> None:
    assert engine.speller.correct(far) is None
    assert engine.search(far).suggestion is None


def test_known_words_get_no_suggestion(engine) -> None:
    for word in ("diffusion", "transformers", "normalization", "models"):
        assert engine.speller.correct(word) is None


def test_a_query_of_indexed_words_is_not_spell_checked_word_by_word(engine, monkeypatch) -> None:
    """The engine hands the speller the query's analysed terms: all indexed in more than
    RARE_DF papers, it asks nothing more; one unknown word (or a phrase) and every word is
    looked at, as before."""
    asked: list[str] = []
    real = engine.speller.correct
    # Words in at most RARE_DF papers may be typos papers made: here every word is in two.
    monkeypatch.setattr("bot.search.suggest.queries.RARE_DF", 1)
    monkeypatch.setattr(engine.speller, "correct", lambda w: asked.append(w) or real(w))
    assert engine.search("diffusion transformers").suggestion is None
    assert asked == []
    assert engine.search("difusion transformers").suggestion == "diffusion transformers"
    assert asked == ["difusion", "transformers"]
    asked.clear()
    assert engine.search('"diffusion policies"').suggestion is None
    assert asked == ["diffusion", "policies"]


def test_no_guess_between_words_used_about_as_often(engine) -> None:
    # `modxl` is one edit from both; "model" is in 3 papers, "modal" in 2: a guess, not a
    # correction (tests/search/suggest/test_didyoumean.py has the clear winner).
    assert engine.speller.correct("modxl") is None
    assert engine.search("modxl").suggestion is None


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_vectorised_distances_equal_the_scalar_ones(limit) -> None:
    rng = random.Random(5)
    words = ["".join(rng.choice("abcde") for _ in range(rng.randint(1, 9))) for _ in range(300)]
    terms = np.zeros((len(words), 12), dtype=np.uint8)
    for row, w in enumerate(words):
        terms[row, : len(w)] = np.frombuffer(w.encode(), dtype=np.uint8)
    lengths = np.array([len(w) for w in words], dtype=np.int16)
    for typed in ("abcde", "badce", "eeaab", "a", "cabbadec", "ab"):
        dist = prefix_distances(terms, lengths, typed.encode(), limit=limit)
        for row, w in enumerate(words):
            for k in range(2 * limit + 1):
                j = len(w) + k - limit
                if 0 <= j <= len(typed):
                    want = min(edit_distance(w, typed[:j], 99), limit + 1)
                else:
                    want = limit + 1
                assert dist[k, row] == want, (w, typed, j)


def test_lexicon_is_bounded_and_most_frequent_first(engine) -> None:
    lexicon = Lexicon.of(engine.index, limit=3)
    assert len(lexicon.words) == 3
    dfs = [engine.index.doc_freq(t) for t in Lexicon.of(engine.index).words]
    assert dfs == sorted(dfs, reverse=True)
    assert min(dfs) >= 2

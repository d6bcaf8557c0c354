"""The one or two abstract sentences that best explain a hit, matched words in **bold**.

Sentences are scored by the idf of the distinct query terms they contain, so a sentence with
the rare term beats one repeating a common word. Only the hits on screen get snippets.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

from bot.papers.latex import latex_to_unicode
from bot.search.analysis.analyzer import Analyzer

# Markdown emphasis inside the abstract (`**A**ttribution`) would clash with our own bold.
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)\*(?=\S)|(?<=\S)\*(?!\w)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9$\\])")
MAX_SNIPPET = 320


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def highlight(
    text: str,
    terms: Collection[str],
    analyzer: Analyzer,
    tokens: list[tuple[int, int, str]] | None = None,
) -> tuple[str, int]:
    """`text` with each word whose term is in `terms` wrapped in **bold**; and how many.
    `tokens`: `analyzer.token_spans(text)` when the caller has them already."""
    if tokens is None:
        tokens = analyzer.token_spans(text)
    spans = [(start, end) for start, end, term in tokens if term in terms]
    if not spans:
        return text, 0
    # A hyphenated name yields overlapping spans (whole and parts): keep the outermost.
    spans.sort(key=lambda s: (s[0], -s[1]))
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            continue
        merged.append((start, end))
    out: list[str] = []
    pos = 0
    for start, end in merged:
        out.append(text[pos:start])
        out.append(f"**{text[start:end]}**")
        pos = end
    out.append(text[pos:])
    return "".join(out), len(merged)


def _shorten(sentence: str, limit: int) -> str:
    if len(sentence) <= limit:
        return sentence
    first_bold = sentence.find("**")
    start = 0
    if first_bold > limit // 2:
        start = sentence.rfind(" ", 0, first_bold - limit // 4) + 1
    piece = sentence[start : start + limit]
    if piece.count("**") % 2:  # never cut inside a bold run
        piece = piece[: piece.rfind("**")]
    piece = piece.rsplit(" ", 1)[0] if start + limit < len(sentence) else piece
    return ("…" if start else "") + piece.rstrip(" ,;:") + "…"


def make_snippet(
    abstract: str,
    terms: Collection[str],
    analyzer: Analyzer,
    idf: Callable[[str], float],
    max_chars: int = MAX_SNIPPET,
) -> str:
    """Best one or two sentences, in abstract order, joined by ` … ` when not adjacent."""
    plain = latex_to_unicode(abstract)
    if "*" in plain or "__" in plain:  # every emphasis mark holds one (most abstracts: none)
        plain = _EMPHASIS.sub("", plain)
    parts = sentences(plain)
    if not parts:
        return ""
    wanted = set(terms)
    scored: list[tuple[float, int]] = []
    for i, sentence in enumerate(parts):
        found = analyzer.term_set(sentence) & wanted
        if found:
            scored.append((sum(idf(t) for t in sorted(found)), i))
    if not scored:
        return _shorten(parts[0], max_chars)
    scored.sort(key=lambda item: (-item[0], item[1]))
    chosen = sorted(i for _score, i in scored[:2])
    if len(chosen) == 2 and len(parts[chosen[0]]) + len(parts[chosen[1]]) > max_chars:
        chosen = [scored[0][1]]
    pieces = [highlight(parts[i], wanted, analyzer)[0] for i in chosen]
    text = (
        pieces[0]
        if len(pieces) == 1
        else pieces[0] + (" " if chosen[1] == chosen[0] + 1 else " … ") + pieces[1]
    )
    return _shorten(text, max_chars)

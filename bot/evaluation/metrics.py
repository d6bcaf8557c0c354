"""Ranking metrics as trec_eval defines them: nDCG@k, Recall@k, MRR@k (reciprocal rank cut at k).

Written here rather than imported so the bot's runtime needs no C extension (trec_eval itself,
as `pytrec_eval`, is a test dependency that these are checked against).

Conventions (those of trec_eval, which BEIR and Anserini report):
- a document is relevant when its judged grade is >= 1; unjudged documents count as 0;
- nDCG uses linear gains (the grade itself) and a log2(rank + 1) discount; the ideal ranking is
  built from *all* judged documents of the query, not only the retrieved ones;
- Recall@k divides the relevant documents in the top k by all relevant documents of the query;
- the run is used in the order given (callers pass best-first, ties already broken);
- the mean is over every query that has at least one relevant judgment; a query the system
  returned nothing for scores 0 (trec_eval's `-c`), so failures cannot flatter the mean.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Sequence[str]]


def dcg(gains: Sequence[float]) -> float:
    """Discounted cumulative gain of gains listed by rank (rank 1 first)."""
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains) if g)


def ndcg_at(ranked: Sequence[str], judged: Mapping[str, int], k: int) -> float:
    ideal = dcg(sorted((g for g in judged.values() if g > 0), reverse=True)[:k])
    if ideal <= 0:
        return 0.0
    gains = [max(judged.get(doc, 0), 0) for doc in ranked[:k]]
    return dcg(gains) / ideal


def recall_at(ranked: Sequence[str], judged: Mapping[str, int], k: int) -> float:
    relevant = {doc for doc, grade in judged.items() if grade >= 1}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def mrr_at(ranked: Sequence[str], judged: Mapping[str, int], k: int) -> float:
    for rank, doc in enumerate(ranked[:k], start=1):
        if judged.get(doc, 0) >= 1:
            return 1.0 / rank
    return 0.0


METRICS = {"ndcg": ndcg_at, "recall": recall_at, "mrr": mrr_at}


def per_query(
    run: Run, qrels: Qrels, measures: Sequence[tuple[str, int]]
) -> dict[str, dict[str, float]]:
    """{query id: {"ndcg@10": value, ...}} for each query with a relevant judgment."""
    out: dict[str, dict[str, float]] = {}
    for qid, judged in qrels.items():
        if not any(grade >= 1 for grade in judged.values()):
            continue
        ranked = run.get(qid, ())
        out[qid] = {f"{name}@{k}": METRICS[name](ranked, judged, k) for name, k in measures}
    return out


def mean_scores(
    run: Run,
    qrels: Qrels,
    measures: Sequence[tuple[str, int]] = (("ndcg", 10), ("recall", 100), ("mrr", 10)),
) -> dict[str, float]:
    """Each measure averaged over the judged queries (0.0 for each when there are none)."""
    scores = per_query(run, qrels, measures)
    names = [f"{name}@{k}" for name, k in measures]
    if not scores:
        return dict.fromkeys(names, 0.0)
    return {name: sum(s[name] for s in scores.values()) / len(scores) for name in names}

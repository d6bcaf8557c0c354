"""How well versions of one work are merged (`bot.papers.versions`), on the data in ../shared.

    .venv/bin/python -m benchmarks.versions [--shared DIR]

Corpora: the six Paper Copilot lists, read twice (as the bot serves them, rejected and
withdrawn ICLR 2018 submissions left out; and with every record, where the rejected
submissions that were accepted elsewhere give more pairs), then with the 105 papers of the
recorded arXiv responses added as an arXiv corpus file.

Labelled pairs, derived as the issue asks:
- identical titles across files (normalised: case, accents, punctuation), generic
  placeholders ("Withdrawn") left out: all eight are ICLR 2018 submissions later published at
  NeurIPS 2018, same authors;
- arXiv ids inside records: every arXiv id a conference record names (links, BibTeX, abstract)
  that an arXiv record of the corpus carries (none in this data: the one list record naming
  an arXiv id, ICML 2019's 3738, names its own appendix, which the recorded responses lack);
- pairs judged by reading titles, authors and abstracts (`JUDGED`): every cross-file pair whose
  shorter author list shares at least half its surnames (two or more) and whose titles share
  at least 30 % of their words, 46 pairs on every record, each marked the same work or not.
A merge is correct when its two records are a labelled pair; every merge made outside the
labels is listed as wrong.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bot.config import PROJECT_ROOT
from bot.papers import grouping, versions
from bot.papers.corpus import LoadReport, iter_corpus, load_file
from bot.papers.records import Paper
from bot.sources.arxiv import ArxivError, parse_feed

EXCLUDE = ("Reject", "Withdraw", "Desk Reject")
GENERIC = {"withdrawn", "withdraw"}
# Cross-file pairs judged the same work (one side's later version), by reading both records.
JUDGED_SAME = {
    ("iclr2018/Sy4c-3xRW", "nips2018/11113"),  # DropMax: Adaptive Stochastic -> Variational
    ("iclr2018/ryDNZZZAW", "nips2018/11818"),  # Multiple source domain adaptation, reordered
    ("iclr2018/SJUX_MWCZ", "nips2018/11596"),  # Predict Responsibly: ... fairness, reworded
    ("iclr2018/SkJKHMW0Z", "nips2018/11339"),  # Recurrent Relational Networks (title cut)
    ("iclr2018/BkPrDFgR-", "nips2018/11470"),  # piecewise linear NN verification, Bunel et al.
    ("iclr2018/SyAbZb-0Z", "nips2018/11799"),  # transfer learning with neural AutoML, Wong et al.
    ("iclr2018/SJCq_fZ0Z", "nips2018/11734"),  # Sparse Attentive Backtracking, subtitle changed
    ("iclr2018/SkBHr1WRW", "icml2019/3807"),  # Ego-CNN -> distributed egocentric representations
}
# Judged different, though close: follow-ups and companion papers of the same group.
JUDGED_DIFFERENT = {
    ("iclr2018/HJewuJWCZ", "nips2018/11625"),  # Learning to Teach -> ... with Dynamic Loss
    ("icml2019/4049", "nips2018/11531"),  # Optimistic policy optimization: a follow-up
    ("iclr2018/ry9tUX_6-", "nips2018/11806"),  # Entropy-SGD PAC-Bayes: two arXiv papers
    ("iclr2018/ryazCMbR-", "nips2018/11898"),  # Communication algorithms vs Deepcode
}


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def candidate_pairs(files: Sequence[Path], exclude: Sequence[str]) -> list[tuple[Paper, Paper]]:
    """Cross-file pairs with shared authors and overlapping titles (the judged pool)."""
    papers = [
        (i, p) for i, f in enumerate(files) for p in load_file(f, exclude_status=exclude).papers
    ]
    by_surname: dict[str, list[int]] = {}
    for k, (_i, paper) in enumerate(papers):
        for name in versions.surnames(paper):
            by_surname.setdefault(name, []).append(k)
    seen: set[tuple[int, int]] = set()
    out = []
    for ks in by_surname.values():
        for a, b in itertools.combinations(ks, 2):
            if papers[a][0] == papers[b][0] or (a, b) in seen:
                continue
            seen.add((a, b))
            pa, pb = papers[a][1], papers[b][1]
            wa, wb = set(versions.title_words(pa.title)), set(versions.title_words(pb.title))
            shared, share = _overlap(pa, pb)
            if len(wa & wb) / len(wa | wb) >= 0.3 and shared >= 2 and share >= 0.5:
                out.append((pa, pb))
    return out


def _overlap(a: Paper, b: Paper) -> tuple[int, float]:
    sa, sb = versions.surnames(a), versions.surnames(b)
    if not sa or not sb:
        return 0, 0.0
    return len(sa & sb), len(sa & sb) / min(len(sa), len(sb))


def labelled(files: Sequence[Path], exclude: Sequence[str]) -> dict[tuple[str, str], str]:
    """Positive pairs and where each label comes from."""
    papers = [
        (i, p) for i, f in enumerate(files) for p in load_file(f, exclude_status=exclude).papers
    ]
    labels: dict[tuple[str, str], str] = {}
    by_title: dict[str, list[tuple[int, Paper]]] = {}
    for i, paper in papers:
        key = versions.title_key(paper.title)
        if key and key not in GENERIC:
            by_title.setdefault(key, []).append((i, paper))
    for group in by_title.values():
        for (i, a), (j, b) in itertools.combinations(group, 2):
            if i != j:
                labels[_pair(a.id, b.id)] = "identical title"
    arxiv = {p.id[len("arxiv:") :]: p for _i, p in papers if p.id.startswith("arxiv:")}
    for _i, paper in papers:
        for found in versions.arxiv_ids(paper, abstract=True) - {paper.id[len("arxiv:") :]}:
            if found in arxiv:
                labels.setdefault(_pair(paper.id, arxiv[found].id), "arXiv id in record")
    ids = {p.id for _i, p in papers}
    for a, b in JUDGED_SAME:
        if a in ids and b in ids:
            labels.setdefault(_pair(a, b), "judged")
    return labels


def arxiv_file(folder: Path, out: Path) -> Path:
    """The recorded arXiv responses as one arXiv corpus file (JSON Lines, ids deduplicated)."""
    records: dict[str, dict[str, object]] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            page = parse_feed(json.loads(path.read_text(encoding="utf-8"))["body"])
        except ArxivError:
            continue  # the recorded error feed (a malformed id)
        for record in page.records:
            records.setdefault(str(record["id"]), record)
    out.write_text("".join(json.dumps(r) + "\n" for r in records.values()), encoding="utf-8")
    return out


def measure(name: str, files: Sequence[Path], exclude: Sequence[str], out: list[str]) -> None:
    labels = labelled(files, exclude)
    merges: list[grouping.Merge] = []
    started = time.perf_counter()
    papers = list(iter_corpus(files, exclude, LoadReport(), set(), merges))
    seconds = time.perf_counter() - started
    made = {_pair(a, b): m for m in merges for a, b in itertools.combinations(m.ids, 2)}
    correct = [p for p in made if p in labels]
    wrong = [p for p in made if p not in labels]
    missed = [p for p in labels if p not in made]
    precision = len(correct) / len(made) if made else 1.0
    recall = len(correct) / len(labels) if labels else 1.0
    kinds = sorted(set(labels.values()))
    counts = ", ".join(f"{sum(1 for v in labels.values() if v == k)} {k}" for k in kinds)
    out.append(f"## {name}")
    out.append(
        f"{len(papers)} papers after merging ({seconds:.2f} s); labelled pairs: {len(labels)} "
        f"({counts or 'none'}); merges made: {len(made)}"
    )
    out.append(
        f"precision {precision:.3f} ({len(correct)}/{len(made)}), "
        f"recall {recall:.3f} ({len(correct)}/{len(labels)})"
    )
    for a, b in wrong:
        out.append(f"  wrong merge: {a} + {b} ({', '.join(made[(a, b)].reasons)})")
    for a, b in missed:
        out.append(f"  missed ({labels[(a, b)]}): {a} + {b}")
    out.append("")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--shared", type=Path, default=PROJECT_ROOT.parent / "shared")
    args = parser.parse_args(argv)
    lists = sorted((args.shared / "data" / "paperlists").glob("*.json"))
    if not lists:
        print(f"no paper lists under {args.shared}/data/paperlists", file=sys.stderr)
        return 2
    out: list[str] = []
    measure(
        "Paper lists, as the bot serves them (rejected/withdrawn left out)", lists, EXCLUDE, out
    )
    measure("Paper lists, every record", lists, (), out)
    with tempfile.TemporaryDirectory() as tmp:
        arxiv = arxiv_file(args.shared / "sources" / "arxiv", Path(tmp) / "arxiv-testing.jsonl")
        measure("Paper lists + recorded arXiv responses, every record", [arxiv, *lists], (), out)
    pool = {_pair(a.id, b.id) for a, b in candidate_pairs(lists, ())}
    same = labelled(lists, ())
    different = pool - set(same)
    merges: list[grouping.Merge] = []
    list(iter_corpus(lists, (), LoadReport(), set(), merges))
    made = {_pair(a, b) for m in merges for a, b in itertools.combinations(m.ids, 2)}
    out.append(
        f"judged pool: {len(pool)} cross-file pairs with shared authors and >= 30 % of title "
        f"words: {len(pool & set(same))} the same work, {len(different)} different papers "
        f"(follow-ups, companions), of which {len(different & made)} merged"
    )
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The terminal surface: `python -m bot search QUERY`, `paper`, `similar`, `random`, `stats`,
`ingest`. Same engine and same answers as Discord, printed as text or `--json`."""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from bot.app.results.embeds import results_embed
from bot.config import (
    EXCLUDED_STATUSES,
    PROJECT_ROOT,
    ConfigError,
    Settings,
    load_settings,
    settings_for,
)
from bot.console import db
from bot.logs import setup_logging
from bot.papers.corpus import CorpusError, LoadReport, load_file
from bot.papers.files import write_jsonl
from bot.papers.records import Paper
from bot.search.results import Filters, SearchError, SearchResult

log = logging.getLogger(__name__)

PROGRESS_MIN_BYTES = 2_000_000


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bot",
        description=(
            "Find conference papers. Without a command, runs the Discord bot (or, without "
            "DISCORD_TOKEN, a local console)."
        ),
    )
    parser.add_argument("--config", type=Path, help="settings file (default config/settings.toml)")
    parser.add_argument(
        "--corpus",
        type=Path,
        action="append",
        metavar="FILE",
        help="corpus file to search instead of the configured ones (repeatable)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log loading details")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    search = sub.add_parser("search", help="ranked papers for a query")
    search.add_argument(
        "query", nargs="+", help='words, "a phrase", -exclude, author:, venue:, year:'
    )
    search.add_argument("--limit", type=int, default=10, help="hits to show (1-100)")
    search.add_argument("--offset", type=int, default=0, help="skip this many hits")
    search.add_argument("--venue", help="only this venue (e.g. colm, 'ICML 2026')")
    search.add_argument("--year", type=int, help="only this year")
    search.add_argument("--author", action="append", default=[], help="only papers by this author")
    search.add_argument("--json", action="store_true", help="print JSON")

    for name, text in (("paper", "one paper by id or title"), ("similar", "papers like this one")):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("ref", nargs="+", help="paper id or title")
        cmd.add_argument("--json", action="store_true", help="print JSON")
        if name == "similar":
            cmd.add_argument("--limit", type=int, default=10, help="hits to show (1-100)")

    rand = sub.add_parser("random", help="a random paper")
    rand.add_argument("--venue", help="only this venue")
    rand.add_argument("--seed", type=int, help="repeatable choice")
    rand.add_argument("--json", action="store_true", help="print JSON")

    sub.add_parser("stats", help="papers per venue and index figures")

    ingest = sub.add_parser("ingest", help="validate corpus files; convert them to JSON Lines")
    ingest.add_argument("files", nargs="+", type=Path, metavar="FILE")
    ingest.add_argument("--out", type=Path, help="write the valid papers here as JSON Lines")
    ingest.add_argument(
        "--include-rejected",
        action="store_true",
        help="keep papers whose status is " + ", ".join(EXCLUDED_STATUSES),
    )

    from bot.console.fetching import add_parser as add_fetch

    add_fetch(sub)

    ev = sub.add_parser("eval", help="nDCG@10, Recall@100, MRR@10 of this search on a BEIR set")
    where = ev.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--beir",
        type=Path,
        metavar="DIR",
        help="folder with corpus.jsonl, queries.jsonl, qrels/<split>.tsv",
    )
    where.add_argument(
        "--paperlists",
        type=Path,
        metavar="DIR",
        help="folder of Paper Copilot lists: known-item queries built from the papers",
    )
    ev.add_argument(
        "--kind",
        default="title",
        choices=("title", "keywords", "first-sentence"),
        help="with --paperlists: which words of a paper make its query",
    )
    ev.add_argument(
        "--split",
        default="test",
        help="qrels split: train, test or dev (--paperlists: train, test or all)",
    )
    ev.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="overrides",
        help="override a [search] setting for this run (repeatable)",
    )
    ev.add_argument(
        "--analyzer",
        default="default",
        choices=("default", "plain", "stopwords", "stem"),
        help="analyzer variant (default: stopwords + stems, as the bot runs)",
    )
    ev.add_argument("--json", action="store_true", help="print JSON")
    db.add_parser(sub)
    return parser


def run_eval(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from bot.evaluation.harness import apply_overrides, evaluate, evaluate_known_items

    search = apply_overrides(settings.search, args.overrides)
    if args.paperlists:
        report = evaluate_known_items(args.paperlists, args.kind, args.split, search, args.analyzer)
    else:
        report = evaluate(args.beir, args.split, search, args.analyzer)
    if args.json:
        _dump(report.to_json(), out)
    else:
        out.write(report.text())
    return 0


def print_result(result: SearchResult, out: TextIO, command: str = "search") -> None:
    """The hits as the console and Discord show them: one look everywhere (`bot.app.render`);
    a likely misspelling also gets the corrected command to run.

    Imported here, not at the top: `--json` output and `ingest` do not pay for discord.py.
    """
    from bot.console.text import embed_text

    out.write(embed_text(results_embed(result)))
    if result.suggestion:
        out.write(f"Try: python -m bot {command} {shlex.quote(result.suggestion)}\n")


def print_paper(paper: Paper, out: TextIO) -> None:
    """One paper as the console and Discord show it (see `print_result`)."""
    from bot.app import render
    from bot.console.text import embed_text

    out.write(embed_text(render.paper_embed(paper)))


def _dump(data: object, out: TextIO) -> None:
    out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def run_ingest(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    exclude = () if args.include_rejected else EXCLUDED_STATUSES
    report = LoadReport()
    for path in args.files:
        size = path.stat().st_size if path.is_file() else 0
        progress: Callable[[int], None] | None = None
        bar = None
        if size >= PROGRESS_MIN_BYTES:
            from tqdm import tqdm

            with path.open("rb") as handle:
                total = sum(1 for _ in handle)
            bar = tqdm(total=total, desc=path.name, unit=" lines", file=err, leave=False)

            def progress(line: int, bar: Any = bar) -> None:
                bar.update(line - bar.n)

        load_file(path, exclude_status=exclude, report=report, progress=progress)
        if bar is not None:
            bar.close()
    for problem in report.problems:
        err.write(f"{problem}\n")
    out.write(report.summary() + "\n")
    if not report.papers:
        err.write("error: no usable paper in " + ", ".join(map(str, args.files)) + "\n")
        return 1
    if args.out:
        write_jsonl(args.out, (paper.to_json() for paper in report.papers))
        out.write(f"wrote {len(report.papers)} papers to {args.out}\n")
    return 0


def run(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from bot.search.engine import SearchEngine

    engine = SearchEngine.load(settings)
    cmd = args.command
    if cmd == "search":
        filters = Filters(venue=args.venue, year=args.year, authors=tuple(args.author))
        result = engine.search(
            " ".join(args.query), limit=args.limit, offset=args.offset, filters=filters
        )
        if args.json:
            _dump([hit.to_json() for hit in result.hits], out)
        else:
            print_result(result, out)
    elif cmd == "similar":
        result = engine.similar(" ".join(args.ref), limit=args.limit)
        if args.json:
            _dump([hit.to_json() for hit in result.hits], out)
        else:
            print_result(result, out)
    elif cmd in ("paper", "random"):
        if cmd == "paper":
            paper = engine.paper(" ".join(args.ref))
        else:
            import random

            paper = engine.random(args.venue, random.Random(args.seed))
        if args.json:
            _dump(paper.to_json(), out)
        else:
            print_paper(paper, out)
    elif cmd == "stats":
        out.write(
            f"{len(engine.papers)} papers, {len(engine.index.vocab)} distinct terms, "
            f"average length {engine.index.avgdl:.1f} terms\n"
        )
        for venue, count in engine.venues().items():
            out.write(f"  {venue}: {count}\n")
        report = engine.load_report
        if report is not None:
            out.write(report.summary() + "\n")
    return 0


def main(
    argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    args = parser.parse_args(argv)
    setup_logging(logging.INFO if args.verbose else logging.WARNING, stream=err)
    if args.command is None:
        parser.print_help(out)
        return 0
    try:
        if args.command == "ingest":
            return run_ingest(args, out, err)
        if args.command == "fetch":
            from bot.console.fetching import run_fetch

            return run_fetch(args, out, err)
        settings = load_settings(args.config)
        if args.command == "eval":
            return run_eval(args, settings, out)
        if args.command == "db":
            return db.run(args, settings, out, err)
        if args.corpus:
            settings = settings.with_corpus(args.corpus)
        return run(args, settings, out)
    except SearchError as exc:
        err.write(f"{exc}\n")
        return 2
    except CorpusError as exc:
        err.write(f"error: {exc}\n")
        return 2
    except ConfigError as exc:
        err.write(f"error: {exc}\n")
        return 1


NO_TOKEN_ON_HOST = (
    "error: DISCORD_TOKEN is not set, and this runs as a service ({host}) with no terminal for "
    "the console, which would end at once (and be restarted, again and again). Set "
    "DISCORD_TOKEN in the host's environment: `heroku config:set DISCORD_TOKEN=...`, the .env "
    "file compose reads, or the unit's EnvironmentFile.\n"
)


def run_default(
    args: argparse.Namespace,
    *,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run the bot when a token is configured, else explain how and start the console."""
    # Imported here: `ingest`, `eval` and JSON output must not pay for importing discord.py.
    from bot.app.runner import TOKEN_HELP, run_bot, unattended_host
    from bot.console.repl import run_console
    from bot.search.engine import SearchEngine

    stdin, out, err = stdin or sys.stdin, out or sys.stdout, err or sys.stderr
    verbose = bool(getattr(args, "verbose", False))
    try:
        settings = settings_for(args)
    except ConfigError as exc:
        err.write(f"error: {exc}\n")
        return 1
    token = settings.secrets.discord_token
    if token:
        setup_logging(logging.DEBUG if verbose else logging.INFO, secrets=[token], colour=True)
        return run_bot(settings, token, err, corpus_files=getattr(args, "corpus", None))
    setup_logging(logging.INFO if verbose else logging.WARNING, stream=err)
    unattended = unattended_host(stdin)
    if unattended:
        err.write(NO_TOKEN_ON_HOST.format(host=unattended))
        return 1
    try:
        engine = SearchEngine.load(settings)
    except CorpusError as exc:
        err.write(f"error: {exc}\n")
        return 2
    err.write(TOKEN_HELP.format(env=PROJECT_ROOT / ".env"))
    err.flush()
    return run_console(
        engine,
        page_size=settings.search.page_size,
        stdin=stdin,
        out=out,
        settings=settings,
        corpus_files=getattr(args, "corpus", None),
    )

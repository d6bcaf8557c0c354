"""`python -m bot fetch openreview|arxiv|paperlist ...`: the terminal side of bot/sources.

A progress bar (tqdm) when stderr is a terminal, one plain line per page otherwise (logs, CI,
cron). Exit 0 when the fetch completed, 1 when it stopped early (the message says why and that
running the same command again resumes), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, TextIO

from bot.config import ConfigError, load_settings
from bot.sources import fetch as sources
from bot.sources.http import FetchError


def add_parser(sub: Any) -> None:
    fetch = sub.add_parser(
        "fetch", help="fetch papers from OpenReview, arXiv or a Paper Copilot list"
    )
    kinds = fetch.add_subparsers(dest="source", metavar="SOURCE", required=True)
    orv = kinds.add_parser("openreview", help="a venue's accepted papers (OpenReview API v2)")
    orv.add_argument("venue", help="venue id, e.g. ICML.cc/2026/Conference")
    arx = kinds.add_parser("arxiv", help="papers of arXiv categories submitted in a date range")
    arx.add_argument("categories", nargs="+", help="e.g. cs.LG cs.CL stat.ML")
    arx.add_argument("--since", required=True, type=_day, help="first day, YYYY-MM-DD")
    arx.add_argument("--until", type=_day, help="last day, YYYY-MM-DD (default today, UTC)")
    plist = kinds.add_parser("paperlist", help="a Paper Copilot conference list (URL or file)")
    plist.add_argument("location", metavar="URL_OR_FILE", help="e.g. a raw GitHub URL of a list")
    for cmd in (orv, arx, plist):
        cmd.add_argument("--out", type=Path, required=True, help="corpus file to create or update")


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date: use YYYY-MM-DD") from exc


class LineProgress:
    """Plain progress lines for a log: one per page, never a carriage return."""

    def __init__(self, label: str, err: TextIO) -> None:
        self.label, self.err, self.count, self.all = label, err, 0, 0

    def total(self, count: int) -> None:
        self.all = count
        self.err.write(f"{self.label}: {count} papers to fetch\n")

    def advance(self, count: int) -> None:
        self.count += count
        if count:
            self.err.write(f"{self.label}: {self.count}/{self.all}\n")
            self.err.flush()

    def close(self) -> None:
        return None


class BarProgress:
    def __init__(self, label: str, err: TextIO) -> None:
        from tqdm import tqdm

        self.bar = tqdm(desc=label, unit=" papers", file=err, total=0)

    def total(self, count: int) -> None:
        self.bar.reset(total=count)

    def advance(self, count: int) -> None:
        self.bar.update(count)

    def close(self) -> None:
        self.bar.close()


async def _run(args: argparse.Namespace, err: TextIO) -> sources.FetchReport:
    settings = load_settings(args.config).sources
    out = args.out.expanduser().resolve()
    label = (
        f"{args.source} {getattr(args, 'venue', '') or ' '.join(getattr(args, 'categories', []))}"
    )
    progress = BarProgress(label, err) if err.isatty() else LineProgress(label.strip(), err)
    interval = settings.arxiv_interval_seconds if args.source == "arxiv" else 0.0
    try:
        # The same time bound as a scheduled refresh ([sources] max_fetch_seconds).
        deadline = sources.Deadline(label.strip(), settings.max_fetch_seconds, asyncio.sleep)
        async with sources.BoundedClient(settings, deadline, interval=interval) as client:
            run = sources.FetchRun(client, out, progress)
            if args.source == "openreview":
                return await sources.fetch_openreview(run, settings.openreview_url, args.venue)
            if args.source == "arxiv":
                until = args.until or datetime.now(UTC).date()
                return await sources.fetch_arxiv(
                    run, settings.arxiv_url, args.categories, args.since, until
                )
            return await sources.fetch_paperlist(run, args.location)
    finally:
        progress.close()


def run_fetch(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        report = asyncio.run(_run(args, err))
    except ConfigError as exc:
        err.write(f"error: {exc}\n")
        return 1
    except ValueError as exc:  # a bad category or date range, before anything is fetched
        err.write(f"error: {exc}\n")
        return 2
    except FetchError as exc:
        err.write(
            f"error: {exc}\nWhat was fetched so far is saved; run the same command to resume.\n"
        )
        return 1
    except KeyboardInterrupt:
        err.write("interrupted; run the same command to resume.\n")
        return 130
    for problem in report.problems:
        err.write(f"skipped: {problem}\n")
    out.write(report.summary() + "\n")
    return 0 if report.complete else 1

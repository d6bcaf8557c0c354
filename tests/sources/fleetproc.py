"""One process of a fleet, for tests/sources/test_fleet.py: the refresh's fleet side
(`SharedSources`) over the real fetch jobs, in a process of its own with its own folder.

    python -m tests.sources.fleetproc DB_URL FOLDER NAME SLOT LEASE OPENREVIEW ARXIV [catch-up]

Fetches (or pulls) both sources for SLOT into FOLDER/icml.jsonl and FOLDER/arxiv.jsonl, as the
bot's refresh does (bot/app/refresh.py), or only catches up (`catch-up`, the bot's start). The
last stdout line is a JSON summary; the log goes to stderr.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path

from bot.config import FetchJob, SourcesSettings
from bot.sources.fetch import run_job
from bot.sources.shared import SharedSources
from bot.storage.store import Storage

VENUE = "ICML.cc/2026/Conference"


def jobs(folder: Path) -> tuple[FetchJob, ...]:
    return (
        FetchJob("openreview", folder / "icml.jsonl", venue=VENUE),
        FetchJob("arxiv", folder / "arxiv.jsonl", categories=("cs.LG",), days=3),
    )


async def main(argv: list[str]) -> dict[str, object]:
    url, folder, name, slot, lease, openreview, arxiv = argv[:7]
    settings = SourcesSettings(
        openreview_url=openreview,
        arxiv_url=arxiv,
        arxiv_interval_seconds=0,
        max_retries=1,
        retry_base_seconds=0.01,
        lease_seconds=float(lease),
        fetch=jobs(Path(folder)),
    )
    storage = await Storage.open(url, timeout=2.0)
    shared = SharedSources(storage, settings, holder=name)
    summary: dict[str, object] = {"fetched": [], "pulled": {}}
    try:
        if argv[7:] == ["catch-up"]:
            summary["changed"] = await shared.catch_up(settings.fetch)
            return summary
        for job in settings.fetch:

            async def fetch(job: FetchJob = job) -> int:
                return (await run_job(job, settings)).counts.added

            got = await shared.fetch(job, slot, fetch)
            if got.result is not None:
                summary["fetched"].append(job.label)  # type: ignore[attr-defined]
            summary["pulled"][job.label] = len(got.pulled.added)  # type: ignore[index]
            summary.setdefault("ok", []).append(got.ok)  # type: ignore[attr-defined]
    finally:
        await storage.close()
    return summary


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(message)s")
    print(json.dumps(asyncio.run(main(sys.argv[1:]))), flush=True)

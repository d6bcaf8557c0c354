"""What fetching across machines costs in the database (bot/sources/election.py, shared.py), for
docs/decisions.md: one publish of N fetched records (the fetcher's transaction) and one pull of
them into an empty corpus file (another machine's), on a throwaway PostgreSQL (pgserver, as the
tests run it; fsync off).

    python -m benchmarks.decisions.fleet_publish [--papers 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from bot.config import FetchJob, SourcesSettings
from bot.sources.election import Lease
from bot.sources.shared import SharedSources
from bot.storage.store import Storage


def record(i: int) -> dict[str, object]:
    """A fetched OpenReview paper of a usual size (about 1.4 KB of JSON)."""
    return {
        "id": f"openreview:x{i:07d}",
        "title": f"A study of question {i} in learning systems",
        "abstract": "We study a question and answer it. " * 30,
        "authors": ["Ada Lovelace", "Grace Hopper", "Alan Turing"],
        "venue": "ICML 2026",
        "year": 2026,
        "added": "2026-12-02T06:00:00Z",
    }


async def run(papers: int, url: str, folder: Path) -> None:
    settings = SourcesSettings(lease_seconds=60)
    job = FetchJob("openreview", folder / "icml.jsonl", venue="ICML.cc/2026/Conference")
    fetcher = await Storage.open(url, timeout=60)
    reader = await Storage.open(url, timeout=60)
    try:
        shared = SharedSources(fetcher, settings, holder="fetcher")
        lease = await shared.election.claim(job.label, "06:00")
        assert isinstance(lease, Lease)
        records = [record(i) for i in range(papers)]
        started = time.perf_counter()
        await shared.election.publish(lease, records)
        published = time.perf_counter() - started
        started = time.perf_counter()
        pulled = await SharedSources(reader, settings, holder="reader").pull(job)
        pulling = time.perf_counter() - started
        size = job.out.stat().st_size / 1e6
        print(f"publish {papers:,} records: {published:.2f} s")
        added = len(pulled.added)
        print(f"pull {added:,} records into an empty file ({size:.1f} MB): {pulling:.2f} s")
    finally:
        await fetcher.close()
        await reader.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--papers", type=int, default=5000)
    args = parser.parse_args()
    import pgserver

    with tempfile.TemporaryDirectory() as tmp:
        server = pgserver.get_server(Path(tmp) / "pg", cleanup_mode="stop")
        try:
            asyncio.run(run(args.papers, server.get_uri(), Path(tmp)))
        finally:
            server.cleanup()


if __name__ == "__main__":
    main()

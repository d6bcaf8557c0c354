"""Issue 14 §2: memory of the bot as 2 processes (2 shards each) vs 1 (all 4 shards), one index.

    .venv/bin/python -m benchmarks.processes                  # 100k synthetic papers
    .venv/bin/python -m benchmarks.processes --papers 1000000 # (run under flock /work/bench.lock)

Real `python -m bot` processes, connected to the loopback Discord stand-in (tests/fakediscord)
with SHARD_COUNT=4, serve the same saved, memory-mapped index. The same /search traffic (the
same queries, each server's share to the process of its shard) runs through both layouts; then
each process's memory is read from /proc/<pid>/smaps_rollup and /proc/<pid>/smaps:

* RSS counts every page a process touches, shared or not: two processes' RSS add up as if
  nothing were shared;
* PSS splits each shared page between the processes mapping it: the sum of PSS is what the
  machine really spends;
* "index" is the part of each of those that lives in the index folder's mapped files.

The baseline is the single process: two processes cost one more interpreter and heap, and
(if the index is shared) not one more copy of the index.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.stress import SHARED, WORK
from benchmarks.synth import paperlists_corpus
from bot.config import PROJECT_ROOT

SHARDS = 4
TOKEN = "bench.token.not-real"


@dataclass
class Memory:
    rss: float  # MB
    pss: float
    index_rss: float
    index_pss: float


def memory(pid: int, index_dir: Path) -> Memory:
    """A process's RSS and PSS, in all and in the mapped files of `index_dir` (Linux /proc)."""
    rollup = _fields(Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines())
    index_rss = index_pss = 0.0
    inside = False
    prefix = str(index_dir.resolve())
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split(maxsplit=5)
        if "-" in head[0] and len(head) >= 5:  # a mapping's header line
            inside = len(head) == 6 and head[5].startswith(prefix)
        elif inside and head[0] == "Rss:":
            index_rss += int(head[1]) / 1024
        elif inside and head[0] == "Pss:":
            index_pss += int(head[1]) / 1024
    return Memory(rollup["Rss"], rollup["Pss"], index_rss, index_pss)


def _fields(lines: list[str]) -> dict[str, float]:
    found = {}
    for line in lines:
        parts = line.split()
        if len(parts) == 3 and parts[2] == "kB":
            found[parts[0].rstrip(":")] = int(parts[1]) / 1024
    return found


def write_settings(root: Path, corpus: Path, index_dir: Path) -> Path:
    config = root / "settings.toml"
    config.write_text(
        f"[corpus]\nfiles = {json.dumps([str(corpus)])}\n"
        f"index_dir = {json.dumps(str(index_dir))}\n"
        # One user sends every search: the per-user cooldown must not answer instead.
        "[discord]\nsearch_cooldown_uses = 1000\nsearch_cooldown_seconds = 1\n",
        encoding="utf-8",
    )
    return config


async def serve_layout(
    ranges: list[str], config: Path, root: Path, queries: list[str], index_dir: Path
) -> list[Memory]:
    """Start one bot process per shard range, send every query, measure, stop them."""
    from tests.fakediscord import FakeDiscord

    fake = await FakeDiscord().start()
    fake.gateway.max_concurrency = SHARDS
    servers = [fake.world.add_guild(f"shard {n}", shard=(n, SHARDS)) for n in range(SHARDS)]
    channels = [g.add_channel("general") for g in servers]
    for guild in servers:
        guild.add_member(fake.alice)
    procs = []
    try:
        for n, shard_ids in enumerate(ranges):
            env = {
                **os.environ,
                "PYTHONPATH": str(PROJECT_ROOT),
                "PAPERBOT_CONFIG": str(config),
                "DISCORD_TOKEN": TOKEN,
                "DISCORD_GUILD_ID": "",
                "PAPERBOT_API_BASE": fake.url,
                "PAPERBOT_GATEWAY_URL": fake.gateway_url,
                "DATABASE_URL": str(root / f"state-{n}.sqlite3"),
                "SHARD_COUNT": str(SHARDS),
                "SHARD_IDS": shard_ids,
            }
            log = (root / f"bot-{len(ranges)}-{n}.log").open("wb")
            procs.append(
                await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "bot", env=env, stdout=log, stderr=log, cwd=root
                )
            )
        await _wait_ready(fake, procs)
        fake.interaction_timeout = None  # a slow machine must not turn a search into 10062
        found = 0
        for number, text in enumerate(queries):  # each server's share to its shard's process
            handle = await fake.slash("search", {"query": text}, channel=channels[number % SHARDS])
            first = await handle.response(timeout=60)
            later = await handle.settle(quiet=0.05, timeout=60)  # a deferred reply's edit too
            titles = [e.get("title", "") for r in [first, *later] for e in r.embeds]
            found += any(t.startswith("🔎") for t in titles)
        print(f"{len(ranges)} process(es): {found} of {len(queries)} searches listed papers")
        return [memory(p.pid, index_dir) for p in procs]
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            await proc.wait()
        await fake.close()


async def _wait_ready(fake: object, procs: list[asyncio.subprocess.Process]) -> None:
    """Until every shard has connected (the bot then has its engine and cogs)."""
    gateway = fake.gateway  # type: ignore[attr-defined]
    deadline = time.monotonic() + 600
    while sum(gateway.shard_connections().values()) < SHARDS or len(gateway.sessions) < SHARDS:
        if any(p.returncode is not None for p in procs):
            raise RuntimeError("a bot process exited before connecting: see its log")
        if time.monotonic() > deadline:
            raise RuntimeError("the bot processes did not connect within 600 s")
        await asyncio.sleep(0.2)
    await asyncio.sleep(3.0)  # discord.py waits 2 s for more GUILD_CREATEs before READY


def queries_from(corpus: Path, count: int, seed: int = 7) -> list[str]:
    """Two to four words of real titles of the corpus: searches that find papers."""
    rng = random.Random(seed)
    titles = []
    with corpus.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            if number % 97 == 0:
                titles.append(json.loads(line).get("title", ""))
    words = [t.split() for t in titles if len(t.split()) >= 4]
    picked = []
    for _ in range(count):
        title = rng.choice(words)
        start = rng.randrange(0, len(title) - 2)
        picked.append(" ".join(title[start : start + rng.randint(2, 4)])[:100])
    return picked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--work", type=Path, default=WORK)
    args = parser.parse_args(argv)
    if not Path("/proc/self/smaps_rollup").exists():
        print("needs Linux /proc/<pid>/smaps_rollup")
        return 1
    from bot.config import load_settings
    from bot.search.engine import SearchEngine

    corpus = paperlists_corpus(args.papers, args.work / "corpora", SHARED)
    if corpus is None:
        return 1
    index_dir = args.work / f"processes-index-{args.papers}"
    root = Path(tempfile.mkdtemp(prefix="paperbot-processes-"))
    try:
        config = write_settings(root, corpus, index_dir)
        started = time.perf_counter()
        engine = SearchEngine.load(load_settings(config, env={}))  # built once, then mapped
        print(
            f"corpus: {len(engine.papers):,} papers ({corpus.name}); index ready in "
            f"{time.perf_counter() - started:.1f} s; {args.queries} /search queries per layout"
        )
        del engine
        queries = queries_from(corpus, args.queries)
        layouts = {
            "1 process, shards 0-3": ["0-3"],
            "2 processes, shards 0,1 + 2,3": ["0,1", "2,3"],
        }
        results = {
            name: asyncio.run(serve_layout(ranges, config, root, queries, index_dir))
            for name, ranges in layouts.items()
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print()
    print(
        "| layout | RSS sum MB | PSS sum MB | index RSS sum MB | index PSS sum MB "
        "| per process RSS / PSS MB |"
    )
    print("|---|---:|---:|---:|---:|---|")
    for name, mems in results.items():
        each = ", ".join(f"{m.rss:.0f} / {m.pss:.0f}" for m in mems)
        print(
            f"| {name} | {sum(m.rss for m in mems):.0f} | {sum(m.pss for m in mems):.0f} | "
            f"{sum(m.index_rss for m in mems):.0f} | {sum(m.index_pss for m in mems):.0f} "
            f"| {each} |"
        )
    one, two = results.values()
    extra = sum(m.pss for m in two) - sum(m.pss for m in one)
    extra_index = sum(m.index_pss for m in two) - sum(m.index_pss for m in one)
    print()
    print(
        f"second process costs {extra:+.0f} MB PSS in all, {extra_index:+.0f} MB of it in the "
        f"index files (baseline: the 1-process layout; RSS would count "
        f"{sum(m.index_rss for m in two) - sum(m.index_rss for m in one):+.0f} MB of index again)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

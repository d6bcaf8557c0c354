"""Capture the messages the bot really sends, as JSON for the discord-preview tool.

Runs the real PaperBot (its cogs, views and renderers) against the loopback Discord stand-in
(tests/fakediscord) on the ICML 2026 corpus and writes, per message, the body the bot sent
(what Discord would have received) wrapped with the command that was typed:

    search.json        /search with 5 hits on the page (and ◀ ▶, the menu, Share)
    search-10.json     a page of 10
    search-last.json   the last page (▶ disabled)
    search-one.json    a search with one match
    search-none.json   a search with no match
    paper.json         a paper's detail (/paper)
    daily.json         the paper of the day as posted in a channel
    follow.json        a follow notice (two new papers matching a follow)

Then, with `--preview`, it runs ../shared/tools/discord-preview/preview.py on them and prints
one line per message: its height at 420 px and where its first component row starts. Heights
and commands are in docs/layout.md.

    .venv/bin/python scripts/preview_messages.py --out /tmp/preview/json
    .venv/bin/python scripts/preview_messages.py --out /tmp/preview/json --preview
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.config import SearchSettings  # noqa: E402
from bot.papers.corpus import load_corpus  # noqa: E402
from bot.papers.records import Link, Paper  # noqa: E402
from bot.search.engine import SearchEngine  # noqa: E402
from bot.storage.store import Storage  # noqa: E402
from tests.app.helpers import TOKEN, make_bot, make_settings  # noqa: E402
from tests.fakediscord import FakeDiscord, InteractionHandle, Reply  # noqa: E402
from tests.fakediscord.harness import connect, fake_discord  # noqa: E402

CORPUS = ROOT / "data" / "icml2026.jsonl"
PREVIEW = ROOT.parent / "shared" / "tools" / "discord-preview" / "preview.py"
FOLLOWED = "hyperbolic embeddings"
NEW_PAPERS = [
    Paper(
        id=f"new/{n:03d}",
        title=title,
        abstract=abstract,
        venue="NeurIPS 2026",
        year=2026,
        authors=("Ada Lovelace", "Alan Turing", "Grace Hopper", "Edsger Dijkstra")[: n + 1],
        links=(Link("page", f"https://example.org/paper/{n}"),),
    )
    for n, (title, abstract) in enumerate(
        [
            (
                "Hyperbolic Embeddings for Trees and Hierarchies",
                "Trees embed with low distortion in hyperbolic space; we give a fast method "
                "and bounds for hierarchies of any depth.",
            ),
            (
                "Fast Graph Embeddings in Curved Space",
                "Hyperbolic geometry makes graph layouts cheap: a linear-time embedding with "
                "guarantees on distortion.",
            ),
        ],
        start=1,
    )
]


def wrapped(command: str, body: dict[str, Any]) -> dict[str, Any]:
    """The preview tool's wrapper: the "@user used /cmd" line, then the message."""
    return {"interaction": {"command": command, "user": "phd_student"}, "message": body}


async def reply_of(handle: InteractionHandle) -> Reply:
    """The message an interaction ended with: its first answer, or the edit that replaced a
    "thinking…" placeholder."""
    first = await handle.assert_answered(timeout=5.0)
    if first.type == 5:
        return await handle.edit(timeout=5.0)
    return first


async def slash(fake: FakeDiscord, name: str, options: dict[str, Any]) -> dict[str, Any]:
    reply = await reply_of(await fake.slash(name, options))
    shown = " ".join(f"{key}:{value}" for key, value in options.items())
    return wrapped(f"/{name} {shown}".strip(), dict(reply.data))


async def capture(out: Path) -> list[Path]:
    """Run the bot against the stand-in and write one JSON file per message; their paths."""
    engine = SearchEngine(load_corpus([CORPUS]).papers, settings=SearchSettings())
    grown = SearchEngine([*engine.papers, *NEW_PAPERS], settings=SearchSettings())
    written: list[Path] = []

    def write(name: str, payload: dict[str, Any]) -> None:
        path = out / f"{name}.json"
        path.write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n", "utf-8")
        written.append(path)

    with tempfile.TemporaryDirectory() as tmp:
        storage = await Storage.open(str(Path(tmp) / "bot.sqlite3"))
        async with fake_discord() as fake:
            bot = make_bot(make_settings(fake), engine, storage)
            bot.defer_after = 3.0
            connection = await connect(bot, TOKEN)
            try:
                write("search", await slash(fake, "search", {"query": "training"}))
                write("search-10", await slash(fake, "search", {"query": "learning", "limit": 10}))
                last = await last_page(fake, {"query": "training"})
                if last is not None:
                    write("search-last", last)
                write("search-one", await slash(fake, "search", {"query": "dWorldEval"}))
                write("search-none", await slash(fake, "search", {"query": "zzzqxv"}))
                paper = engine.papers[0]
                write("paper", await slash(fake, "paper", {"paper": paper.id}))
                write("daily", await daily_post(bot, fake, paper.id))
                write("follow", await follow_notice(bot, fake, grown))
            finally:
                await connection.close()
        await storage.close()
    return written


async def last_page(fake: FakeDiscord, options: dict[str, Any]) -> dict[str, Any] | None:
    """A search's last page: ▶ clicked until it is disabled (None: a single page)."""
    reply = await reply_of(await fake.slash("search", options))
    clicked = False
    for _ in range(50):
        forward = [
            c
            for c in _components(reply.data.get("components") or [])
            if c.get("label") == "▶" and not c.get("disabled")
        ]
        if not forward:
            break
        reply = await reply_of(await fake.click(reply, forward[0]["custom_id"]))
        clicked = True
    shown = " ".join(f"{key}:{value}" for key, value in options.items())
    return wrapped(f"/search {shown}", dict(reply.data)) if clicked else None


def _components(components: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for component in components:
        found.append(component)
        found += _components(component.get("components") or [])
        if component.get("accessory"):
            found.append(component["accessory"])
    return found


async def daily_post(bot: Any, fake: FakeDiscord, paper_id: str) -> dict[str, Any]:
    """The paper of the day as the scheduler's poster sends it to a channel."""
    from bot.app.exts.daily.poster import DiscordPoster

    channel = fake.channel
    poster = DiscordPoster(bot, open_thread=False)
    marker = f"potd-{date.today().isoformat()}-preview"
    await poster.post(int(fake.guild.id), int(channel.id), paper_id, date.today(), marker)
    sent = fake.channel_messages(channel)[-1]
    keys = ("content", "embeds", "components", "flags", "attachments")
    return {"message": {k: sent[k] for k in keys if k in sent}}


async def follow_notice(bot: Any, fake: FakeDiscord, grown: SearchEngine) -> dict[str, Any]:
    """`/follow add`, then a reload that brings two matching papers: the DM it sends."""
    await reply_of(await fake.slash("follow add", {"query": FOLLOWED}))
    bot.reloader.load = lambda settings: grown
    outcome = await bot.reloader.reload("preview")
    if not outcome.ok:
        raise RuntimeError(f"reload refused: {outcome.reasons}")
    dm = fake.world.dm_channel(fake.alice)
    sent = await fake.wait_for_message(dm, timeout=10.0)
    keys = ("content", "embeds", "components", "flags", "attachments")
    return {"message": {k: sent[k] for k in keys if k in sent}}


LINE = re.compile(
    r"(\S+)-(\d+)\.png\s+\d+x\d+ px\s+height (\d+) px(?:\s+first component row at y=(\d+))?"
)


def preview(paths: list[Path], work: Path) -> list[tuple[str, str, str]]:
    """Run the preview tool (phone width 420) in `work`; (name, height, first row y)."""
    done = subprocess.run(
        [sys.executable, str(PREVIEW), "--out", str(work / "preview-out"), *map(str, paths)],
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []
    if ".png" not in done.stdout:  # no browser found, or it failed: say why, measure nothing
        print(done.stdout + done.stderr, file=sys.stderr)
    for line in done.stdout.splitlines():
        match = LINE.search(line)
        if match and match.group(2) == "420":
            rows.append((Path(match.group(1)).name, match.group(3), match.group(4) or "-"))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the JSON files")
    parser.add_argument("--preview", action="store_true", help="render them and print heights")
    args = parser.parse_args()
    if args.out.resolve().is_relative_to(ROOT):
        parser.error("--out must be outside the repository (the screenshots go beside it)")
    args.out.mkdir(parents=True, exist_ok=True)
    paths = asyncio.run(capture(args.out))
    for path in paths:
        print(path)
    if args.preview:
        if not PREVIEW.exists():
            print(f"no preview tool at {PREVIEW}", file=sys.stderr)
            return 1
        print(f"{'message':<14} {'height@420':>10} {'first row y':>12}")
        for name, height, first in preview(paths, args.out.parent):
            print(f"{name:<14} {height:>10} {first:>12}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

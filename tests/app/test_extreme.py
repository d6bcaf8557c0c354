"""An extreme corpus through the real bot and the loopback Discord: no refusal, no late answer.

The corpus (`benchmarks.extreme`, which also times rendering one of its papers) is built here
and loaded as production loads it: 2,900-character titles, 170 KB LaTeX-dense abstracts, 600
authors, ids and venue names too long for a custom_id (venues with ":"), mention, timestamp and
markdown payloads in every text field, and malformed URLs in abstracts and in link records.
Every command, component and the daily post run on it; each answer must come within Discord's
3 seconds, be within Discord's limits, carry only well-formed URLs, render none of the
payloads, and not be an error.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from benchmarks.extreme import LONG_VENUE, VENUES, extreme_records, write_jsonl
from bot.app import refs, render, respond
from bot.papers.corpus import load_corpus
from bot.papers.formats import MAX_ABSTRACT
from bot.search.engine import SearchEngine
from tests.app.exts.daily.support import DUE, START, DailyEnv, SteppedClock
from tests.app.helpers import (
    assert_urls_well_formed,
    assert_within_limits,
    markup_in,
    page_footer,
    page_heading,
    page_texts,
)
from tests.fakediscord import FakeDiscord, InteractionHandle, Reply, iter_components

PAPERS = 8
FIRST_ANSWER = 3.0  # Discord's window for the first response to an interaction


@pytest.fixture(scope="module")
def extreme_engine(tmp_path_factory: pytest.TempPathFactory) -> SearchEngine:
    path = tmp_path_factory.mktemp("extreme") / "extreme.jsonl"
    report = load_corpus([write_jsonl(extreme_records(PAPERS), path)])
    assert len(report.papers) == PAPERS
    assert all(len(p.abstract) <= MAX_ABSTRACT + 1 for p in report.papers)
    cut = [p for p in report.problems if "characters cut to 20,000" in str(p)]
    assert len(cut) == PAPERS  # each named by file:line
    return SearchEngine(report.papers)


@pytest_asyncio.fixture
async def env(
    fake_discord: FakeDiscord,
    connect_bot: Callable[..., Any],
    extreme_engine: SearchEngine,
    tmp_path: Path,
) -> AsyncIterator[DailyEnv]:
    daily = DailyEnv(
        fake_discord,
        extreme_engine,
        SteppedClock(START),
        str(tmp_path / "bot.sqlite3"),
        connect_bot,
    )
    await daily.start()
    yield daily
    await daily.stop()


# The bot's own masked links: a hit's numbered title and the labels of the Links field. Any
# other masked link in a reply would come from the corpus.
OWN_LINKS = re.compile(
    r"(?<=\*\*\d\. )\[(?:[^\[\]\\]|\\.)*\]\(https?://[^)\s]+\)"
    r"|\[(?:" + "|".join(render.LINK_LABELS.values()) + r")\]\(https?://[^)\s]+\)"
)


def check(body: dict[str, Any], *, paper_text: bool = True) -> None:
    """What every message or callback must be: within limits, valid URLs, not an error reply,
    and (`paper_text`: the reply shows papers) no markup from the corpus."""
    assert_within_limits(body)
    assert_urls_well_formed(body)
    data = body.get("data", body) if "type" in body and "data" in body else body
    for embed in data.get("embeds") or []:
        assert embed.get("description") != respond.GENERIC_ERROR, embed
        assert embed.get("color") != 0xEF4444, embed  # render.ERROR_COLOR: an error reply
        if not paper_text:
            continue
        texts = [embed.get("title") or "", embed.get("description") or ""]
        texts += [f["value"] for f in embed.get("fields") or []]
        for text in texts:
            if text.startswith("🔎 "):
                continue  # the user's own query, shown back as typed
            assert markup_in(OWN_LINKS.sub("", text)) == [], text[:300]
    if not paper_text:
        return
    for text in page_texts(data):  # a v2 page: its own marks (### heading, -# small print) aside
        own = OWN_MARKS.sub("", text)
        if own.startswith("🔎 "):
            own = own.split("\n", 1)[-1]  # the user's own query, shown back as typed
        assert markup_in(OWN_LINKS.sub("", own)) == [], text[:300]


OWN_MARKS = re.compile(r"(?m)^(?:### |-# )")


async def final(handle: InteractionHandle, *, paper_text: bool = True) -> Reply:
    """The first answer within 3 s; when it is a defer, the answer that replaces it."""
    first = await handle.assert_answered(timeout=FIRST_ANSWER)
    check(first.body, paper_text=paper_text)
    reply = first
    if first.type in (5, 6):  # deferred: the real answer edits the original response
        reply = await handle.edit(timeout=30.0)
    for item in await handle.settle(quiet=0.05):
        check(item.body, paper_text=paper_text)
    return reply


async def test_extreme_corpus_gets_no_refusal_and_no_late_answer(
    env: DailyEnv, extreme_engine: SearchEngine, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    fake = env.fake
    long_ids = [p.id for p in extreme_engine.papers if len(p.id) > 88]
    assert long_ids

    # /search: hits, the open menu (its values are keys of the long ids), ◀ ▶.
    result = await final(await fake.slash("search", {"query": "optimal transport", "limit": 3}))
    menu = next(c for c in iter_components(result.components) if c.get("type") == 3)
    values = [o["value"] for o in menu["options"]]
    assert any(refs.is_key(v) for v in values)
    page_two = next(c for c in result.custom_ids if c.startswith("pb:s:2:"))
    await final(await fake.click(result, page_two))

    # The menu opens a long-id paper; its "More like this" and the similar pages work.
    key = next(v for v in values if refs.is_key(v))
    detail = await final(await fake.select(result, "pb:open", [key]))
    assert detail.embed["footer"]["text"].startswith("id: https://example.org/")
    assert f"pb:more:{key}" in detail.custom_ids
    link_buttons = [c for c in iter_components(detail.components) if c.get("style") == 5]
    assert [b["label"] for b in link_buttons] == ["Code", "Code", "Code"]  # PDF and Code first
    more = await final(await fake.click(detail, f"pb:more:{key}"))
    assert page_heading(more.data).startswith("More like: ")
    similar_next = next(c for c in more.custom_ids if c.startswith("pb:l:2:"))
    assert similar_next.endswith(key)
    await final(await fake.click(more, similar_next))

    # Venue autocomplete offers whole names (one with ":"), and /search takes them.
    offered = await final(await fake.autocomplete("search", {"query": "x", "venue": "neurips"}))
    assert sorted(c["value"] for c in offered.choices) == sorted(VENUES[:2])
    by_venue = await final(
        await fake.slash("search", {"query": "transport", "venue": LONG_VENUE, "limit": 1})
    )
    assert page_footer(by_venue.data).endswith(f"in {LONG_VENUE}")
    venue_next = next(c for c in by_venue.custom_ids if c.startswith("pb:s:2:"))
    assert refs.key_of(LONG_VENUE) in venue_next
    paged = await final(await fake.click(by_venue, venue_next))
    assert page_footer(paged.data).startswith("page 2/")

    # /paper and /similar through autocomplete values (keys for long ids); /random.
    choices = await final(await fake.autocomplete("paper", {"paper": "click"}))
    assert choices.choices
    for choice in choices.choices[:2]:
        await final(await fake.slash("paper", {"paper": choice["value"]}))
        await final(await fake.slash("similar", {"paper": choice["value"]}))
    await final(await fake.slash("random"))
    await final(await fake.slash("random", {"venue": LONG_VENUE}))

    # The daily post and its discussion thread.
    setup = await fake.slash(
        "daily set",
        {"channel": env.papers, "time": "09:00", "timezone": "Europe/Paris"},
        user=fake.admin,
    )
    await final(setup, paper_text=False)  # the bot's own words: a channel, <t:…> timestamps
    env.clock.advance_to(DUE)
    post = await fake.wait_for_message(env.papers)
    await env.wait_state(fake.guild, "sent")
    check(post)
    assert post["embeds"][0]["footer"]["text"].startswith("Paper of the day · ")
    assert fake.threads
    assert 1 <= len(fake.threads[0]["name"]) <= 100

    refused = [
        r for r in caplog.records if r.levelno >= logging.ERROR or "refused" in r.getMessage()
    ]
    assert refused == [], [r.getMessage() for r in refused]


async def test_long_id_buttons_survive_a_restart_and_a_corpus_reload(
    env: DailyEnv, extreme_engine: SearchEngine
) -> None:
    """Keys depend on the id only: after a restart, and after a reload that moves the paper,
    the buttons still open it; once the paper is gone, the click says so (not an error)."""
    fake = env.fake
    paper = next(p for p in extreme_engine.papers if len(p.id) > 88)
    key = refs.key_of(paper.id)
    detail = await final(await fake.slash("paper", {"paper": key}))
    assert f"pb:more:{key}" in detail.custom_ids
    assert f"pb:save:{key}" in detail.custom_ids  # Save too: every id fits as its key
    saved = await final(await fake.click(detail, f"pb:save:{key}"))
    assert saved.content.startswith("📚 Saved ")

    await env.restart()
    await final(await fake.click(detail, f"pb:more:{key}"))

    others = [p for p in extreme_engine.papers if p.id != paper.id]
    env.bot.engine = SearchEngine([*reversed(others), paper])  # reloaded: another position
    more = await final(await fake.click(detail, f"pb:more:{key}"))
    assert page_heading(more.data).startswith("More like: ")

    env.bot.engine = SearchEngine(others)  # reloaded without it
    gone = await (await fake.click(detail, f"pb:more:{key}")).assert_answered(timeout=FIRST_ANSWER)
    assert "no longer in the corpus" in gone.embed["description"]

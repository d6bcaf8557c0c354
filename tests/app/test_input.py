"""Bad input through the real slash commands (loopback Discord) and into the corpus loaders.

Every command must answer (within Discord's limits) with a result or a clear message, never the
"something went wrong" of an escaped exception, and log no error. Corpus files damaged in the
ways real files get damaged are reported as `file:line: reason` and skipped, never fatal.
Example counts are modest: each example is a real round trip through discord.py.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.app.client import PaperBot
from bot.app.respond import GENERIC_ERROR
from bot.app.results.pages import VENUE_MAX
from bot.daily.servers import CONSOLE_SERVER
from bot.daily.tables import DailyTables
from bot.follows.store import Follows
from bot.library.store import Library
from bot.papers.corpus import MAX_LINE_BYTES, load_file
from bot.search.engine import SearchEngine
from bot.storage.store import Storage
from tests.app.exts.daily.support import DailyEnv, text_of
from tests.app.helpers import TOKEN, answered, make_bot, make_settings, page_texts
from tests.console.test_daily import START, ManualClock, Terminal
from tests.fakediscord import BotConnection, FakeDiscord

Connect = Callable[..., Awaitable[BotConnection]]

NASTY = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=120),
    st.text(
        alphabet=st.characters(categories=["Cc", "Cf", "Zs", "So", "Sm"]), min_size=1, max_size=40
    ),
    st.sampled_from(
        [
            '- " author:',
            '"',
            '"unbalanced quote',
            "-",
            "- - -",
            "author:",
            "venue:",
            "year:",
            "year:99999999999999999999",
            "$\\frac{",
            "\\textit{",
            "$$",
            "\x00",
            "a\x00b",
            "🚀🔥🧪",
            "q" * 6000,
            " ".join(["-x"] * 800),
            "\\" * 300,
            "$\\ell_1$-regression",
            "((((",
            "venue:\x00",
            "author:" + "é" * 3000,
            "\u202e\u200b\u2066",
            "\ud7ff\ue000",
            "```",
            "@everyone",
            "<@123>",
            "||spoiler||",
            "a:b:c:d",
            "pb:s:1:5::x",
        ]
    ),
)
FIXTURE = [HealthCheck.function_scoped_fixture]
SLOW = settings(max_examples=12, deadline=None, suppress_health_check=FIXTURE)


@pytest_asyncio.fixture
async def env(
    fake_discord: FakeDiscord, connect_bot: Connect, icml_engine: SearchEngine
) -> AsyncIterator[tuple[FakeDiscord, PaperBot]]:
    storage = await Storage.open(":memory:")
    bot = make_bot(make_settings(fake_discord, search_cooldown_uses=0), icml_engine, storage)
    await connect_bot(bot, TOKEN)
    yield fake_discord, bot
    await storage.close()


async def sane_answer(
    fake: FakeDiscord, command: str, options: dict[str, Any], **kwargs: Any
) -> Any:
    """The reply: answered, within Discord's limits, and not an escaped exception."""
    handle = await fake.slash(command, options, **kwargs)
    reply = await answered(handle)
    body = reply.data
    if reply.type == 5:  # deferred ("thinking…"): the answer is the edit of the placeholder
        body = (await handle.edit(timeout=5.0)).body
    text = json.dumps(body, ensure_ascii=False)
    assert GENERIC_ERROR not in text, (command, options)
    assert body.get("embeds") or body.get("content") or page_texts(body), body
    return reply


@pytest.fixture
def no_errors(caplog: pytest.LogCaptureFixture) -> Callable[[], None]:
    caplog.set_level(logging.WARNING)

    def check() -> None:
        bad = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert not bad, [r.getMessage() for r in bad]

    return check


@SLOW
@given(query=NASTY, venue=st.none() | NASTY, limit=st.none() | st.integers(-3, 50))
async def test_search_answers_any_text(
    env: tuple[FakeDiscord, PaperBot],
    no_errors: Callable[[], None],
    query: str,
    venue: str | None,
    limit: int | None,
) -> None:
    fake, _bot = env
    options: dict[str, Any] = {"query": query}
    if venue is not None:
        options["venue"] = venue
    if limit is not None:
        options["limit"] = limit
    reply = await sane_answer(fake, "search", options)
    assert reply.type == 4
    assert reply.ephemeral
    no_errors()


@SLOW
@given(ref=NASTY, command=st.sampled_from(["paper", "similar"]))
async def test_paper_and_similar_answer_any_text(
    env: tuple[FakeDiscord, PaperBot], no_errors: Callable[[], None], ref: str, command: str
) -> None:
    fake, _bot = env
    reply = await sane_answer(fake, command, {"paper": ref})
    assert reply.type == 4
    no_errors()


@SLOW
@given(venue=NASTY)
async def test_random_answers_any_venue(
    env: tuple[FakeDiscord, PaperBot], no_errors: Callable[[], None], venue: str
) -> None:
    fake, _bot = env
    reply = await sane_answer(fake, "random", {"venue": venue})
    assert reply.type == 4
    no_errors()


@SLOW
@given(
    text=NASTY,
    command=st.sampled_from(
        [("paper", "paper"), ("similar", "paper"), ("search", "venue"), ("random", "venue")]
    ),
)
async def test_autocomplete_answers_any_prefix(
    env: tuple[FakeDiscord, PaperBot],
    no_errors: Callable[[], None],
    text: str,
    command: tuple[str, str],
) -> None:
    fake, bot = env
    name, option = command
    options = {"query": "x", option: text} if name == "search" else {option: text}
    reply = await answered(await fake.autocomplete(name, options), type=8)
    valid = (
        {v[:VENUE_MAX] for v in bot.engine.venues()}
        if option == "venue"
        else {p.id for p in bot.engine.papers}
    )
    assert {c["value"] for c in reply.choices} <= valid
    assert len(reply.choices) <= 25
    no_errors()


@pytest.mark.parametrize(
    "query", ["q" * 6000, '"' * 6000, "\x00" * 6000, "-" * 6000, "🚀" * 6000, "$\\frac{" * 900]
)
async def test_oversized_queries_get_an_answer_fast(
    env: tuple[FakeDiscord, PaperBot], no_errors: Callable[[], None], query: str
) -> None:
    """Discord enforces max_length in its client; a raw API call can still send 6,000 chars."""
    fake, _bot = env
    reply = await sane_answer(fake, "search", {"query": query})
    assert reply.type == 4
    assert sum(map(len, page_texts(reply.data))) <= 4000
    no_errors()


# -- corpus files damaged the way real files get damaged ----------------------------------------

GOOD = [
    {
        "id": f"t/{i}",
        "title": f"Paper number {i} on transport",
        "abstract": "Words here.",
        "authors": ["A. Author"],
        "year": 2024,
        "venue": "TEST 2024",
    }
    for i in range(6)
]


def jsonl_bytes(records: list[Any]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURE)
@given(cut=st.integers(0, len(jsonl_bytes(GOOD))))
def test_truncated_jsonl_keeps_every_whole_line(
    tmp_path_factory: pytest.TempPathFactory, cut: int
) -> None:
    body = jsonl_bytes(GOOD)
    path = tmp_path_factory.mktemp("trunc") / "c.jsonl"
    path.write_bytes(body[:cut])
    report = load_file(path)
    whole = body[:cut].count(b"\n")
    assert [p.id for p in report.papers][:whole] == [r["id"] for r in GOOD][:whole]
    assert len(report.papers) in (whole, whole + 1)  # a cut inside the last `}` may still parse
    assert all(p.startswith(f"{path}:") for p in map(str, report.problems))


ARRAY = json.dumps([{**r, "author": "A"} for r in GOOD], indent=1)


@pytest.mark.parametrize("text", ["[", "[\n", ARRAY[: ARRAY.index("}") + 1]])
def test_json_array_cut_at_a_record_boundary_is_reported(tmp_path: Any, text: str) -> None:
    """Found by the property below: text ending right after `[` or a record was silent."""
    path = tmp_path / "test2024.json"
    path.write_text(text, encoding="utf-8")
    assert any("file ends before the closing ]" in p for p in map(str, load_file(path).problems))


@settings(max_examples=30, deadline=None, suppress_health_check=FIXTURE)
@given(cut=st.integers(2, len(ARRAY) - 1))
def test_truncated_json_array_is_reported(
    tmp_path_factory: pytest.TempPathFactory, cut: int
) -> None:
    path = tmp_path_factory.mktemp("trunc") / "test2024.json"
    path.write_text(ARRAY[:cut], encoding="utf-8")
    report = load_file(path)
    assert report.problems, "a cut-short array must be reported"
    assert all(p.startswith(f"{path}:") for p in map(str, report.problems))
    assert len(report.papers) <= len(GOOD)


@settings(max_examples=30, deadline=None, suppress_health_check=FIXTURE)
@given(
    position=st.integers(0, len(GOOD) - 1),
    junk=st.binary(min_size=1, max_size=8).filter(lambda b: not _utf8(b)),
)
def test_invalid_utf8_line_is_skipped_alone(
    tmp_path_factory: pytest.TempPathFactory, position: int, junk: bytes
) -> None:
    lines = jsonl_bytes(GOOD).splitlines(keepends=True)
    lines[position] = lines[position][:10] + junk + lines[position][10:]
    path = tmp_path_factory.mktemp("utf8") / "c.jsonl"
    path.write_bytes(b"".join(lines))
    report = load_file(path)
    assert len(report.papers) == len(GOOD) - 1
    assert any(p.startswith(f"{path}:{position + 1}:") for p in map(str, report.problems))


def _utf8(data: bytes) -> bool:
    try:
        (b"x" + data + b"x").decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


WRONG = st.sampled_from([None, 7, 1.5, True, [], {}, [1, 2], {"a": 1}, "", "  "])


@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURE)
@given(
    key=st.sampled_from(["id", "title", "abstract", "authors", "year", "links", "venue"]),
    value=WRONG,
)
def test_wrong_types_are_reported_per_record(
    tmp_path_factory: pytest.TempPathFactory, key: str, value: Any
) -> None:
    records = [dict(r) for r in GOOD]
    records[2][key] = value
    path = tmp_path_factory.mktemp("types") / "c.jsonl"
    path.write_bytes(jsonl_bytes(records))
    report = load_file(path)
    assert len(report.papers) >= len(GOOD) - 1  # only the damaged record may go
    if len(report.papers) == len(GOOD) - 1:
        assert any(p.startswith(f"{path}:3:") for p in map(str, report.problems))


def test_multi_megabyte_line_is_skipped_not_parsed(tmp_path: Any) -> None:
    huge = {"id": "t/huge", "title": "x", "abstract": "word " * (MAX_LINE_BYTES // 4)}
    path = tmp_path / "c.jsonl"
    path.write_bytes(
        jsonl_bytes(GOOD[:2]) + json.dumps(huge).encode() + b"\n" + jsonl_bytes(GOOD[2:])
    )
    assert path.stat().st_size > MAX_LINE_BYTES
    report = load_file(path)
    assert [p.id for p in report.papers] == [r["id"] for r in GOOD]
    assert any(p.startswith(f"{path}:3:") and "too long" in p for p in map(str, report.problems))


def test_huge_author_list_and_null_bytes_load(tmp_path: Any) -> None:
    record = {
        **GOOD[0],
        "id": "t/nul",
        "authors": [f"Zed {i}\x00" for i in range(5000)],
        "title": "Nul\x00 sinkhorn 🚀",
    }
    path = tmp_path / "c.jsonl"
    path.write_bytes(jsonl_bytes([*GOOD, record]))
    report = load_file(path)
    assert len(report.papers) == len(GOOD) + 1
    engine = SearchEngine(report.papers)
    assert [h.paper.id for h in engine.search("sinkhorn").hits] == ["t/nul"]
    assert [h.paper.id for h in engine.search("words author:zed").hits] == ["t/nul"]


# -- control characters in text the bot stores or looks up (issue 26 item 5) --------------------

REFUSED = "which the bot does not accept; nothing was changed"
STORING = [
    ("follow add", {"query": "optimal\x00transport"}, "The query holds a NUL character (U+0000)"),
    ("follow add", {"query": "bell\x07 transport"}, "The query holds a control character (U+0007)"),
    ("daily set", {"topic": "transport\x00"}, "The topic holds a NUL character (U+0000)"),
    ("library remove", {"paper": "p\x00"}, "The paper holds a NUL character (U+0000)"),
    ("library read", {"paper": "p\x00"}, "The paper holds a NUL character (U+0000)"),
    ("server venue", {"venue": "ICML\x002026"}, "The venue holds a NUL character (U+0000)"),
    ("follow remove", {"follow": "ab\x00"}, "The follow id holds a NUL character (U+0000)"),
]


async def test_control_characters_are_refused_the_same_on_both_backends(
    daily_env: DailyEnv, no_errors: Callable[[], None]
) -> None:
    """SQLite stored a NUL that PostgreSQL refused ("Something went wrong"): one check now
    answers both alike, before anything reaches the database."""
    bot = await daily_env.start()
    for command, typed, needle in STORING:
        options = dict(typed)
        if command == "daily set":
            options.update(channel=daily_env.papers, time="09:00", timezone="UTC")
        text = text_of(await daily_env.slash(command, options, ephemeral=True))
        assert f"{needle}, {REFUSED}." in text, (command, text)
        assert "\n" not in text.strip()
    assert bot.storage is not None
    guild = int(daily_env.fake.guild.id)
    assert await Follows(bot.storage).personal(int(daily_env.fake.admin.id)) == []
    assert await DailyTables(bot.storage).get_schedule(guild) is None
    assert await Library(bot.storage).default_venue(guild) is None
    no_errors()


def test_the_console_refuses_control_characters_with_the_same_words(
    icml_engine: SearchEngine, database_url: str
) -> None:
    terminal = Terminal(icml_engine, database_url, ManualClock(START))
    text = terminal.session(
        "/follow add optimal\x00transport",
        "/daily set 09:00 UTC transport\x00",
        "/library remove p\x00",
        "/follow remove ab\x00",
        "/follow add fine words",
    )
    assert "The query holds a NUL character (U+0000), " + REFUSED in text
    assert "The /daily line holds a NUL character (U+0000), " + REFUSED in text
    assert "The paper holds a NUL character (U+0000), " + REFUSED in text
    assert "The follow id holds a NUL character (U+0000), " + REFUSED in text
    assert "Following 'fine words'" in text

    async def stored() -> tuple[list[str], Any]:
        storage = await Storage.open(database_url)
        try:
            follows = [f.query for f in await Follows(storage).personal(0)]
            return follows, await DailyTables(storage).get_schedule(CONSOLE_SERVER)
        finally:
            await storage.close()

    assert asyncio.run(stored()) == (["fine words"], None)

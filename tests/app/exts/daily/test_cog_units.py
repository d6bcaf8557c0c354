"""The daily pieces that need no Discord: error classification, the post embed, zone search."""

from __future__ import annotations

from datetime import date
from types import SimpleNamespace

import aiohttp
import discord
import pytest

from bot.app import limits, render
from bot.app.exts.daily.cog import zone_choices
from bot.app.exts.daily.embeds import daily_embed, thread_name
from bot.app.exts.daily.forum import topic_tag
from bot.app.exts.daily.poster import classify, missing_permissions
from bot.daily.rules import PermanentPostError, TransientPostError, parse_timezone
from bot.papers.records import Link, Paper


def http_error(
    kind: type[discord.HTTPException],
    status: int,
    code: int = 0,
    headers: dict[str, str] | None = None,
) -> discord.HTTPException:
    response = SimpleNamespace(status=status, reason="x", headers=headers or {})
    return kind(response, {"code": code, "message": "from Discord"})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("error", "kind", "words"),
    [
        (http_error(discord.NotFound, 404, 10003), PermanentPostError, "was deleted"),
        (http_error(discord.NotFound, 404, 10004), PermanentPostError, "could not find"),
        (http_error(discord.Forbidden, 403, 50013), PermanentPostError, "not allowed to post"),
        (http_error(discord.Forbidden, 403, 50001), PermanentPostError, "can no longer see"),
        (http_error(discord.DiscordServerError, 502), TransientPostError, "server error 502"),
        (http_error(discord.HTTPException, 503), TransientPostError, "answered 503"),
        (discord.RateLimited(42.0), TransientPostError, "rate limited"),
        (TimeoutError(), TransientPostError, "in time"),
        (aiohttp.ClientConnectionError("reset"), TransientPostError, "network error"),
        (ConnectionResetError(104, "reset"), TransientPostError, "network error"),
    ],
)
def test_classify(error: BaseException, kind: type[Exception], words: str) -> None:
    mapped = classify(error, 123)
    assert isinstance(mapped, kind)
    assert words in str(mapped)
    if isinstance(mapped, PermanentPostError):
        assert "<#123>" in mapped.reason


def test_classify_keeps_retry_after_and_leaves_our_bugs_alone() -> None:
    cloudflare = http_error(discord.HTTPException, 429, headers={"Retry-After": "12.5"})
    mapped = classify(cloudflare, 1)
    assert isinstance(mapped, TransientPostError)
    assert mapped.retry_after == 12.5
    assert classify(discord.RateLimited(42.0), 1).retry_after == 42.0  # type: ignore[union-attr]
    assert classify(http_error(discord.HTTPException, 400, 50035), 1) is None  # invalid body
    assert classify(ValueError("bug"), 1) is None


def test_missing_permissions_names_them_as_discord_does() -> None:
    required, optional = missing_permissions(
        discord.Permissions(view_channel=True, send_messages=True)
    )
    assert required == ["Embed Links", "Read Message History"]
    assert optional == ["Create Public Threads"]
    assert missing_permissions(
        discord.Permissions.text() | discord.Permissions(view_channel=True)
    ) == ([], [])


def test_daily_embed_fits_on_a_huge_paper_with_no_token_in_its_footer() -> None:
    paper = Paper(
        id="x/1",
        title="T " * 400,
        abstract="word " * 5000,
        venue="V" * 300,
        year=2026,
        authors=tuple(f"Author Number {i}" for i in range(500)),
        links=tuple(Link("other", f"https://example.org/{i}") for i in range(60)),
    )
    embed = daily_embed(paper, date(2025, 3, 1)).to_dict()
    assert limits.embed_length(embed) <= limits.EMBED_TOTAL
    assert len(embed["title"]) <= limits.EMBED_TITLE
    assert len(embed["description"]) <= 700
    assert all(len(f["value"]) <= limits.FIELD_VALUE for f in embed["fields"])
    assert "potd-" not in embed["footer"]["text"]
    assert embed["footer"]["text"].startswith("Paper of the day · Saturday 1 March 2025")


def test_daily_post_and_paper_detail_show_a_paper_alike() -> None:
    """One implementation: the post is the detail view with a teaser abstract and its footer."""
    paper = Paper(
        id="x/2",
        title="A *title* with <@1>",
        abstract="Some [text](https://evil.example). Code: \\url{https://codeberg.org/a/b}.",
        venue="COLM 2025",
        year=2025,
        status="Oral",
        authors=("A_b", "C"),
        keywords=("k1", "k_2"),
        links=(Link("page", "https://openreview.net/forum?id=x"),),
    )
    post = daily_embed(paper, date(2025, 3, 1)).to_dict()
    detail = render.paper_embed(paper).to_dict()
    assert post["fields"] == detail["fields"]
    assert (post["title"], post["url"]) == (detail["title"], detail["url"])
    assert post["title"] == "A \\*title\\* with \\<@1>"
    fields = {f["name"]: f["value"] for f in post["fields"]}
    assert fields["Authors"] == "A\\_b, C"
    assert fields["Links"] == (
        "[Paper page](https://openreview.net/forum?id=x) · "
        "[Project page](https://evil.example) · [Code](https://codeberg.org/a/b)"
    )
    assert post["footer"]["text"] == "Paper of the day · Saturday 1 March 2025"
    assert detail["footer"]["text"] == "id: x/2"


@pytest.mark.parametrize("title", ["", "   ", "$$", "\\label{x}"])
def test_thread_name_is_never_empty(title: str) -> None:
    paper = Paper(id="x/3", title=title, abstract="a", venue="V")
    assert thread_name(paper, date(2025, 3, 1)) == "Paper of the day, Saturday 1 March 2025"
    named = Paper(id="x/4", title="T " * 200, abstract="a", venue="V")
    assert 1 <= len(thread_name(named, date(2025, 3, 1))) <= limits.THREAD_NAME


def test_zone_choices() -> None:
    assert zone_choices("Paris") == ["Europe/Paris"]
    assert zone_choices("  new york")[0] == "America/New_York"
    assert zone_choices("utc")[0] == "UTC"
    assert zone_choices("tokyo") == ["Asia/Tokyo"]
    assert len(zone_choices("")) <= 25
    assert zone_choices("")[0] == "UTC"
    assert len(zone_choices("e")) == 25
    assert zone_choices("Mars/Olympus") == []


def test_autocomplete_offers_only_zones_that_set_accepts() -> None:
    """One zone list: what the autocomplete offers, /daily set accepts, spelled the same."""
    for typed in ["", "e", "paris", "new york", "utc", "america/", "kolkata"]:
        offered = zone_choices(typed)
        assert offered, typed
        assert [parse_timezone(z) for z in offered] == offered
    assert parse_timezone("utc") == "UTC"


def test_the_forum_tag_for_a_topic() -> None:
    """The tag named like the topic (case and punctuation aside), else the longest tag whose
    words all appear in the topic; never a moderated tag (it needs Manage Threads)."""
    tags = [
        discord.ForumTag(name="Diffusion"),
        discord.ForumTag(name="Graph diffusion"),
        discord.ForumTag(name="RL", moderated=True),
        discord.ForumTag(name="Optimal Transport"),
    ]
    assert topic_tag(tags, "diffusion") is tags[0]
    assert topic_tag(tags, '"graph diffusion" -video') is tags[1]
    assert topic_tag(tags, "optimal-transport") is tags[3]
    assert topic_tag(tags, "rl") is None
    assert topic_tag(tags, "transport") is None
    assert topic_tag(tags, None) is None
    video = [discord.ForumTag(name="Video")]
    assert topic_tag(video, 'diffusion -video -"video games" venue:video') is None

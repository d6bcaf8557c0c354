"""`/top` (saves, reactions on the daily post) and `/server venue` through the loopback Discord."""

from __future__ import annotations

from typing import Any

from bot.library.store import Library
from tests.app.exts.daily.support import DUE, DailyEnv, text_of, until
from tests.app.helpers import answered, page_footer

MANAGE_GUILD = str(1 << 5)


def reaction(post: dict[str, Any], user_id: str, emoji: str, guild_id: str) -> dict[str, Any]:
    return {
        "user_id": user_id,
        "channel_id": post["channel_id"],
        "message_id": post["id"],
        "guild_id": guild_id,
        "emoji": {"id": None, "name": emoji},
        "burst": False,
        "type": 0,
    }


async def test_top_counts_saves_and_daily_post_reactions(daily_env: DailyEnv) -> None:
    await daily_env.start()
    fake = daily_env.fake
    commands = fake.commands()
    assert str(commands["server"]["default_member_permissions"]) == MANAGE_GUILD
    assert [c["value"] for c in commands["top"]["options"][0]["choices"]] == [
        "week",
        "month",
        "all",
    ]
    empty = await daily_env.slash("top", user=fake.alice, ephemeral=True)
    assert "nothing yet" in text_of(empty)

    await daily_env.set_daily()
    daily_env.clock.advance_to(DUE)
    post = await fake.wait_for_message(daily_env.papers)
    await daily_env.wait_state(fake.guild, "sent")  # the post's message id is recorded
    [save] = [
        c for c in post["components"][0]["components"] if c["custom_id"].startswith("pb:save:")
    ]
    paper_id = save["custom_id"].removeprefix("pb:save:")
    guild = fake.guild.id
    store = Library(daily_env.storage)  # type: ignore[arg-type]

    async def reactions() -> int:
        rows = await store.top_reacted(int(guild), None, 5)
        return rows[0].count if rows else 0

    await fake.dispatch("MESSAGE_REACTION_ADD", reaction(post, fake.alice.id, "👍", guild))
    await fake.dispatch("MESSAGE_REACTION_ADD", reaction(post, fake.alice.id, "🔥", guild))
    await fake.dispatch("MESSAGE_REACTION_ADD", reaction(post, fake.admin.id, "👍", guild))
    # The bot's own reaction and reactions on other messages do not count.
    await fake.dispatch("MESSAGE_REACTION_ADD", reaction(post, fake.bot_user.id, "👍", guild))
    other = await fake.user_message("hello")
    await fake.dispatch("MESSAGE_REACTION_ADD", reaction(other, fake.alice.id, "👍", guild))
    await until(lambda: _is(reactions(), 2), what="two readers' reactions")
    await fake.dispatch("MESSAGE_REACTION_REMOVE", reaction(post, fake.admin.id, "👍", guild))
    await until(lambda: _is(reactions(), 1), what="the removed reaction to be gone")

    await answered(await fake.click(post, f"pb:save:{paper_id}"), type=4)
    await answered(await fake.click(post, f"pb:save:{paper_id}", user=fake.admin), type=4)
    top = await daily_env.slash("top", {"period": "month"}, user=fake.alice, ephemeral=True)
    fields = {f["name"]: f["value"] for f in top.embed["fields"]}
    assert top.embed["title"] == "🏆 This server's top papers this month"
    assert fields["Most saved"].startswith("1. ")
    assert fields["Most saved"].endswith("· 2 saves")
    assert fields["Most reacted-to daily posts"].endswith("· 1 reader")
    title = daily_env.engine.paper(paper_id).title
    assert title[:40] in fields["Most saved"]


async def _is(value: Any, expected: int) -> bool:
    return await value == expected


async def test_server_default_venue_applies_to_search_and_random(daily_env: DailyEnv) -> None:
    await daily_env.start()
    fake = daily_env.fake
    refused = await daily_env.slash(
        "server venue", {"venue": "ICML 2026"}, user=fake.alice, ephemeral=True
    )
    assert "Manage Server" in text_of(refused)
    bad = await daily_env.slash("server venue", {"venue": "colm"}, ephemeral=True)
    assert "Unknown venue 'colm'" in text_of(bad)
    ok = await daily_env.slash("server venue", {"venue": "ICML 2026"}, ephemeral=True)
    assert "now look in **ICML 2026**" in text_of(ok)
    hits = await daily_env.slash("search", {"query": "transport", "limit": 1}, user=fake.alice)
    assert page_footer(hits.data).endswith("in ICML 2026")
    assert "pb:s:2:1:ICML 2026:transport" in hits.custom_ids  # ▶ carries the default venue
    every = await daily_env.slash("search", {"query": "transport", "venue": "all"}, user=fake.alice)
    assert not page_footer(every.data).endswith("in ICML 2026")
    rand = await daily_env.slash("random", user=fake.alice)
    assert rand.embed["fields"][1]["value"] == "ICML 2026"
    new = await daily_env.slash("new", user=fake.alice)
    assert "ICML 2026" in text_of(new)
    cleared = await daily_env.slash("server venue", ephemeral=True)
    assert "every venue" in text_of(cleared)
    again = await daily_env.slash("search", {"query": "transport"}, user=fake.alice)
    assert not page_footer(again.data).endswith("in ICML 2026")

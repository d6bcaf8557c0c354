"""`/today` names one paper all day: before the first `/daily set` and after it, whatever the
set changed (topic, pool, a zone whose date is not UTC's), and the post of the day is that
paper. Through the real discord.py client and the loopback Discord."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.app.exts.daily.support import DailyEnv

LATE = datetime(2025, 3, 1, 23, 30, tzinfo=UTC)  # already 2 March in Europe/Paris


def _paper_of(reply_embed: dict[str, object]) -> str:
    return str(reply_embed["title"])


def _topic_without(env: DailyEnv, shown_title: str) -> str:
    """A topic whose papers exclude the one /today showed (a phrase from another title)."""
    for paper in env.engine.papers:
        words = paper.title.split()
        if paper.title == shown_title or len(words) < 3:
            continue
        topic = '"' + " ".join(words[:3]) + '"'
        ids = env.engine.matching_ids(topic)
        shown = [p.id for p in env.engine.papers if p.title == shown_title]
        if ids and not set(ids) & set(shown):
            return topic
    raise AssertionError("no topic leaves the shown paper out")


async def test_today_is_the_same_paper_before_and_after_setting_a_topic(
    daily_env: DailyEnv,
) -> None:
    await daily_env.start()
    before = _paper_of((await daily_env.slash("today")).embed)
    topic = _topic_without(daily_env, before)
    done = await daily_env.set_daily(topic=topic, ephemeral=True)
    assert done.embed["title"] == "Paper of the day is set"
    assert _paper_of((await daily_env.slash("today")).embed) == before
    assert _paper_of((await daily_env.slash("today")).embed) == before


async def test_today_is_the_same_paper_when_the_new_zone_is_already_tomorrow(
    daily_env: DailyEnv,
) -> None:
    daily_env.clock.advance_to(LATE)
    await daily_env.start()
    before = _paper_of((await daily_env.slash("today")).embed)  # 1 March, UTC
    await daily_env.set_daily(time="09:00", timezone="Europe/Paris", ephemeral=True)
    assert _paper_of((await daily_env.slash("today")).embed) == before  # 2 March in Paris
    status = await daily_env.slash("daily status")
    assert status.embed["title"] == "Paper of the day: on"


async def test_the_post_of_the_day_is_the_paper_today_showed(daily_env: DailyEnv) -> None:
    await daily_env.start()
    before = _paper_of((await daily_env.slash("today")).embed)
    await daily_env.set_daily(topic=_topic_without(daily_env, before), ephemeral=True)
    daily_env.clock.advance_to(datetime(2025, 3, 1, 8, 0, tzinfo=UTC))
    await daily_env.wait_state(daily_env.fake.guild, "sent")
    [post] = daily_env.fake.channel_messages(daily_env.papers)
    assert post["embeds"][0]["title"] == before

"""End-to-end checks of the fake Discord with a small real discord.py bot (not the project's)."""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import AsyncIterator, Awaitable, Callable

import discord
import pytest
import pytest_asyncio
from discord import app_commands
from discord.ext import commands

from tests.fakediscord import EPHEMERAL, LOADING, BotConnection, FakeDiscord

FRUITS = ["apple", "apricot", "banana", "cherry"]


class LikeButton(discord.ui.DynamicItem[discord.ui.Button], template=r"like:(?P<count>\d+)"):
    def __init__(self, count: int) -> None:
        super().__init__(
            discord.ui.Button(label=f"Like ({count})", custom_id=f"like:{count}", emoji="👍")
        )
        self.count = count

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Button, match: re.Match[str]
    ) -> LikeButton:
        return cls(int(match["count"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        view = discord.ui.View(timeout=None)
        view.add_item(LikeButton(self.count + 1))
        await interaction.response.edit_message(content=f"{self.count + 1} likes", view=view)


class PickSelect(discord.ui.Select[discord.ui.View]):
    def __init__(self) -> None:
        options = [discord.SelectOption(label=f, value=f) for f in FRUITS]
        super().__init__(custom_id="pick", placeholder="Pick a fruit", options=options)

    async def callback(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(f"picked {self.values[0]}", ephemeral=True)


class RefreshButton(discord.ui.Button[discord.ui.View]):
    def __init__(self) -> None:
        super().__init__(label="Refresh", custom_id="refresh", style=discord.ButtonStyle.secondary)

    async def callback(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer()  # type 6: deferred update of this message
        await interaction.edit_original_response(content="refreshed")


def hello_view() -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(LikeButton(0))
    view.add_item(RefreshButton())
    view.add_item(PickSelect())
    return view


paper = app_commands.Group(name="paper", description="Paper tools")


@paper.command(name="post", description="Post a paper to a channel")
async def paper_post(
    interaction: discord.Interaction, channel: discord.TextChannel, title: str, year: int
) -> None:
    await channel.send(f"**{title}** ({year})")
    await interaction.response.send_message(f"posted to {channel.mention}", ephemeral=True)


class FeedbackModal(discord.ui.Modal, title="Feedback"):
    text: discord.ui.TextInput[FeedbackModal] = discord.ui.TextInput(
        label="Your feedback", custom_id="feedback-text"
    )

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(f"thanks for: {self.text.value}", ephemeral=True)


class DemoBot(commands.Bot):
    def __init__(self) -> None:
        super().__init__(command_prefix="!", intents=discord.Intents.default())

    async def setup_hook(self) -> None:
        self.add_dynamic_items(LikeButton)
        self.add_view(hello_view())
        self.tree.add_command(paper)

        @self.tree.command(description="Say hello with an embed")
        async def hello(interaction: discord.Interaction) -> None:
            embed = discord.Embed(title="Hello", description="A demo embed", colour=0x5865F2)
            embed.add_field(name="user", value=interaction.user.name)
            await interaction.response.send_message(embed=embed, view=hello_view())

        @self.tree.command(description="Search fruit")
        @app_commands.describe(query="What to look for")
        async def search(interaction: discord.Interaction, query: str) -> None:
            await interaction.response.send_message(f"you searched {query}")

        @search.autocomplete("query")
        async def search_complete(
            interaction: discord.Interaction, current: str
        ) -> list[app_commands.Choice[str]]:
            return [app_commands.Choice(name=f, value=f) for f in FRUITS if f.startswith(current)]

        @self.tree.command(description="Send feedback")
        async def feedback(interaction: discord.Interaction) -> None:
            await interaction.response.send_modal(FeedbackModal())

        @self.tree.command(description="Slow answer")
        async def slow(interaction: discord.Interaction) -> None:
            await interaction.response.defer(thinking=True)
            await interaction.edit_original_response(content="done thinking")
            await interaction.followup.send("a secret follow-up", ephemeral=True)


@pytest_asyncio.fixture
async def env(
    fake_discord: FakeDiscord,
    connect_bot: Callable[[discord.Client], Awaitable[BotConnection]],
) -> AsyncIterator[tuple[FakeDiscord, DemoBot]]:
    bot = DemoBot()
    await connect_bot(bot)
    await bot.tree.sync()
    yield fake_discord, bot


async def test_ready_and_guild_cache(env: tuple[FakeDiscord, DemoBot]) -> None:
    fake, bot = env
    assert bot.user is not None
    assert str(bot.user.id) == fake.bot_user.id
    guild = bot.get_guild(int(fake.guild.id))
    assert guild is not None
    assert guild.name == "Test Guild"
    assert guild.get_channel(int(fake.channel.id)) is not None
    assert guild.me is not None
    assert len(fake.gateway.identifies) == 1
    assert [c.path for c in fake.requests[:2]] == ["/users/@me", "/oauth2/applications/@me"]
    assert fake.unknown_routes == []
    assert "v=10" in fake.gateway.connects[0]


async def test_tree_sync_is_recorded(env: tuple[FakeDiscord, DemoBot]) -> None:
    fake, bot = env
    assert len(fake.command_syncs) == 1
    sync = fake.command_syncs[0]
    assert sync.method == "PUT"
    assert sync.guild_id is None
    assert {c["name"] for c in sync.commands} == {"hello", "search", "slow", "paper", "feedback"}
    first_ids = {name: c["id"] for name, c in fake.commands().items()}
    synced = await bot.tree.sync(guild=discord.Object(int(fake.guild.id)))
    assert len(fake.command_syncs) == 2
    assert fake.command_syncs[1].guild_id == fake.guild.id
    assert {c.name for c in synced} == set()  # no guild-only commands
    await bot.tree.sync()
    assert {name: c["id"] for name, c in fake.commands().items()} == first_ids  # ids are stable
    assert len(fake.calls("PUT", "/applications/{app}/commands")) == 2


async def test_slash_embed_button_click_updates_message(env: tuple[FakeDiscord, DemoBot]) -> None:
    fake, _ = env
    handle = await fake.slash("hello")
    assert handle.payload["data"]["id"] == fake.commands()["hello"]["id"]
    reply = await handle.assert_answered(type=4, ephemeral=False)
    assert reply.embed["title"] == "Hello"
    assert reply.embed["fields"] == [{"name": "user", "value": "alice", "inline": True}]
    assert reply.embed["color"] == 0x5865F2
    assert reply.custom_ids == ["like:0", "refresh", "pick"]
    assert reply.components[0]["type"] == 1
    assert reply.components[0]["components"][0]["type"] == 2

    posted = fake.channel_messages()
    assert len(posted) == 1
    assert posted[0]["interaction_metadata"]["name"] == "hello"

    click = await fake.click(posted[0], "like:0")
    update = await click.assert_answered(type=7)
    assert update.content == "1 likes"
    assert update.custom_ids == ["like:1"]
    assert fake.channel_messages()[0]["content"] == "1 likes"

    again = await fake.click(posted[0], "like:1", user=fake.admin)
    assert (await again.response()).custom_ids == ["like:2"]
    assert again.payload["member"]["permissions"] == str(discord.Permissions.all().value)


async def test_select_menu_answers_ephemerally(env: tuple[FakeDiscord, DemoBot]) -> None:
    fake, _ = env
    hello = await (await fake.slash("hello")).response()
    chosen = await fake.select(hello, "pick", ["banana"])
    expected = {"custom_id": "pick", "component_type": 3, "values": ["banana"]}
    assert chosen.payload["data"] == expected
    reply = await chosen.assert_answered(type=4, ephemeral=True)
    assert reply.content == "picked banana"
    assert reply.data["flags"] == EPHEMERAL
    assert len(fake.channel_messages()) == 1  # the ephemeral reply is not in the channel


async def test_autocomplete(env: tuple[FakeDiscord, DemoBot]) -> None:
    fake, _ = env
    handle = await fake.autocomplete("search", {"query": "ap"})
    option = handle.payload["data"]["options"][0]
    assert option == {"name": "query", "type": 3, "focused": True, "value": "ap"}
    reply = await handle.assert_answered(type=8)
    assert reply.choices == [
        {"name": "apple", "value": "apple"},
        {"name": "apricot", "value": "apricot"},
    ]
    done = await fake.slash("search", {"query": "apple"})
    assert (await done.response()).content == "you searched apple"


async def test_defer_then_edit_original_and_followup(env: tuple[FakeDiscord, DemoBot]) -> None:
    fake, _ = env
    handle = await fake.slash("slow")
    deferred = await handle.assert_answered(type=5)
    assert deferred.message is not None
    assert deferred.message["flags"] & LOADING
    edit = await handle.edit()
    assert edit.body["content"] == "done thinking"
    assert edit.target == handle.original_id
    assert not fake.message(edit.target)["flags"] & LOADING
    follow = await handle.followup()
    assert follow.content == "a secret follow-up"
    assert follow.ephemeral
    assert [m["content"] for m in fake.channel_messages()] == ["done thinking"]
    assert [c.path.split("/")[1] for c in fake.calls("PATCH")] == ["webhooks"]


async def test_subcommand_channel_option_and_channel_send(env: tuple[FakeDiscord, DemoBot]) -> None:
    fake, _ = env
    papers = fake.guild.channel("papers")
    handle = await fake.slash("paper post", {"channel": papers, "title": "BM25", "year": 1994})
    sub = handle.payload["data"]["options"][0]
    assert sub["type"] == 1
    assert sub["name"] == "post"
    assert sub["options"][0] == {"name": "channel", "type": 7, "value": papers.id}
    assert papers.id in handle.payload["data"]["resolved"]["channels"]
    reply = await handle.assert_answered(ephemeral=True)
    assert reply.content == f"posted to <#{papers.id}>"
    message = await fake.wait_for_message(papers)
    assert message["content"] == "**BM25** (1994)"
    assert message["author"]["id"] == fake.bot_user.id


async def test_rate_limit_is_retried_by_discord_py(env: tuple[FakeDiscord, DemoBot]) -> None:
    fake, _ = env
    fault = fake.faults.rate_limit("POST", "/channels/{id}/messages", times=2, retry_after=0.05)
    papers = fake.guild.channel("papers")
    handle = await fake.slash("paper post", {"channel": papers, "title": "T", "year": 2020})
    await handle.assert_answered(timeout=3)
    posts = fake.calls("POST", f"/channels/{papers.id}/messages")
    assert [c.status for c in posts] == [429, 429, 200]
    assert fault.hits == 2
    assert fault.exhausted
    assert len(fake.channel_messages(papers)) == 1


async def test_unknown_interaction_on_callback(env: tuple[FakeDiscord, DemoBot]) -> None:
    fake, bot = env
    failed = asyncio.Event()
    errors: list[BaseException] = []

    async def on_error(interaction: discord.Interaction, error: Exception) -> None:
        errors.append(error)
        failed.set()

    bot.tree.on_error = on_error  # type: ignore[method-assign]
    fake.faults.unknown_interaction()
    handle = await fake.slash("search", {"query": "x"})
    call = await fake.wait_for_request("POST", "/interactions/{id}/{token}/callback")
    assert call.status == 404
    assert call.response["code"] == 10062
    await asyncio.wait_for(failed.wait(), 2)
    original = getattr(errors[0], "original", errors[0])
    assert isinstance(original, discord.NotFound)
    assert original.code == 10062
    assert handle.replies.items == []
    assert not handle.acknowledged


async def test_server_error_and_forbidden_surface(env: tuple[FakeDiscord, DemoBot]) -> None:
    fake, bot = env
    papers = fake.guild.channel("papers")
    channel = bot.get_channel(int(papers.id))
    assert isinstance(channel, discord.TextChannel)
    fake.faults.forbidden("POST", f"/channels/{papers.id}/messages")
    with pytest.raises(discord.Forbidden) as forbidden:
        await channel.send("hi")
    assert forbidden.value.code == 50013
    fake.faults.not_found("GET", "/channels/{id}")
    with pytest.raises(discord.NotFound) as missing:
        await bot.fetch_channel(int(papers.id))
    assert missing.value.code == 10003
    assert (await channel.send("now it works")).content == "now it works"


async def test_gateway_drop_then_resume(env: tuple[FakeDiscord, DemoBot]) -> None:
    fake, bot = env
    await fake.gateway.drop(code=4000)
    resume = await fake.gateway.resumes.wait_for(timeout=3)
    assert resume["session_id"] == fake.gateway.current.id  # type: ignore[union-attr]
    assert len(fake.gateway.identifies) == 1
    handle = await fake.slash("search", {"query": "after resume"})
    assert (await handle.response(timeout=3)).content == "you searched after resume"
    assert bot.is_ready()


async def test_gateway_invalid_session_reidentifies(env: tuple[FakeDiscord, DemoBot]) -> None:
    fake, _ = env
    await fake.gateway.drop(code=4000, resumable=False)
    await fake.gateway.identifies.wait_count(2, timeout=3)
    assert len(fake.gateway.resumes) == 1
    handle = await fake.slash("search", {"query": "again"})
    assert (await handle.response(timeout=3)).content == "you searched again"


async def test_modal_open_and_submit(env: tuple[FakeDiscord, DemoBot]) -> None:
    fake, _ = env
    handle = await fake.slash("feedback")
    modal = await handle.assert_answered(type=9)
    assert modal.data["title"] == "Feedback"
    assert "feedback-text" in modal.custom_ids
    submitted = await fake.submit_modal(handle, {"feedback-text": "great bot"})
    reply = await submitted.assert_answered(type=4, ephemeral=True)
    assert reply.content == "thanks for: great bot"


async def test_multipart_upload_and_thread(env: tuple[FakeDiscord, DemoBot]) -> None:
    fake, bot = env
    channel = bot.get_channel(int(fake.channel.id))
    assert isinstance(channel, discord.TextChannel)
    sent = await channel.send("see file", file=discord.File(io.BytesIO(b"hello bytes"), "a.txt"))
    call = fake.calls("POST", "/channels/{id}/messages")[-1]
    assert call.json["content"] == "see file"
    assert call.uploads[0].data == b"hello bytes"
    stored = fake.channel_messages()[-1]
    assert stored["attachments"][0]["filename"] == "a.txt"
    assert fake.file_bytes(stored["attachments"][0]) == b"hello bytes"
    assert sent.attachments[0].size == len(b"hello bytes")
    thread = await sent.create_thread(name="discussion")
    assert thread.id == sent.id
    assert thread.name == "discussion"
    assert fake.threads[0]["parent_id"] == fake.channel.id
    await thread.send("in the thread")
    assert fake.channel_messages(str(thread.id))[0]["content"] == "in the thread"


async def test_deferred_update_then_edit_original(env: tuple[FakeDiscord, DemoBot]) -> None:
    fake, _ = env
    hello = await (await fake.slash("hello")).response()
    click = await fake.click(hello, "refresh")
    await click.assert_answered(type=6)
    edit = await click.edit()
    assert edit.target == hello.message["id"]  # type: ignore[index]
    assert fake.message(hello)["content"] == "refreshed"
    assert fake.message(hello)["embeds"][0]["title"] == "Hello"

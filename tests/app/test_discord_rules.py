"""The loopback Discord refuses what Discord refuses: one violating payload per rule.

Each payload goes through discord.py (its high-level call where discord.py does not refuse
it first, else its HTTP client, as a bot's raw request would) and must come back as Discord's
400 / 50035 with the field path in ``errors``, which discord.py turns into the same
``HTTPException`` text it shows in production ("In embeds.0.title: ...").
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import discord
import pytest
import pytest_asyncio
from discord import app_commands
from discord.http import Route

from tests.fakediscord import FakeDiscord


class Probe(discord.Client):
    """A bare client whose interaction handler a test sets, collecting what Discord refused."""

    def __init__(self) -> None:
        super().__init__(intents=discord.Intents.default())
        self.action: Callable[[discord.Interaction], Awaitable[None]] | None = None
        self.refusals: asyncio.Queue[discord.HTTPException] = asyncio.Queue()

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        assert self.action is not None
        try:
            await self.action(interaction)
        except discord.HTTPException as exc:
            self.refusals.put_nowait(exc)


@pytest_asyncio.fixture
async def probe(fake_discord: FakeDiscord, connect_bot: Any) -> AsyncIterator[Probe]:
    fake_discord.rest.refusals_expected = True  # every test here sends what Discord refuses
    client = Probe()
    await connect_bot(client)
    yield client


def refused(exc: BaseException, field: str) -> None:
    assert isinstance(exc, discord.HTTPException), exc
    assert (exc.status, exc.code) == (400, 50035), exc
    assert f"In {field}:" in exc.text or f"{field}:" in str(exc), exc.text


def row(*components: dict[str, Any]) -> dict[str, Any]:
    return {"type": 1, "components": list(components)}


def button(custom_id: str = "b", **extra: Any) -> dict[str, Any]:
    return {"type": 2, "style": 1, "label": "Go", "custom_id": custom_id, **extra}


def link(url: str = "https://example.org/a", **extra: Any) -> dict[str, Any]:
    return {"type": 2, "style": 5, "label": "Open", "url": url, **extra}


def select(options: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"type": 3, "custom_id": "s", "options": options, **extra}


def opt(value: str = "v", **extra: Any) -> dict[str, Any]:
    return {"label": "L", "value": value, **extra}


def embed(**extra: Any) -> dict[str, Any]:
    return {"title": "t", **extra}


MESSAGE_RULES: list[tuple[str, dict[str, Any], str]] = [
    ("content 2,000", {"content": "x" * 2001}, "content"),
    ("10 embeds", {"embeds": [embed() for _ in range(11)]}, "embeds"),
    ("title 256", {"embeds": [embed(title="t" * 257)]}, "embeds.0.title"),
    ("description 4,096", {"embeds": [embed(description="d" * 4097)]}, "embeds.0.description"),
    (
        "25 fields",
        {"embeds": [embed(fields=[{"name": "n", "value": "v"}] * 26)]},
        "embeds.0.fields",
    ),
    (
        "field name 256",
        {"embeds": [embed(fields=[{"name": "n" * 257, "value": "v"}])]},
        "embeds.0.fields.0.name",
    ),
    (
        "field value 1,024",
        {"embeds": [embed(fields=[{"name": "n", "value": "v" * 1025}])]},
        "embeds.0.fields.0.value",
    ),
    ("footer 2,048", {"embeds": [embed(footer={"text": "f" * 2049})]}, "embeds.0.footer.text"),
    ("author 256", {"embeds": [embed(author={"name": "a" * 257})]}, "embeds.0.author.name"),
    (
        "6,000 across a message",
        {"embeds": [embed(description="d" * 3000), embed(description="d" * 3000)]},
        "embeds",
    ),
    ("embed url host-less", {"embeds": [embed(url="https://.")]}, "embeds.0.url"),
    ("embed url scheme", {"embeds": [embed(url="javascript:alert(1)")]}, "embeds.0.url"),
    (
        "image url",
        {"embeds": [embed(image={"url": "https://example.org/a b.png"})]},
        "embeds.0.image.url",
    ),
    (
        "thumbnail url",
        {"embeds": [embed(thumbnail={"url": "example.org/t.png"})]},
        "embeds.0.thumbnail.url",
    ),
    ("5 rows", {"components": [row(button(f"b{i}")) for i in range(6)]}, "components"),
    (
        "5 buttons a row",
        {"components": [row(*(button(f"b{i}") for i in range(6)))]},
        "components.0.components",
    ),
    (
        "custom_id 100",
        {"components": [row(button("c" * 101))]},
        "components.0.components.0.custom_id",
    ),
    ("custom_id empty", {"components": [row(button(""))]}, "components.0.components.0.custom_id"),
    (
        "custom_id unique",
        {"components": [row(button("same")), row(button("same"))]},
        "components.1.components.0.custom_id",
    ),
    (
        "label 80",
        {"components": [row(button(label="l" * 81))]},
        "components.0.components.0.label",
    ),
    (
        "link needs a url",
        {"components": [row({"type": 2, "style": 5, "label": "Open"})]},
        "components.0.components.0.url",
    ),
    (
        "link url well formed",
        {"components": [row(link("https://github.com/foo bar"))]},
        "components.0.components.0.url",
    ),
    (
        "link has no custom_id",
        {"components": [row(link(custom_id="x"))]},
        "components.0.components.0.custom_id",
    ),
    (
        "select needs options",
        {"components": [row(select([]))]},
        "components.0.components.0.options",
    ),
    (
        "select 25 options",
        {"components": [row(select([opt(str(i)) for i in range(26)]))]},
        "components.0.components.0.options",
    ),
    (
        "option label 100",
        {"components": [row(select([opt(label="l" * 101)]))]},
        "components.0.components.0.options.0.label",
    ),
    (
        "option value 100",
        {"components": [row(select([opt("v" * 101)]))]},
        "components.0.components.0.options.0.value",
    ),
    (
        "option description 100",
        {"components": [row(select([opt(description="d" * 101)]))]},
        "components.0.components.0.options.0.description",
    ),
    (
        "option values unique",
        {"components": [row(select([opt("v"), opt("v")]))]},
        "components.0.components.0.options.1.value",
    ),
    (
        "placeholder 150",
        {"components": [row(select([opt()], placeholder="p" * 151))]},
        "components.0.components.0.placeholder",
    ),
    (
        "a select fills its row",
        {"components": [row(select([opt()]), button())]},
        "components.0.components",
    ),
]


async def post_message(client: discord.Client, channel_id: str, body: dict[str, Any]) -> Any:
    route = Route("POST", "/channels/{channel_id}/messages", channel_id=int(channel_id))
    return await client.http.request(route, json=body)


@pytest.mark.parametrize(
    ("body", "field"), [r[1:] for r in MESSAGE_RULES], ids=[r[0] for r in MESSAGE_RULES]
)
async def test_message_rule(
    fake_discord: FakeDiscord, probe: Probe, body: dict[str, Any], field: str
) -> None:
    with pytest.raises(discord.HTTPException) as caught:
        await post_message(probe, fake_discord.channel.id, body)
    refused(caught.value, field)
    assert fake_discord.channel_messages() == []


async def post_files(client: discord.Client, channel_id: str, files: list[discord.File]) -> Any:
    """A raw multipart send (discord.py's own `send` refuses more than 10 files before Discord)."""
    route = Route("POST", "/channels/{channel_id}/messages", channel_id=int(channel_id))
    form = [{"name": "payload_json", "value": '{"content": "files"}'}]
    for i, file in enumerate(files):
        form.append(
            {
                "name": f"files[{i}]",
                "value": file.fp,
                "filename": file.filename,
                "content_type": "application/octet-stream",
            }
        )
    return await client.http.request(route, form=form, files=files)


async def test_attachment_rules(fake_discord: FakeDiscord, probe: Probe) -> None:
    """Discord takes at most 10 files a message (400 / 50035 on `attachments`), each within the
    attachment size limit and the request within 25 MiB (413 / 40005); 10 small files pass."""
    channel = fake_discord.channel.id
    with pytest.raises(discord.HTTPException) as caught:
        await post_files(
            probe, channel, [discord.File(io.BytesIO(b"x"), f"{i}.txt") for i in range(11)]
        )
    refused(caught.value, "attachments")
    big = discord.File(io.BytesIO(b"x" * (10 * 1024 * 1024 + 1)), "big.bib")
    with pytest.raises(discord.HTTPException) as caught:
        await post_files(probe, channel, [big])
    assert (caught.value.status, caught.value.code) == (413, 40005), caught.value
    assert fake_discord.channel_messages() == []
    await post_files(
        probe, channel, [discord.File(io.BytesIO(b"x"), f"{i}.txt") for i in range(10)]
    )
    [sent] = fake_discord.channel_messages()
    assert len(sent["attachments"]) == 10


async def test_high_level_sends_are_refused_too(fake_discord: FakeDiscord, probe: Probe) -> None:
    channel = probe.get_channel(int(fake_discord.channel.id))
    assert isinstance(channel, discord.TextChannel)
    with pytest.raises(discord.HTTPException) as caught:
        await channel.send("x" * 2001)
    refused(caught.value, "content")
    with pytest.raises(discord.HTTPException) as caught:
        await channel.send(embed=discord.Embed(title="t", url="https://github.com/foo/bar}, x"))
    refused(caught.value, "embeds.0.url")
    sent = await channel.send("fine", embed=discord.Embed(title="t", url="https://example.org"))
    with pytest.raises(discord.HTTPException) as caught:
        await sent.edit(embed=discord.Embed(description="d" * 4097))
    refused(caught.value, "embeds.0.description")
    with pytest.raises(discord.HTTPException) as caught:
        await sent.create_thread(name="n" * 101)
    refused(caught.value, "name")
    with pytest.raises(discord.HTTPException) as caught:
        await channel.create_thread(name="", type=discord.ChannelType.public_thread)
    refused(caught.value, "name")


async def test_without_the_spec_the_hand_rules_still_refuse(
    fake_discord: FakeDiscord, probe: Probe
) -> None:
    fake_discord.rest.use_spec = False
    for _name, body, field in MESSAGE_RULES:
        with pytest.raises(discord.HTTPException) as caught:
            await post_message(probe, fake_discord.channel.id, body)
        refused(caught.value, field)
    assert fake_discord.channel_messages() == []


async def test_the_spec_refuses_what_no_hand_rule_names(
    fake_discord: FakeDiscord, probe: Probe
) -> None:
    if fake_discord.rest.use_spec and not _spec_present():
        pytest.skip("needs ../shared/discord/openapi.json")
    for body, field in [
        ({"embeds": [embed(color=1 << 24)]}, "embeds.0.color"),
        ({"components": [row(button(style=9))]}, "components.0.components.0.style"),
        ({"content": "x", "sticker_ids": [1, 2, 3, 4]}, "sticker_ids"),
    ]:
        with pytest.raises(discord.HTTPException) as caught:
            await post_message(probe, fake_discord.channel.id, body)
        refused(caught.value, field)


def _spec_present() -> bool:
    from tests.fakediscord import spec

    return spec.load() is not None


# -- interactions: callbacks, follow-ups, autocomplete, the 3 seconds --------------------------


async def refusal(client: Probe) -> discord.HTTPException:
    return await asyncio.wait_for(client.refusals.get(), 5)


async def test_callback_message_rules(fake_discord: FakeDiscord, probe: Probe) -> None:
    async def answer(interaction: discord.Interaction) -> None:
        await interaction.response.send_message(embed=discord.Embed(title="t" * 257))

    probe.action = answer
    await fake_discord.slash("anything")
    refused(await refusal(probe), "data.embeds.0.title")


async def test_followup_and_edit_rules(fake_discord: FakeDiscord, probe: Probe) -> None:
    async def answer(interaction: discord.Interaction) -> None:
        await interaction.response.defer()
        try:
            await interaction.followup.send("x" * 2001)
        finally:
            await interaction.edit_original_response(content="y" * 2001)

    probe.action = answer
    await fake_discord.slash("anything")
    refused(await refusal(probe), "content")


async def test_autocomplete_rules(fake_discord: FakeDiscord, probe: Probe) -> None:
    cases = [
        ([app_commands.Choice(name=str(i), value=str(i)) for i in range(26)], "data.choices"),
        ([app_commands.Choice(name="n" * 101, value="v")], "data.choices.0.name"),
        ([app_commands.Choice(name="", value="v")], "data.choices.0.name"),
        ([app_commands.Choice(name="n", value="v" * 101)], "data.choices.0.value"),
    ]
    for choices, field in cases:

        async def answer(interaction: discord.Interaction, choices: Any = choices) -> None:
            await interaction.response.autocomplete(choices)

        probe.action = answer
        await fake_discord.autocomplete("paper", {"ref": "attn"})
        refused(await refusal(probe), field)


async def test_callback_type_must_suit_the_interaction(
    fake_discord: FakeDiscord, probe: Probe
) -> None:
    async def message_to_autocomplete(interaction: discord.Interaction) -> None:
        await interaction.response.send_message("not a choice list")

    probe.action = message_to_autocomplete
    await fake_discord.autocomplete("paper", {"ref": "attn"})
    refused(await refusal(probe), "type")


async def test_the_first_answer_must_come_within_three_seconds(
    fake_discord: FakeDiscord, probe: Probe
) -> None:
    assert fake_discord.interaction_timeout == 3.0  # Discord's rule, on by default

    async def late(interaction: discord.Interaction) -> None:
        await asyncio.sleep(3.1)
        await interaction.response.send_message("too late")

    probe.action = late
    await fake_discord.slash("anything")
    exc = await refusal(probe)
    assert isinstance(exc, discord.NotFound)
    assert exc.code == 10062


# -- command registration ----------------------------------------------------------------------


def cmd(name: str = "search", **extra: Any) -> dict[str, Any]:
    return {"type": 1, "name": name, "description": "Find papers", **extra}


def sopt(name: str = "query", **extra: Any) -> dict[str, Any]:
    return {"type": 3, "name": name, "description": "Words", **extra}


COMMAND_RULES: list[tuple[str, list[dict[str, Any]], str]] = [
    ("name lower case", [cmd("Search")], "0.name"),
    ("name pattern", [cmd("two words")], "0.name"),
    ("name 32", [cmd("n" * 33)], "0.name"),
    ("description 100", [cmd(description="d" * 101)], "0.description"),
    ("description 1", [cmd(description="")], "0.description"),
    ("25 options", [cmd(options=[sopt(f"o{i}") for i in range(26)])], "0.options"),
    ("option name", [cmd(options=[sopt("Query")])], "0.options.0.name"),
    ("option description", [cmd(options=[sopt(description="d" * 101)])], "0.options.0.description"),
    (
        "25 choices",
        [cmd(options=[sopt(choices=[{"name": str(i), "value": "v"} for i in range(26)])])],
        "0.options.0.choices",
    ),
    (
        "choice name 100",
        [cmd(options=[sopt(choices=[{"name": "n" * 101, "value": "v"}])])],
        "0.options.0.choices.0.name",
    ),
    (
        "choice value 100",
        [cmd(options=[sopt(choices=[{"name": "n", "value": "v" * 101}])])],
        "0.options.0.choices.0.value",
    ),
    (
        "required before optional",
        [cmd(options=[sopt("a"), sopt("b", required=True)])],
        "0.options.1.required",
    ),
    (
        "4,000 per command",
        [
            cmd(
                options=[
                    sopt(
                        f"o{i}", description="d" * 100, choices=[{"name": "n" * 100, "value": "v"}]
                    )
                    for i in range(20)
                ]
            )
        ],
        "0: Command exceeds maximum size (4000)",
    ),
    ("100 commands", [cmd(f"c{i}") for i in range(101)], "_errors"),
    ("names unique", [cmd("same"), cmd("same")], "1.name"),
    (
        "15 user commands",
        [{"type": 2, "name": f"User {i}", "description": ""} for i in range(16)],
        "_errors",
    ),
]


@pytest.mark.parametrize(
    ("payload", "field"), [r[1:] for r in COMMAND_RULES], ids=[r[0] for r in COMMAND_RULES]
)
async def test_command_overwrite_rule(
    fake_discord: FakeDiscord, probe: Probe, payload: list[dict[str, Any]], field: str
) -> None:
    app_id = probe.application_id
    assert app_id is not None
    with pytest.raises(discord.HTTPException) as caught:
        await probe.http.bulk_upsert_global_commands(app_id, payload)
    exc = caught.value
    assert (exc.status, exc.code) == (400, 50035)
    if field == "_errors":
        assert "or fewer in length" in exc.text, exc.text
    else:
        assert f"In {field}" in exc.text, exc.text
    guild_id = int(fake_discord.guild.id)
    with pytest.raises(discord.HTTPException):
        await probe.http.bulk_upsert_guild_commands(app_id, guild_id, payload)
    if len(payload) == 1:
        with pytest.raises(discord.HTTPException):
            await probe.http.upsert_global_command(app_id, payload[0])
    assert fake_discord.commands() == {}


async def test_tree_sync_raises_command_sync_failure(
    fake_discord: FakeDiscord, probe: Probe
) -> None:
    tree = app_commands.CommandTree(probe)

    @tree.command(name="reload", description="r" * 110)
    async def reload(interaction: discord.Interaction) -> None:
        return None

    with pytest.raises(app_commands.CommandSyncFailure) as caught:
        await tree.sync()
    assert "In command 'reload'" in str(caught.value)
    assert "description" in str(caught.value)

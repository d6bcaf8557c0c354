"""The loopback Discord refuses what Discord refuses about installs, contexts, context menus and
user-installed apps (tests/fakediscord/rules_commands.py): one bad payload per rule."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import discord
import pytest
import pytest_asyncio

from tests.fakediscord import FakeDiscord
from tests.fakediscord.rules_commands import NotOffered


class Probe(discord.Client):
    """A bare client that answers each interaction with `follow_ups` follow-ups."""

    def __init__(self) -> None:
        super().__init__(intents=discord.Intents.default())
        self.follow_ups = 0
        self.failures: list[discord.HTTPException] = []

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(ephemeral=True)
        for i in range(self.follow_ups):
            try:
                await interaction.followup.send(f"part {i}", ephemeral=True)
            except discord.HTTPException as exc:
                self.failures.append(exc)


@pytest_asyncio.fixture
async def probe(fake_discord: FakeDiscord, connect_bot: Any) -> AsyncIterator[Probe]:
    fake_discord.rest.refusals_expected = True
    client = Probe()
    await connect_bot(client)
    yield client


def slash(name: str = "c", **extra: Any) -> dict[str, Any]:
    return {"type": 1, "name": name, "description": "d", **extra}


def menu(name: str = "Find papers", **extra: Any) -> dict[str, Any]:
    return {"type": 3, "name": name, **extra}


PLACE_RULES: list[tuple[str, list[dict[str, Any]], str]] = [
    ("integration type 2 unknown", [slash(integration_types=[0, 2])], "0.integration_types.1"),
    ("integration types empty", [slash(integration_types=[])], "0.integration_types"),
    ("integration types repeated", [slash(integration_types=[1, 1])], "0.integration_types"),
    ("context 3 unknown", [slash(contexts=[0, 3])], "0.contexts.1"),
    ("contexts empty", [slash(contexts=[])], "0.contexts"),
    ("contexts not a list", [slash(contexts=1)], "0.contexts"),
    ("message command with a description", [menu(description="Finds papers")], "0.description"),
    (
        "message command with options",
        [menu(options=[{"type": 3, "name": "q", "description": "q"}])],
        "0.options",
    ),
    ("message command name 32", [menu("F" * 33)], "0.name"),
    ("16 message commands", [menu(f"Find {i}") for i in range(16)], "_errors"),
]


@pytest.mark.parametrize(
    ("payload", "field"), [r[1:] for r in PLACE_RULES], ids=[r[0] for r in PLACE_RULES]
)
async def test_place_rule(
    fake_discord: FakeDiscord, probe: Probe, payload: list[dict[str, Any]], field: str
) -> None:
    app_id = probe.application_id
    assert app_id is not None
    with pytest.raises(discord.HTTPException) as caught:
        await probe.http.bulk_upsert_global_commands(app_id, payload)
    assert (caught.value.status, caught.value.code) == (400, 50035)
    if field == "_errors":
        assert "or fewer in length" in caught.value.text
    else:
        assert f"In {field}" in caught.value.text, caught.value.text
    if len(payload) == 1:
        with pytest.raises(discord.HTTPException):
            await probe.http.upsert_global_command(app_id, payload[0])
    assert fake_discord.commands() == {}


async def test_good_places_and_fifteen_menus_are_taken(
    fake_discord: FakeDiscord, probe: Probe
) -> None:
    app_id = probe.application_id
    assert app_id is not None
    good = [slash(integration_types=[0, 1], contexts=[0, 1, 2]), slash("g", contexts=[0])]
    good += [menu(f"Find {i}", integration_types=[1], contexts=[2]) for i in range(15)]
    await probe.http.bulk_upsert_global_commands(app_id, good)
    assert len(fake_discord.commands()) == 17
    assert not fake_discord.rest.refused


async def test_commands_are_offered_only_where_they_are_declared(
    fake_discord: FakeDiscord, probe: Probe
) -> None:
    app_id = probe.application_id
    assert app_id is not None
    await probe.http.bulk_upsert_global_commands(
        app_id,
        [
            slash("everywhere", integration_types=[0, 1], contexts=[0, 1, 2]),
            slash("server", contexts=[0]),
        ],
    )
    elsewhere = fake_discord.outside_guild().channels[0]
    group = fake_discord.group_dm()
    dm = fake_discord.world.dm_channel(fake_discord.alice)
    for channel in (elsewhere, group, dm):
        handle = await fake_discord.slash("everywhere", channel=channel, user_install=True)
        assert handle.payload["authorizing_integration_owners"] == {"1": fake_discord.alice.id}
    assert handle.payload["context"] == 1
    with pytest.raises(NotOffered):
        await fake_discord.slash("server", channel=elsewhere)
    with pytest.raises(NotOffered):
        await fake_discord.slash("server", channel=group)
    with pytest.raises(NotOffered):
        await fake_discord.slash("server", channel=dm)
    inside = await fake_discord.slash("server")
    assert inside.payload["authorizing_integration_owners"] == {"0": fake_discord.guild.id}
    assert inside.payload["context"] == 0


async def test_a_sixth_follow_up_outside_a_server_is_refused(
    fake_discord: FakeDiscord, probe: Probe
) -> None:
    app_id = probe.application_id
    assert app_id is not None
    await probe.http.bulk_upsert_global_commands(
        app_id, [slash("c", integration_types=[0, 1], contexts=[0, 1, 2])]
    )
    probe.follow_ups = 6
    outside = await fake_discord.slash("c", channel=fake_discord.group_dm())
    await outside.wait("followup", index=4)
    await outside.settle(quiet=0.05)
    assert len(outside.followup_ids) == 5
    assert [(e.status, e.code) for e in probe.failures] == [(400, 40094)]
    probe.failures.clear()
    inside = await fake_discord.slash("c")  # the bot is in this server: no such cap
    await inside.wait("followup", index=5)
    assert probe.failures == []

"""The loopback Discord and attachment options (tests/fakediscord/rules_attachments.py): a
file a user attaches is served in the interaction's resolved data and downloadable on
loopback, and an attachment option carrying a field Discord allows only on other option types
is refused (400 / 50035), one payload per rule, through discord.py's HTTP client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import discord
import pytest
import pytest_asyncio

from tests.fakediscord import FakeDiscord
from tests.fakediscord.rules_attachments import NOT_ON_ATTACHMENTS, FakeFile

BAD_VALUES: dict[str, Any] = {
    "choices": [{"name": "a", "value": "a"}],
    "autocomplete": True,
    "min_value": 1,
    "max_value": 2,
    "min_length": 1,
    "max_length": 10,
    "channel_types": [0],
}


class Probe(discord.Client):
    def __init__(self) -> None:
        super().__init__(intents=discord.Intents.default())
        self.seen: list[discord.Interaction] = []
        self.files: list[bytes] = []

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        self.seen.append(interaction)
        resolved = (interaction.data or {}).get("resolved") or {}
        for data in (resolved.get("attachments") or {}).values():
            # What discord.py builds for an attachment option; read() downloads its url.
            file = discord.Attachment(data=data, state=self._connection)
            self.files.append(await file.read())
        await interaction.response.send_message("ok", ephemeral=True)


@pytest_asyncio.fixture
async def probe(fake_discord: FakeDiscord, connect_bot: Any) -> AsyncIterator[Probe]:
    client = Probe()
    await connect_bot(client)
    yield client


def _command(**extra: Any) -> dict[str, Any]:
    option = {"type": 11, "name": "file", "description": "a file", **extra}
    return {"type": 1, "name": "upload", "description": "takes a file", "options": [option]}


@pytest.mark.parametrize("field", sorted(NOT_ON_ATTACHMENTS))
async def test_an_attachment_option_may_not_carry(
    fake_discord: FakeDiscord, probe: Probe, field: str
) -> None:
    fake_discord.rest.refusals_expected = True
    app_id = probe.application_id
    assert app_id is not None
    with pytest.raises(discord.HTTPException) as caught:
        await probe.http.bulk_upsert_global_commands(
            app_id, [_command(**{field: BAD_VALUES[field]})]
        )
    assert (caught.value.status, caught.value.code) == (400, 50035)
    assert f"In 0.options.0.{field}" in caught.value.text, caught.value.text
    with pytest.raises(discord.HTTPException):
        await probe.http.upsert_global_command(app_id, _command(**{field: BAD_VALUES[field]}))
    assert fake_discord.commands() == {}


async def test_a_plain_attachment_option_is_accepted_and_its_file_served(
    fake_discord: FakeDiscord, probe: Probe
) -> None:
    app_id = probe.application_id
    assert app_id is not None
    await probe.http.bulk_upsert_global_commands(app_id, [_command(required=True)])
    handle = await fake_discord.slash(
        "upload", {"file": FakeFile("refs.bib", b"@misc{k, title={T}}")}
    )
    await handle.response()
    data = handle.payload["data"]
    (attachment,) = data["resolved"]["attachments"].values()
    assert data["options"][0] == {"name": "file", "type": 11, "value": attachment["id"]}
    assert attachment["filename"] == "refs.bib"
    assert attachment["size"] == 19
    assert probe.files == [b"@misc{k, title={T}}"]

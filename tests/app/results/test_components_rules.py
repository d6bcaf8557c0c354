"""The stand-in refuses the Components v2 messages Discord refuses (tests/fakediscord/
rules_components.py): one violating payload per rule, answered 400 / 50035 with the field."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import discord
import pytest
from discord.http import Route

from tests.app.test_discord_rules import Probe, post_message, probe, refused
from tests.fakediscord import FakeDiscord

__all__ = ["probe"]  # the fixture, used by name
V2 = 1 << 15


def text(content: str = "hello") -> dict[str, Any]:
    return {"type": 10, "content": content}


def button(custom_id: str = "b") -> dict[str, Any]:
    return {"type": 2, "style": 2, "label": "Save", "custom_id": custom_id}


def section(*texts: dict[str, Any], accessory: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"type": 9, "components": list(texts)}
    if accessory is not None:
        body["accessory"] = accessory
    return body


def row(*components: dict[str, Any]) -> dict[str, Any]:
    return {"type": 1, "components": list(components)}


def select(custom_id: str = "s") -> dict[str, Any]:
    return {"type": 3, "custom_id": custom_id, "options": [{"label": "a", "value": "a"}]}


def v2(*components: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"flags": V2, "components": list(components), **extra}


RULES = [
    ("no content", v2(text(), content="hi"), "content"),
    ("no embeds", v2(text(), embeds=[{"title": "t"}]), "embeds"),
    ("no poll", v2(text(), poll={"question": {"text": "q"}, "answers": []}), "poll"),
    ("no stickers", v2(text(), sticker_ids=["1"]), "sticker_ids"),
    ("40 components", v2(*[text(str(i)) for i in range(41)]), "components"),
    (
        "40 counting nested",
        v2(*[section(text(), accessory=button(f"b{i}")) for i in range(14)]),
        "components",
    ),
    ("4000 characters of text", v2(text("x" * 2001), text("y" * 2000)), "components"),
    ("a section has a text", v2(section(accessory=button())), "components.0.components"),
    (
        "a section has at most 3 texts",
        v2(section(text(), text(), text(), text(), accessory=button())),
        "components.0.components",
    ),
    ("a section has an accessory", v2(section(text())), "components.0.accessory"),
    (
        "an accessory is a button or thumbnail",
        v2(section(text(), accessory=select())),
        "components.0.accessory",
    ),
    (
        "a row holds 5 buttons",
        v2(row(*[button(f"b{i}") for i in range(6)])),
        "components.0.components",
    ),
    ("a row's select is alone", v2(row(select(), button())), "components.0.components"),
    (
        "a nested row too",
        v2({"type": 17, "components": [row(select(), button())]}),
        "components.0.components.0.components",
    ),
    (
        "custom_id 100",
        v2(section(text(), accessory=button("c" * 101))),
        "components.0.accessory.custom_id",
    ),
    (
        "custom_ids unique, nested",
        v2(section(text(), accessory=button("same")), row(button("same"))),
        "components.1.components.0.custom_id",
    ),
    ("layout needs the flag", {"components": [text()]}, "components.0.type"),
]


@pytest.mark.parametrize(("body", "field"), [r[1:] for r in RULES], ids=[r[0] for r in RULES])
async def test_v2_rule(
    fake_discord: FakeDiscord, probe: Probe, body: dict[str, Any], field: str
) -> None:
    fake_discord.rest.use_spec = False  # these rules by hand, as without ../shared
    refused(await refusal_of(post_message(probe, fake_discord.channel.id, body)), field)
    assert fake_discord.channel_messages() == []


async def test_a_results_page_shaped_message_passes(
    fake_discord: FakeDiscord, probe: Probe
) -> None:
    body = v2(
        text("### heading"),
        row(button("prev"), button("next"), button("share")),
        row(select()),
        *[section(text("t" * 300), accessory=button(f"save{i}")) for i in range(10)],
        content="",
        embeds=[],
    )
    await post_message(probe, fake_discord.channel.id, body)
    [sent] = fake_discord.channel_messages()
    assert sent["flags"] & V2


async def refusal_of(request: Awaitable[Any]) -> BaseException:
    """The error a request ended with (none: the stand-in took what Discord refuses)."""
    try:
        await request
    except discord.HTTPException as exc:
        return exc
    raise AssertionError("accepted")


async def edit(client: discord.Client, channel_id: str, message_id: str, body: Any) -> Any:
    route = Route(
        "PATCH",
        "/channels/{channel_id}/messages/{message_id}",
        channel_id=int(channel_id),
        message_id=int(message_id),
    )
    return await client.http.request(route, json=body)


async def test_edit_rules_need_the_message_as_it_is(
    fake_discord: FakeDiscord, probe: Probe
) -> None:
    """The flag is never removed; a v2 message takes no content even when the edit does not
    repeat the flag; a classic message becomes v2 only with its content and embeds cleared."""
    channel = fake_discord.channel.id
    sent = await post_message(probe, channel, v2(text()))
    refused(
        await refusal_of(edit(probe, channel, sent["id"], {"flags": 0, "components": [text()]})),
        "flags",
    )
    refused(await refusal_of(edit(probe, channel, sent["id"], {"content": "now text"})), "content")
    refused(
        await refusal_of(
            edit(probe, channel, sent["id"], {"components": [text("x" * 2001), text("y" * 2000)]})
        ),
        "components",
    )
    await edit(probe, channel, sent["id"], {"components": [text("edited")]})

    classic = await post_message(probe, channel, {"content": "old", "embeds": [{"title": "t"}]})
    refused(await refusal_of(edit(probe, channel, classic["id"], v2(text(), embeds=[]))), "content")
    refused(
        await refusal_of(edit(probe, channel, classic["id"], {"components": [text()]})),
        "components.0.type",
    )
    done = await edit(probe, channel, classic["id"], v2(text(), content=None, embeds=[]))
    assert done["flags"] & V2
    assert (done["content"], done["embeds"]) == ("", [])

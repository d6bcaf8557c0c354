"""Every number in bot.app.limits against Discord's OpenAPI spec (and the stand-in's rules).

Why: a limit written wrong in the bot and agreed with by the stand-in would hide in two places
at once. Where the spec states the limit, the bot's number must equal it; where the spec is
looser than Discord (SOURCE.md lists those), the bot's number must be within it and equal to
the stand-in's documented rule.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.app import limits
from tests.fakediscord import rules_messages, spec, validate


def schema(name: str) -> dict[str, Any]:
    found = spec.schema(name)
    if found is None:
        pytest.skip(f"needs {spec.SPEC_PATH} (Discord's OpenAPI spec beside the repo; in CI)")
    return found


def prop(name: str, *path: str) -> dict[str, Any]:
    node = schema(name)
    for key in path:
        node = node["properties"][key] if "properties" in node else node[key]
    return node


def test_embed_limits_equal_the_spec() -> None:
    assert limits.EMBED_TITLE == prop("RichEmbed", "title")["maxLength"]
    assert limits.EMBED_DESCRIPTION == prop("RichEmbed", "description")["maxLength"]
    assert limits.EMBED_FIELDS == prop("RichEmbed", "fields")["maxItems"]
    assert limits.FIELD_NAME == prop("RichEmbedField", "name")["maxLength"]
    assert limits.FIELD_VALUE == prop("RichEmbedField", "value")["maxLength"]
    assert limits.EMBED_FOOTER == prop("RichEmbedFooter", "text")["maxLength"]
    assert limits.EMBED_AUTHOR == prop("RichEmbedAuthor", "name")["maxLength"]
    assert limits.EMBEDS_PER_MESSAGE == prop("MessageCreateRequest", "embeds")["maxItems"]


def test_component_limits_equal_the_spec() -> None:
    button = "ButtonComponentForMessageRequest"
    select = "StringSelectComponentForMessageRequest"
    option = "StringSelectOptionForRequest"
    assert limits.CUSTOM_ID == prop(button, "custom_id")["maxLength"]
    assert limits.CUSTOM_ID == prop(select, "custom_id")["maxLength"]
    assert limits.BUTTON_LABEL == prop(button, "label")["maxLength"]
    assert limits.LINK_URL == prop(button, "url")["maxLength"]
    assert limits.SELECT_OPTIONS == prop(select, "options")["maxItems"]
    assert limits.SELECT_PLACEHOLDER == prop(select, "placeholder")["maxLength"]
    assert limits.OPTION_LABEL == prop(option, "label")["maxLength"]
    assert limits.OPTION_VALUE == prop(option, "value")["maxLength"]
    assert limits.OPTION_DESCRIPTION == prop(option, "description")["maxLength"]
    assert (
        limits.ROW_BUTTONS == prop("ActionRowComponentForMessageRequest", "components")["maxItems"]
    )
    # the spec allows 40 newer-style components; classic action rows stop at 5
    assert limits.ACTION_ROWS <= prop("MessageCreateRequest", "components")["maxItems"]
    assert limits.ACTION_ROWS == rules_messages.ROWS


def test_thread_and_autocomplete_limits_equal_the_spec() -> None:
    assert limits.THREAD_NAME == prop("CreateTextThreadWithMessageRequest", "name")["maxLength"]
    assert limits.THREAD_NAME == prop("CreateTextThreadWithoutMessageRequest", "name")["maxLength"]
    data = "InteractionApplicationCommandAutocompleteCallbackStringData"
    assert limits.AUTOCOMPLETE_CHOICES == prop(data, "choices")["maxItems"]
    assert limits.CHOICES == limits.AUTOCOMPLETE_CHOICES
    assert limits.CHOICE_NAME == prop("ApplicationCommandOptionStringChoice", "name")["maxLength"]


def test_registration_limits_equal_the_spec() -> None:
    create = "ApplicationCommandCreateRequest"
    option = "ApplicationCommandStringOption"
    assert limits.COMMAND_NAME == prop(create, "name")["maxLength"]
    assert limits.COMMAND_NAME == prop(option, "name")["maxLength"]
    assert limits.COMMAND_DESCRIPTION == prop(create, "description")["maxLength"]
    assert limits.COMMAND_DESCRIPTION == prop(option, "description")["maxLength"]
    assert limits.COMMAND_OPTIONS == prop(create, "options")["maxItems"]
    assert limits.OPTION_CHOICES == prop(option, "choices")["maxItems"]
    assert limits.OPTION_STRING_LENGTH == prop(option, "max_length")["maximum"]
    assert limits.OPTION_STRING_LENGTH == prop(option, "min_length")["maximum"]


def test_limits_the_spec_states_too_loosely_match_the_stand_in() -> None:
    """Content (spec 4,000), choice values (spec 6,000), command count (spec 130 in all)."""
    assert limits.CONTENT < prop("MessageCreateRequest", "content")["maxLength"]
    assert limits.CONTENT == rules_messages.CONTENT
    choice_value = prop("ApplicationCommandOptionStringChoice", "value")["maxLength"]
    assert limits.CHOICE_VALUE < choice_value
    assert limits.CHOICE_VALUE == validate.CHOICE_VALUE
    spec_doc = spec.load()
    assert spec_doc is not None
    put = spec_doc.document["paths"]["/applications/{application_id}/commands"]["put"]
    most = put["requestBody"]["content"]["application/json"]["schema"]["maxItems"]
    assert limits.CHAT_INPUT_COMMANDS + 2 * limits.CONTEXT_MENU_COMMANDS <= most
    assert limits.CHAT_INPUT_COMMANDS == validate.CHAT_INPUT_COMMANDS
    assert limits.COMMAND_TOTAL == validate.COMMAND_TOTAL
    assert limits.CONTEXT_MENU_COMMANDS == validate.CONTEXT_MENU_COMMANDS
    assert limits.EMBED_TOTAL == rules_messages.EMBED_TOTAL


def test_spec_loads_once_and_caches_validators() -> None:
    first = spec.load()
    if first is None:
        pytest.skip(f"needs {spec.SPEC_PATH}")
    assert spec.load() is first
    route = ("POST", "/channels/1/messages")
    assert first.validator(*route) is first.validator(*route)

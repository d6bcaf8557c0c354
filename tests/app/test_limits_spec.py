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
    assert prop("RichEmbed", "title")["maxLength"] == limits.EMBED_TITLE
    assert prop("RichEmbed", "description")["maxLength"] == limits.EMBED_DESCRIPTION
    assert prop("RichEmbed", "fields")["maxItems"] == limits.EMBED_FIELDS
    assert prop("RichEmbedField", "name")["maxLength"] == limits.FIELD_NAME
    assert prop("RichEmbedField", "value")["maxLength"] == limits.FIELD_VALUE
    assert prop("RichEmbedFooter", "text")["maxLength"] == limits.EMBED_FOOTER
    assert prop("RichEmbedAuthor", "name")["maxLength"] == limits.EMBED_AUTHOR
    assert prop("MessageCreateRequest", "embeds")["maxItems"] == limits.EMBEDS_PER_MESSAGE


def test_component_limits_equal_the_spec() -> None:
    button = "ButtonComponentForMessageRequest"
    select = "StringSelectComponentForMessageRequest"
    option = "StringSelectOptionForRequest"
    assert prop(button, "custom_id")["maxLength"] == limits.CUSTOM_ID
    assert prop(select, "custom_id")["maxLength"] == limits.CUSTOM_ID
    assert prop(button, "label")["maxLength"] == limits.BUTTON_LABEL
    assert prop(button, "url")["maxLength"] == limits.LINK_URL
    assert prop(select, "options")["maxItems"] == limits.SELECT_OPTIONS
    assert prop(select, "placeholder")["maxLength"] == limits.SELECT_PLACEHOLDER
    assert prop(option, "label")["maxLength"] == limits.OPTION_LABEL
    assert prop(option, "value")["maxLength"] == limits.OPTION_VALUE
    assert prop(option, "description")["maxLength"] == limits.OPTION_DESCRIPTION
    assert (
        prop("ActionRowComponentForMessageRequest", "components")["maxItems"] == limits.ROW_BUTTONS
    )
    # the spec allows 40 newer-style components; classic action rows stop at 5
    assert prop("MessageCreateRequest", "components")["maxItems"] >= limits.ACTION_ROWS
    assert limits.ACTION_ROWS == rules_messages.ROWS


def test_thread_and_autocomplete_limits_equal_the_spec() -> None:
    assert prop("CreateTextThreadWithMessageRequest", "name")["maxLength"] == limits.THREAD_NAME
    assert prop("CreateTextThreadWithoutMessageRequest", "name")["maxLength"] == limits.THREAD_NAME
    data = "InteractionApplicationCommandAutocompleteCallbackStringData"
    assert prop(data, "choices")["maxItems"] == limits.AUTOCOMPLETE_CHOICES
    assert limits.CHOICES == limits.AUTOCOMPLETE_CHOICES
    assert prop("ApplicationCommandOptionStringChoice", "name")["maxLength"] == limits.CHOICE_NAME


def test_registration_limits_equal_the_spec() -> None:
    create = "ApplicationCommandCreateRequest"
    option = "ApplicationCommandStringOption"
    assert prop(create, "name")["maxLength"] == limits.COMMAND_NAME
    assert prop(option, "name")["maxLength"] == limits.COMMAND_NAME
    assert prop(create, "description")["maxLength"] == limits.COMMAND_DESCRIPTION
    assert prop(option, "description")["maxLength"] == limits.COMMAND_DESCRIPTION
    assert prop(create, "options")["maxItems"] == limits.COMMAND_OPTIONS
    assert prop(option, "choices")["maxItems"] == limits.OPTION_CHOICES
    assert prop(option, "max_length")["maximum"] == limits.OPTION_STRING_LENGTH
    assert prop(option, "min_length")["maximum"] == limits.OPTION_STRING_LENGTH


def test_limits_the_spec_states_too_loosely_match_the_stand_in() -> None:
    """Content (spec 4,000), choice values (spec 6,000), command count (spec 130 in all)."""
    assert prop("MessageCreateRequest", "content")["maxLength"] > limits.CONTENT
    assert limits.CONTENT == rules_messages.CONTENT
    choice_value = prop("ApplicationCommandOptionStringChoice", "value")["maxLength"]
    assert choice_value > limits.CHOICE_VALUE
    assert limits.CHOICE_VALUE == validate.CHOICE_VALUE
    spec_doc = spec.load()
    assert spec_doc is not None
    put = spec_doc.document["paths"]["/applications/{application_id}/commands"]["put"]
    most = put["requestBody"]["content"]["application/json"]["schema"]["maxItems"]
    assert most >= limits.CHAT_INPUT_COMMANDS + 2 * limits.CONTEXT_MENU_COMMANDS
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

"""The one logging setup: every entry point's root handlers hide the token."""

from __future__ import annotations

import io
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from bot.logs import RedactingFormatter, redact, setup_logging


@contextmanager
def clean_root() -> Iterator[logging.Logger]:
    """The root logger without handlers (pytest's capture too), restored afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    formatters = {h: h.formatter for h in handlers}
    for handler in handlers:
        root.removeHandler(handler)
    try:
        yield root
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in handlers:
            handler.setFormatter(formatters[handler])
            root.addHandler(handler)
        root.setLevel(level)


def _record(msg: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("x", logging.WARNING, __file__, 1, msg, args, None)


def test_redacting_formatter_hides_the_token_in_messages_and_tracebacks() -> None:
    formatter = RedactingFormatter(logging.Formatter("%(message)s"), ["s3cr3t.token"])
    assert formatter.format(_record("token is %s", "s3cr3t.token")) == "token is [token]"
    try:
        raise ValueError("bad s3cr3t.token")
    except ValueError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "boom", (), sys.exc_info())
    text = formatter.format(record)
    assert "ValueError" in text
    assert "s3cr3t.token" not in text


def test_plain_setup_writes_level_name_message_to_the_stream() -> None:
    with clean_root() as root:
        stream = io.StringIO()
        setup_logging(logging.INFO, stream=stream, secrets=["tok.en"])
        logging.getLogger("bot.x").info("hello %s", "tok.en")
        assert stream.getvalue() == "INFO bot.x: hello [token]\n"
        assert root.level == logging.INFO


def test_bot_setup_uses_discords_handler_and_redacts() -> None:
    with clean_root() as root:
        stream = io.StringIO()
        setup_logging(logging.INFO, stream=stream, secrets=["tok.en"], colour=True)
        logging.getLogger("bot.x").warning("leak %s", "tok.en")
        assert len(root.handlers) == 1
        assert "leak [token]" in stream.getvalue()
        assert "tok.en" not in stream.getvalue()


def test_secrets_read_after_setup_are_added() -> None:
    with clean_root():
        stream = io.StringIO()
        setup_logging(logging.WARNING, stream=stream, secrets=["first"])
        redact(["second", ""])
        logging.getLogger("bot.x").warning("%s %s", "first", "second")
        assert stream.getvalue() == "WARNING bot.x: [token] [token]\n"

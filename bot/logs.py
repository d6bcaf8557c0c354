"""The process's one logging setup: the bot, the console, the CLI and `--check` all call it.

Why one place: each entry point used to configure the root logger its own way, so a line looked
different (and the token guard applied) depending on how the bot was started. Every handler on
the root logger is wrapped in `RedactingFormatter`, so a secret that reaches a message or a
traceback is printed as "[token]", whichever entry point is running.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from typing import TextIO

FORMAT = "%(levelname)s %(name)s: %(message)s"


class RedactingFormatter(logging.Formatter):
    """Wraps another formatter and replaces every secret in the formatted line."""

    def __init__(self, inner: logging.Formatter | None, secrets: Iterable[str]) -> None:
        super().__init__()
        self.inner = inner or logging.Formatter(FORMAT)
        self.secrets = [s for s in secrets if s]

    def format(self, record: logging.LogRecord) -> str:
        text = self.inner.format(record)
        for secret in self.secrets:
            text = text.replace(secret, "[token]")
        return text


def setup_logging(
    level: int,
    *,
    stream: TextIO | None = None,
    secrets: Iterable[str] = (),
    colour: bool = False,
) -> None:
    """A root handler on `stream` (stderr by default) at `level`, redacting `secrets`.

    `colour` (the running bot) uses discord.py's handler, coloured on a terminal, like its own
    examples; the console and the CLI keep plain `LEVEL name: message` lines and never import
    discord.py for it. Like `logging.basicConfig`, the plain form leaves a root logger that
    already has handlers (a test runner's) as it is, but for the redaction.
    """
    if colour:
        import discord.utils  # only the bot pays for importing discord.py

        discord.utils.setup_logging(
            handler=logging.StreamHandler(stream or sys.stderr), level=level, root=True
        )
    else:
        logging.basicConfig(level=level, format=FORMAT, stream=stream or sys.stderr)
    redact(secrets)


def redact(secrets: Iterable[str]) -> None:
    """Hide `secrets` in what every root handler prints (also for secrets read after setup)."""
    words = [s for s in secrets if s]
    for handler in logging.getLogger().handlers:
        current = handler.formatter
        if isinstance(current, RedactingFormatter):
            current.secrets = list(dict.fromkeys([*current.secrets, *words]))
        else:
            handler.setFormatter(RedactingFormatter(current, words))

"""pytest plugin: across the whole test run, no log record may contain a test token.

Enabled from tests/conftest.py with `pytest_plugins = ["tests.token_guard"]`. A handler on the
root logger sees every record at DEBUG from the `discord` and `bot` loggers (their level is
lowered for the session so discord.py's debug lines, which include gateway payloads, are
produced) and checks the message, its arguments and any traceback. At session end a leak fails
the run and names the logger and the first characters around the leak.
"""

from __future__ import annotations

import logging
import traceback

import pytest

from tests.app.helpers import TOKEN

SECRETS = {TOKEN, "Sup3rSecretValue"}  # the whole token and its distinctive middle part
GUARDED_LOGGERS = ("discord", "bot", "tests")


class TokenGuard(logging.Handler):
    """Records every log line that mentions a secret; never formats anything it keeps."""

    def __init__(self, secrets: set[str]) -> None:
        super().__init__(level=logging.DEBUG)
        self.secrets = secrets
        self.leaks: list[str] = []
        self.seen = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.seen += 1
        try:
            text = record.getMessage()
        except (TypeError, ValueError):
            text = f"{record.msg} {record.args}"
        if record.exc_info and record.exc_info[1] is not None:
            text += "".join(traceback.format_exception(*record.exc_info))
        if record.exc_text:
            text += record.exc_text
        for secret in self.secrets:
            if secret in text:
                at = text.index(secret)
                where = text[max(0, at - 60) : at].replace(secret, "[token]")
                self.leaks.append(f"{record.name} ({record.levelname}): …{where}[TOKEN]")


_guard = TokenGuard(SECRETS)
_saved: dict[str, int] = {}


def pytest_configure(config: pytest.Config) -> None:
    logging.getLogger().addHandler(_guard)
    for name in GUARDED_LOGGERS:
        logger = logging.getLogger(name)
        _saved[name] = logger.level
        logger.setLevel(logging.DEBUG)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    logging.getLogger().removeHandler(_guard)
    for name, level in _saved.items():
        logging.getLogger(name).setLevel(level)
    if _guard.leaks:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = [
            f"token_guard: {len(_guard.leaks)} log record(s) contained a test token:",
            *_guard.leaks[:10],
        ]
        if reporter is not None:
            reporter.write_line("\n".join(lines), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def guard() -> TokenGuard:
    """The session's guard (tests assert it is installed and catches a leak)."""
    return _guard

"""`python -m bot`: the CLI commands, or (with no command) the bot itself."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from bot.cli import main as cli_main

    return cli_main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    raise SystemExit(main())

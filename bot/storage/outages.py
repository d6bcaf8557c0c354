"""A database that cannot be reached, told from a bug: what the daily scheduler and the fleet's
refresh (bot/sources/shared.py) wait out with one warning line, never a traceback."""

from __future__ import annotations

__all__ = ["database_unreachable"]


def database_unreachable(exc: BaseException) -> bool:
    """True for a database driver's OperationalError: PEP 249's error "related to the
    database's operation and not necessarily under the control of the programmer" (a dropped
    connection, a server that is gone, psycopg's pool timing out, a SQLite disk error).

    Matched by name, as every PEP 249 driver names it, so this package imports no driver. It is
    an outage to wait out, not a bug: one warning line, no traceback."""
    return any(cls.__name__ == "OperationalError" for cls in type(exc).__mro__)

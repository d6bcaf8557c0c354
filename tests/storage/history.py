"""A server's whole pick history, read straight from the picks table.

Only the tests need every pick at once (the bot reads one day's pick at a time), so this lives
here rather than on `Storage`.
"""

from __future__ import annotations

from bot.daily.records import Pick
from bot.storage.rows import from_row
from bot.storage.store import Storage


async def picks(storage: Storage, guild_id: int) -> list[Pick]:
    """Every pick of `guild_id`, oldest first."""
    return await storage.run(
        lambda c: [
            from_row(Pick, row)
            for row in c.execute(
                "SELECT * FROM picks WHERE guild_id = ? ORDER BY local_date", (guild_id,)
            )
        ],
        write=False,
    )

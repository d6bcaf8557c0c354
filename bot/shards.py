"""Shard ranges: which servers a process serves when the bot runs as several processes.

Discord routes a server to shard `(guild_id >> 22) % shard_count`, and a process opened with
`AutoShardedBot(shard_ids=…, shard_count=…)` only hears about the servers of its shards. The
paper of the day must follow the same rule, or a process would post for servers it cannot see
(and the process that can see them would post too). One formula, used by the bot and the tests.

Settings: SHARD_COUNT / SHARD_IDS in the environment (the convention of hosts that start one
worker per range), else `[discord] shard_count` / `shard_ids`. The environment wins.
"""

from __future__ import annotations

from collections.abc import Iterable

SHARD_COUNT_ENV = "SHARD_COUNT"
SHARD_IDS_ENV = "SHARD_IDS"
MAX_SHARDS = 100_000


class ShardError(ValueError):
    """A shard setting that cannot be used; the message names the setting and the fix."""


def shard_of(guild_id: int, shard_count: int) -> int:
    """The shard Discord sends a server's events to (Discord's documented formula)."""
    return (guild_id >> 22) % shard_count


def parse_count(raw: str) -> int:
    """SHARD_COUNT: a whole number, 0 (ask Discord) to MAX_SHARDS."""
    text = raw.strip()
    if not (text.isascii() and text.isdigit()) or int(text) > MAX_SHARDS:
        raise ShardError(
            f"{SHARD_COUNT_ENV} = {raw.strip()!r} is not a shard count: use a whole number "
            f"0 to {MAX_SHARDS} (0 lets Discord choose)"
        )
    return int(text)


def parse_ids(raw: str) -> tuple[int, ...]:
    """SHARD_IDS: shard ids and ranges separated by commas or spaces, e.g. `0,1` or `4-7`."""
    ids: list[int] = []
    for part in raw.replace(",", " ").split():
        low, dash, high = part.partition("-")
        if not _digits(low) or (dash and not _digits(high)):
            raise ShardError(
                f"{SHARD_IDS_ENV} = {raw.strip()!r}: {part!r} is not a shard id; use ids and "
                "ranges such as 0,1 or 4-7"
            )
        first, last = int(low), int(high) if dash else int(low)
        if last < first:
            raise ShardError(f"{SHARD_IDS_ENV}: the range {part!r} runs backwards")
        if last - first >= MAX_SHARDS:
            raise ShardError(f"{SHARD_IDS_ENV}: the range {part!r} is larger than {MAX_SHARDS}")
        ids.extend(range(first, last + 1))
    return tuple(ids)


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def check_shards(count: int, ids: Iterable[object], where: str) -> tuple[int, ...]:
    """`ids` as ints once they make sense with `count`; `where` names the settings in errors.

    Refused: ids without a count (Discord needs both to route), ids outside 0..count-1 (Discord
    closes such a connection with 4010 Invalid shard), and an id given twice.
    """
    checked: list[int] = []
    for value in ids:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ShardError(f"{where}: shard ids must be whole numbers, got {value!r}")
        checked.append(value)
    if not checked:
        return ()
    if count == 0:
        raise ShardError(
            f"{where}: shard ids need a shard count (set {SHARD_COUNT_ENV} or "
            "[discord] shard_count): every process must agree on it"
        )
    outside = sorted({i for i in checked if not 0 <= i < count})
    if outside:
        raise ShardError(
            f"{where}: shard id {outside[0]} is outside 0 to {count - 1} (shard count {count})"
        )
    twice = sorted({i for i in checked if checked.count(i) > 1})
    if twice:
        raise ShardError(f"{where}: shard id {twice[0]} is listed twice")
    return tuple(checked)


def describe(count: int, ids: Iterable[int]) -> str:
    """The shard range of a process in words (`--check`, logs)."""
    chosen = list(ids)
    if not count:
        return "all shards of the count Discord recommends"
    if not chosen:
        return f"all {count} shards"
    return f"shards {', '.join(map(str, chosen))} of {count} (the daily posts of their servers)"

"""Shard settings (SHARD_COUNT / SHARD_IDS, `[discord]`) and the shard formula (bot/shards.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import PROJECT_ROOT, ConfigError, Settings, load_settings
from bot.shards import parse_ids, shard_of


def settings_with(tmp_path: Path, text: str, env: dict[str, str]) -> Settings:
    path = tmp_path / "settings.toml"
    path.write_text(text, encoding="utf-8")
    return load_settings(path, env=env)


def test_defaults_run_every_shard_discord_chooses() -> None:
    settings = load_settings(env={})
    assert (settings.discord.shard_count, settings.discord.shard_ids) == (0, ())


def test_environment_wins_over_the_settings_file(tmp_path: Path) -> None:
    text = "[discord]\nshard_count = 2\nshard_ids = [1]\n"
    assert settings_with(tmp_path, text, {}).discord.shard_ids == (1,)
    settings = settings_with(tmp_path, text, {"SHARD_COUNT": "8", "SHARD_IDS": "0, 2-4,7"})
    assert (settings.discord.shard_count, settings.discord.shard_ids) == (8, (0, 2, 3, 4, 7))
    # SHARD_COUNT alone keeps the file's ids when they fit the new count.
    assert settings_with(tmp_path, text, {"SHARD_COUNT": "4"}).discord.shard_ids == (1,)


@pytest.mark.parametrize(
    ("text", "env", "message"),
    [
        ("", {"SHARD_COUNT": "four"}, r"SHARD_COUNT = 'four' is not a shard count"),
        ("", {"SHARD_COUNT": "-1"}, r"SHARD_COUNT = '-1' is not a shard count"),
        ("", {"SHARD_COUNT": "100001"}, "0 to 100000"),
        ("", {"SHARD_COUNT": "4", "SHARD_IDS": "0;1"}, r"'0;1' is not a shard id"),
        ("", {"SHARD_COUNT": "4", "SHARD_IDS": "3-1"}, "runs backwards"),
        ("", {"SHARD_COUNT": "4", "SHARD_IDS": "4"}, r"shard id 4 is outside 0 to 3"),
        ("", {"SHARD_COUNT": "4", "SHARD_IDS": "1,0-2"}, "shard id 1 is listed twice"),
        ("", {"SHARD_IDS": "0,1"}, "shard ids need a shard count"),
        ("[discord]\nshard_ids = [0]\n", {}, r"\[discord\] shard_ids: shard ids need a"),
        ("[discord]\nshard_count = 2\nshard_ids = ['a']\n", {}, "must be whole numbers"),
        ("[discord]\nshard_count = 2\nshard_ids = [true]\n", {}, "must be whole numbers"),
        ("[discord]\nshard_count = 2\nshard_ids = 1\n", {}, "shard_ids must be a list"),
        ("[discord]\nshard_count = 2\n", {"SHARD_IDS": "2"}, r"shard count 2\)"),
    ],
)
def test_bad_shard_settings_are_one_clear_line(
    tmp_path: Path, text: str, env: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        settings_with(tmp_path, text, env)
    assert "\n" not in str(caught.value)


def test_the_bot_refuses_bad_shard_ids_with_one_line_and_exit_1(tmp_path: Path) -> None:
    """The real entry point, as a host starts a worker: settings problems exit 1 (README)."""
    (tmp_path / "settings.toml").write_text("", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "bot"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **os.environ,
            "PYTHONPATH": str(PROJECT_ROOT),
            "PAPERBOT_CONFIG": str(tmp_path / "settings.toml"),
            "SHARD_COUNT": "4",
            "SHARD_IDS": "3,4",
            "DISCORD_TOKEN": "not-used",
        },
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "error: SHARD_COUNT / SHARD_IDS: shard id 4 is outside 0 to 3 (shard count 4)"
    ]


def test_shard_of_is_discords_formula() -> None:
    # Discord's documented example: (guild_id >> 22) % num_shards.
    guild_id = 197038439483310086
    assert shard_of(guild_id, 1) == 0
    assert shard_of(guild_id, 4) == (197038439483310086 >> 22) % 4
    assert [shard_of(n << 22, 4) for n in range(6)] == [0, 1, 2, 3, 0, 1]
    assert parse_ids("") == ()


def test_check_names_the_shard_range(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from bot.app import check
    from bot.papers.corpus import CorpusError
    from bot.search.engine import SearchEngine

    settings = settings_with(
        tmp_path,
        f'[storage]\nurl = "{tmp_path / "db.sqlite3"}"\n',
        {"SHARD_COUNT": "4", "SHARD_IDS": "2-3"},
    )

    def no_corpus(cls: type, settings: Settings) -> None:
        raise CorpusError("not read by this test")

    monkeypatch.setattr(SearchEngine, "load", classmethod(no_corpus))
    out = io.StringIO()
    check.run_check(settings, out)
    assert "ok   shards: shards 2, 3 of 4 (the daily posts of their servers)\n" in out.getvalue()

from pathlib import Path

import pytest

from bot.config import PROJECT_ROOT, ConfigError, load_settings, read_secrets


def test_defaults_point_into_the_project():
    settings = load_settings(env={})
    assert settings.corpus.files == (PROJECT_ROOT / "data" / "icml2026.jsonl",)
    assert settings.search.k1 == 1.5
    assert settings.search.b == 0.75
    assert settings.secrets.discord_token is None


def test_relative_paths_resolve_against_the_project_not_cwd(tmp_path, monkeypatch):
    folder = tmp_path / "config"
    folder.mkdir()
    path = folder / "settings.toml"
    path.write_text(
        '[corpus]\nfiles = ["papers.jsonl"]\n[storage]\ndatabase = "s/db.sqlite3"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir("/")
    settings = load_settings(path, env={})
    assert settings.corpus.files == (tmp_path / "papers.jsonl",)
    assert Path(settings.storage.database) == tmp_path / "s" / "db.sqlite3"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[search]\nk1 = 'high'\n", "k1 must be a number"),
        ("[search]\nkone = 1\n", "unknown key"),
        ("[nope]\n", "unknown section"),
        ("[corpus\n", "settings.toml"),
    ],
)
def test_bad_config_is_a_clear_error(tmp_path, text, message):
    path = tmp_path / "settings.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_settings(path, env={})


def test_secrets_never_show_in_repr():
    secrets = read_secrets({"DISCORD_TOKEN": "abc.def.ghi", "DISCORD_GUILD_ID": "123"})
    assert secrets.discord_token == "abc.def.ghi"
    assert secrets.guild_id == 123
    assert "abc.def.ghi" not in repr(secrets)
    with pytest.raises(ConfigError, match="DISCORD_GUILD_ID"):
        read_secrets({"DISCORD_GUILD_ID": "my-server"})

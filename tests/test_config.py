from pathlib import Path

import pytest

from bot.config import PROJECT_ROOT, ConfigError, load_settings, read_secrets


def test_defaults_point_into_the_project():
    settings = load_settings(env={})
    assert settings.corpus.files == (PROJECT_ROOT / "data" / "icml2026.jsonl",)
    assert settings.search.k1 == 1.0
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


# -- issue 12 items 12-13: ranges, secrets never echoed, clear one-line errors ---------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[discord]\nshard_count = -1\n", r"\[discord\] shard_count = -1 is out of range"),
        ("[daily]\nretry_base_seconds = 0\n", r"\[daily\] retry_base_seconds = 0.0 is out"),
        ("[search]\nk1 = -1\n", r"\[search\] k1 = -1.0 is out of range"),
        ("[search]\nk1 = nan\n", r"\[search\] k1 = nan is out of range"),
        ("[search]\nb = inf\n", r"\[search\] b = inf is out of range"),
        ("[search]\nb = 1.5\n", r"\[search\] b = 1.5 is out of range: use 0.0 to 1.0"),
        ("[search]\npage_size = 0\n", "page_size"),
        ("[corpus]\nreload_max_loss = 2\n", "reload_max_loss"),
        ("[daily]\nretry_base_seconds = 60\nretry_max_seconds = 30\n", "at least"),
        # [sources] is read apart from the other sections; its numbers are checked the same way.
        ("[sources]\nmax_retries = -1\n", r"\[sources\] max_retries = -1 is out of range"),
        ("[sources]\ntimeout_seconds = 0\n", r"\[sources\] timeout_seconds = 0.0 is out"),
        ("[sources]\nretry_base_seconds = 9\nretry_max_seconds = 3\n", r"\[sources\].*at least"),
    ],
)
def test_numeric_settings_out_of_range_are_refused(tmp_path, text, message):
    path = tmp_path / "settings.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_settings(path, env={})


def test_check_reports_an_out_of_range_setting(tmp_path):
    import argparse
    import io

    from bot.app.check import main as check

    path = tmp_path / "settings.toml"
    path.write_text("[discord]\nshard_count = -1\n", encoding="utf-8")
    out = io.StringIO()
    args = argparse.Namespace(config=path, corpus=None, verbose=False)
    assert check(args, out=out, err=io.StringIO()) == 1
    assert "FAIL settings: [discord] shard_count = -1 is out of range" in out.getvalue()


TOKEN_LIKE = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GAbCdE.abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.mark.parametrize("name", ["DISCORD_GUILD_ID", "DISCORD_OWNER_IDS"])
@pytest.mark.parametrize("value", [TOKEN_LIKE, "²", "١٢٣", "99999999999999999999999"])
def test_bad_ids_are_one_clear_line_that_never_echoes_the_value(name, value):
    with pytest.raises(ConfigError) as caught:
        read_secrets({name: value})
    message = str(caught.value)
    assert name in message
    assert "digits 0-9" in message
    assert value not in message
    assert "\n" not in message


def test_dotenv_that_is_not_utf8_is_a_clear_error(tmp_path, monkeypatch):
    from bot.config import read_dotenv

    env = tmp_path / ".env"
    env.write_bytes(b"DISCORD_OWNER_IDS=1\nDISCORD_TOKEN=secr\xe9t\xff\n")
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    with pytest.raises(ConfigError, match=r"\.env:2: not UTF-8 text") as caught:
        read_dotenv(env)
    assert "secr" not in str(caught.value)


def test_default_run_with_a_bad_dotenv_prints_one_error_line(tmp_path):
    """The real entry point, as a user runs it, from a copy of the project with a bad .env."""
    import shutil
    import subprocess
    import sys

    root = tmp_path / "project"
    shutil.copytree(PROJECT_ROOT / "bot", root / "bot")
    (root / "config").mkdir()
    (root / ".env").write_bytes(b"DISCORD_TOKEN=\xff\xfe\n")
    done = subprocess.run(
        [sys.executable, "-m", "bot", "--check"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)},
    )
    assert "Traceback" not in done.stderr + done.stdout
    assert done.returncode == 1
    assert ".env:1: not UTF-8 text" in done.stdout + done.stderr


def test_sources_defaults_env_overrides_and_jobs(tmp_path):
    settings = load_settings(env={})
    assert settings.sources.openreview_url == "https://api2.openreview.net"
    assert settings.sources.arxiv_url == "https://export.arxiv.org/api/query"
    assert settings.sources.arxiv_interval_seconds >= 3.0
    assert settings.sources.fetch == ()
    path = tmp_path / "settings.toml"
    path.write_text(
        '[corpus]\nfiles = ["seed.jsonl"]\n'
        '[sources]\nrefresh_at = ["06:30"]\n'
        '[[sources.fetch]]\nkind = "openreview"\nvenue = "ICML.cc/2026/Conference"\n'
        'out = "seed.jsonl"\n'
        '[[sources.fetch]]\nkind = "arxiv"\ncategories = ["cs.LG"]\ndays = 3\n'
        'out = "arxiv.jsonl"\n',
        encoding="utf-8",
    )
    env = {"PAPERBOT_OPENREVIEW_URL": "http://127.0.0.1:9", "PAPERBOT_ARXIV_URL": "http://x/q"}
    settings = load_settings(path, env=env)
    assert settings.sources.openreview_url == "http://127.0.0.1:9"
    assert settings.sources.arxiv_url == "http://x/q"
    assert settings.sources.refresh_at == ("06:30",)
    orv, arx = settings.sources.fetch
    assert (orv.kind, orv.venue, orv.out) == (
        "openreview",
        "ICML.cc/2026/Conference",
        tmp_path / "seed.jsonl",
    )
    assert (arx.categories, arx.days) == (("cs.LG",), 3)
    # A fetched file joins the corpus once it exists, and only once.
    assert settings.corpus.files == (tmp_path / "seed.jsonl",)
    (tmp_path / "arxiv.jsonl").write_text("", encoding="utf-8")
    assert load_settings(path, env={}).corpus.files == (
        tmp_path / "seed.jsonl",
        tmp_path / "arxiv.jsonl",
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[sources]\nrefresh_at = ["25:00"]\n', "refresh_at takes UTC times"),
        ('[[sources.fetch]]\nkind = "rss"\nout = "x"\n', "kind must be one of"),
        ('[[sources.fetch]]\nkind = "arxiv"\nout = "x"\n', "needs categories"),
        ('[[sources.fetch]]\nkind = "openreview"\nvenue = "V"\n', "needs out"),
        (
            '[[sources.fetch]]\nkind = "arxiv"\ncategories = ["cs.LG"]\nout = "x"\ndays = 0\n',
            "days",
        ),
        ('[[sources.fetch]]\nkind = "paperlist"\nurl = "u"\nout = "x"\nwhen = 1\n', "unknown key"),
        ("[sources]\nopenreview_urll = 'x'\n", "unknown key"),
    ],
)
def test_bad_sources_are_clear_errors(tmp_path, text, message):
    path = tmp_path / "settings.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_settings(path, env={})


# -- issue 24 point 3: msgspec checks each table against sections.py; one line per refusal ----


def _refusal(tmp_path, text):
    path = tmp_path / "settings.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env={})
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            "[search]\nkone = 1\n",
            "[search] has unknown key kone; the keys are k1, b, epsilon, idf, title_weight, "
            "compound_weight, prf_docs, prf_terms, prf_weight, min_score_ratio, "
            "proximity_weight, similar_terms, page_size",
        ),
        (
            "[storage]\ndatabse = 'x'\n",
            "[storage] has unknown key databse; the keys are database (or url), backup_dir, "
            "backup_hours, backup_keep, timeout_seconds",
        ),
        (
            '[[sources.fetch]]\nkind = "arxiv"\ncategories = ["cs.LG"]\nout = "a"\n'
            '[[sources.fetch]]\nkind = "paperlist"\nurl = "u"\nout = "x"\nwhen = 1\n',
            "[[sources.fetch]] #2 has unknown key when; the keys are kind, out, venue, "
            "categories, days, url",
        ),
    ],
)
def test_unknown_key_is_refused_naming_it_and_the_keys_allowed(tmp_path, text, line):
    assert _refusal(tmp_path, text) == line


def test_unknown_key_never_echoes_its_value(tmp_path):
    """A token pasted into settings.toml under a made-up key must not reach a log."""
    message = _refusal(tmp_path, f'[discord]\ntoken = "{TOKEN_LIKE}"\n')
    assert message.startswith("[discord] has unknown key token; the keys are ephemeral, ")
    assert TOKEN_LIKE not in message


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("[search]\nk1 = 'high'\n", "[search] k1 must be a number, got 'high'"),
        (
            "[search]\ntitle_weight = true\n",
            "[search] title_weight must be a whole number, got true",
        ),
        ("[search]\npage_size = 2.5\n", "[search] page_size must be a whole number, got 2.5"),
        ('[discord]\nephemeral = "yes"\n', "[discord] ephemeral must be true or false, got 'yes'"),
        ('[corpus]\nfiles = "a.jsonl"\n', "[corpus] files must be a list of paths, got 'a.jsonl'"),
        ('[corpus]\nfiles = ["a", 1]\n', "[corpus] files must be paths, got 1 (item 2)"),
        ("[corpus]\nindex_dir = 3\n", "[corpus] index_dir must be a path, got 3"),
        # The alias is named as written.
        ("[storage]\nurl = 5\n", "[storage] url must be a string, got 5"),
        (
            '[sources]\nrefresh_at = ["06:30", "25:00"]\n',
            '[sources] refresh_at takes UTC times as HH:MM in a list, e.g. ["06:30"], '
            "got '25:00' (item 2)",
        ),
        ("search = 3\n", "[search] must be a table, got 3"),
        ("[sources]\nfetch = 3\n", "[[sources.fetch]] must be a list of tables, got 3"),
        (
            '[[sources.fetch]]\nkind = "rss"\nout = "x"\n',
            "[[sources.fetch]] #1 kind must be one of arxiv, openreview, paperlist, got 'rss'",
        ),
        (
            '[[sources.fetch]]\nkind = "openreview"\nvenue = "V"\n',
            "[[sources.fetch]] #1 needs out = a path",
        ),
    ],
)
def test_wrong_type_is_refused_naming_key_value_and_type(tmp_path, text, line):
    assert _refusal(tmp_path, text) == line


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("[search]\nk1 = -1\n", "[search] k1 = -1.0 is out of range: use 0.0 to 100.0"),
        ("[search]\nb = nan\n", "[search] b = nan is out of range: use 0.0 to 1.0"),
        ("[search]\nk1 = 1e400\n", "[search] k1 = inf is out of range: use 0.0 to 100.0"),
        (
            "[discord]\nshard_count = 100001\n",
            "[discord] shard_count = 100001 is out of range: use 0 to 100000",
        ),
        (
            "[library]\nmax_saved = 0\n",
            "[library] max_saved = 0 is out of range: use 1 to 100000",
        ),
        (
            '[[sources.fetch]]\nkind = "arxiv"\ncategories = ["cs.LG"]\nout = "x"\ndays = 0\n',
            "[[sources.fetch]] #1 days = 0 is out of range: use at least 1",
        ),
        (
            "[daily]\nretry_base_seconds = 60\nretry_max_seconds = 30\n",
            "[daily] retry_max_seconds = 30.0 must be at least retry_base_seconds = 60.0",
        ),
    ],
)
def test_out_of_range_is_refused_naming_key_value_and_range(tmp_path, text, line):
    assert _refusal(tmp_path, text) == line


def test_every_number_declares_a_range_its_default_is_in():
    """What `within` promised: no number is left unbounded, and no default breaks its own range."""
    import dataclasses

    import msgspec

    from bot.config import SourcesSettings, check_range
    from bot.config.sections import SECTIONS

    for name, cls in {**SECTIONS, "sources": SourcesSettings}.items():
        for field in msgspec.inspect.type_info(cls).fields:
            kind = field.type
            kind = kind.type if isinstance(kind, msgspec.inspect.Metadata) else kind
            if isinstance(kind, msgspec.inspect.IntType | msgspec.inspect.FloatType):
                assert None not in (kind.ge, kind.le), f"[{name}] {field.name} has no range"
                check_range(name, field.name, getattr(cls(), field.name))
        assert dataclasses.replace(cls()) == cls()


def test_check_range_is_the_same_check_as_the_file():
    from bot.config import check_range

    with pytest.raises(
        ConfigError, match=r"^\[search\] page_size = 11 is out of range: use 1 to 10$"
    ):
        check_range("search", "page_size", 11)
    check_range("search", "page_size", 10)

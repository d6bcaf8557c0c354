"""`python -m bot fetch ...` end to end against the loopback stand-ins (server in a thread,
since the command runs its own event loop), endpoints given by PAPERBOT_*_URL."""

from __future__ import annotations

import io
import json

import pytest

from bot.console.cli import main
from bot.papers.corpus import load_file
from tests.fakesources import FakeArxiv, FakeOpenReview, Fault, arxiv_entry, note


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "settings.toml"
    path.write_text(
        "[sources]\narxiv_interval_seconds = 0.05\nretry_base_seconds = 0.01\n", encoding="utf-8"
    )
    return path


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_fetch_openreview_writes_a_corpus_file(tmp_path, config, monkeypatch):
    server = FakeOpenReview([note(f"n{i}") for i in range(5)] + [note("r", "X/Rejected")])
    server.fail(Fault(429, {"Retry-After": "0"}))
    with server.in_thread() as url:
        monkeypatch.setenv("PAPERBOT_OPENREVIEW_URL", url)
        out = tmp_path / "icml2026.jsonl"
        code, stdout, stderr = run(
            "--config",
            str(config),
            "fetch",
            "openreview",
            "ICML.cc/2026/Conference",
            "--out",
            str(out),
        )
    assert code == 0, stderr
    assert "5 of 5 fetched" in stdout
    assert "5 new" in stdout
    assert "openreview ICML.cc/2026/Conference: 5/5" in stderr  # plain lines off a terminal
    assert "\r" not in stderr
    report = load_file(out)
    assert len(report.papers) == 5
    assert not report.problems
    assert report.papers[0].added is not None


def test_fetch_arxiv_with_until_and_a_bad_entry(tmp_path, config, monkeypatch):
    server = FakeArxiv(
        [
            arxiv_entry("2611.00001", categories=("cs.CL",)),
            {"raw": "<entry><id>nope</id></entry>"},
            arxiv_entry("2612.00001", published="2026-12-05T00:00:00Z"),
        ]
    )
    with server.in_thread() as url:
        monkeypatch.setenv("PAPERBOT_ARXIV_URL", url + "/api/query")
        out = tmp_path / "arxiv-ml.jsonl"
        argv = ["--config", str(config), "fetch", "arxiv", "cs.LG", "cs.CL"]
        code, _stdout, stderr = run(
            *argv, "--since", "2026-11-01", "--until", "2026-11-30", "--out", str(out)
        )
    assert code == 0, stderr
    assert "skipped: arXiv result" in stderr
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["arxiv:2611.00001"]


def test_fetch_reports_failures_without_a_traceback(tmp_path, config, monkeypatch):
    server = FakeArxiv([arxiv_entry("2611.00001")])
    server.fail(*[Fault(503)] * 10)
    with server.in_thread() as url:
        monkeypatch.setenv("PAPERBOT_ARXIV_URL", url + "/api/query")
        code, _, stderr = run(
            "--config",
            str(config),
            "fetch",
            "arxiv",
            "cs.LG",
            "--since",
            "2026-11-01",
            "--out",
            str(tmp_path / "a.jsonl"),
        )
    assert code == 1
    assert "HTTP 503 after 6 attempts" in stderr
    assert "run the same command to resume" in stderr
    assert "Traceback" not in stderr
    code, _, stderr = run(
        "--config", str(config), "fetch", "arxiv", "cs LG", "--since", "2026-11-01", "--out", "x"
    )
    assert code == 2
    assert "not an arXiv category" in stderr


def test_fetch_paperlist_from_a_url(tmp_path, config):
    from aiohttp import web

    from tests.fakesources import LoopbackServer

    body = json.dumps([{"id": "abc", "title": "A paper", "abstract": "Words.", "status": "Poster"}])

    class Lists(LoopbackServer):
        def app(self):
            app = web.Application()

            async def serve(request):
                if request.match_info["name"] != "colm2025.json":
                    return web.Response(status=404, text="404: Not Found")
                return web.Response(text=body, content_type="text/plain")

            app.router.add_get("/papercopilot/paperlists/main/colm/{name}", serve)
            return app

    server = Lists()
    with server.in_thread() as url:
        base = url + "/papercopilot/paperlists/main/colm/"
        out = tmp_path / "colm2025.json"
        code, stdout, stderr = run(
            "--config", str(config), "fetch", "paperlist", base + "colm2025.json", "--out", str(out)
        )
        assert code == 0, stderr
        assert "1 new" in stdout
        code, _, stderr = run(
            "--config",
            str(config),
            "fetch",
            "paperlist",
            base + "nope.json",
            "--out",
            str(tmp_path / "n.json"),
        )
    assert load_file(out).papers[0].venue == "COLM 2025"
    assert code == 1
    assert "HTTP 404" in stderr
    assert not (tmp_path / "n.json").exists()


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_progress_bar(tmp_path, config, monkeypatch):
    server = FakeOpenReview([note(f"n{i}") for i in range(3)])
    with server.in_thread() as url:
        monkeypatch.setenv("PAPERBOT_OPENREVIEW_URL", url)
        out, err = io.StringIO(), Terminal()
        argv = ["--config", str(config), "fetch", "openreview", "ICML.cc/2026/Conference"]
        code = main([*argv, "--out", str(tmp_path / "o.jsonl")], out=out, err=err)
    assert code == 0
    bar = err.getvalue()
    assert "\r" in bar  # tqdm redraws in place
    assert "3/3" in bar
    assert "papers to fetch" not in bar  # the plain-line form is for logs only

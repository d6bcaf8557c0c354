"""The console's `/daily set … pool:foryou` (issue 29): its server's For you pool is ranked
from the console reader's `/save`s by `/foryou`'s model, says when it falls back, and refuses
an unknown pool with Discord's words. Both backends, through `Console.run`."""

from __future__ import annotations

from bot.foryou import Signals, new_positions, recommend
from bot.search.engine import SearchEngine
from tests.console.test_daily import START, ManualClock, Terminal


def test_foryou_pool_in_the_console(icml_engine: SearchEngine, database_url: str) -> None:
    term = Terminal(icml_engine, database_url, ManualClock(START))
    out = term.session("/daily set 09:00 Europe/Paris pool:foryou", "/daily status")
    assert "For you needs 3 papers saved from this server and has 0" in out
    assert "Saves only" in out

    saved = icml_engine.matching_ids("optimal transport")[:3]
    ranked, _profile = recommend(
        icml_engine, Signals(tuple(sorted(saved)), ()), new_positions(icml_engine, START)
    )
    out = term.session(
        *(f"/save {pid}" for pid in saved),
        "/daily set 09:00 Europe/Paris pool:foryou",
        "/daily status",
        "/daily set 09:00 UTC pool:mine",
    )
    assert "new papers that match the 3 papers saved here" in out
    assert "Normal pool:" in out
    assert "use `all`, `new` or `foryou`" in out
    # /today was drawn in the first session, before the saves: the day's paper stays.
    tomorrow = START.replace(day=2)
    term.clock.set(tomorrow)
    out = term.session("/today")
    assert icml_engine.paper(ranked[0][0]).title in out

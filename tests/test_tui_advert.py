"""A table picked from the LAN list must be the one advertised (issue 12):
anyone on the LAN can advertise any address, so the join requires of the
lobby it reaches the advert's table id and host key fingerprint, and refuses
with a clear message, changing nothing, when another table answers there.

Fake adverts (no mDNS) whose address is a real host's lobby on 127.0.0.1,
picked on the home screen; the choice runs as the real ``nodealer join``
command (headless) and as the join app."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from p2p.discovery import Change, TableAd
from p2p.identity import Identity
from table.seating import GameSettings, host_table
from tests.test_tui_lobby import LOCAL, SCALE, FakeLan, Peer, _bot, _lan_rows, _until
from tui.cli import choice_argv, main
from tui.screens.lobby import LobbyScreen
from tui.table_app import JoinPlan, LanHomeApp, TableApp


def _picked(ad: TableAd) -> str:
    """What the home screen hands the command for this advert, picked."""
    lan = FakeLan()
    app = LanHomeApp("me", [("bluff", 2)], [], lan=lan.open)

    async def run() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await _until(pilot, lambda: lan.token is not None, "the browser", 10)
            lan.send(Change.APPEARED, ad)
            await _until(pilot, lambda: len(_lan_rows(app)) == 1, "the table", 10)
            await pilot.press("l", "home", "enter")
            await pilot.pause(0.2)

    asyncio.run(run())
    assert app.return_value is not None
    return app.return_value


@pytest.mark.slow
def test_a_listed_table_answered_by_another_host_is_refused_and_nothing_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    host_id, stranger = Identity.generate(), Identity.generate()
    settings = GameSettings("bluff", 2, None, False, "Hal's table")
    opened = threading.Event()
    lobbies: list[Any] = []

    def on_lobby(lobby: Any) -> None:
        lobbies.append(lobby)
        opened.set()

    host = Peer(
        lambda: host_table(
            host_id, settings, home=tmp_path / "hal", nickname="hal", host=LOCAL,
            player=_bot()(settings, 0), time_scale=SCALE, on_lobby=on_lobby,
        )
    )  # fmt: skip
    jo_home = tmp_path / "jo"
    monkeypatch.setenv("NODEALER_HOME", str(jo_home))
    try:
        assert opened.wait(30), host.error
        lobby = lobbies[0]
        real_id, real_fp = lobby.table_id, host_id.public.fingerprint

        def advert(table_id: bytes, fingerprint: str) -> TableAd:
            return TableAd(table_id, "bluff", 1, 2, fingerprint, LOCAL, lobby.port,
                           name="Hal's table", host_name="hal", proven=False)  # fmt: skip

        def join(ad: TableAd) -> int:
            argv = choice_argv(_picked(ad))
            return main([*argv, "--headless", "--home", str(jo_home), "--interface", LOCAL,
                         "--time-scale", str(SCALE)])  # fmt: skip

        other_table = bytes(reversed(real_id))
        cases = [
            (advert(other_table, real_fp), f"not the advertised {other_table.hex()[:16]}"),
            (advert(real_id, stranger.public.fingerprint),
             f"hosted by {real_fp}, not the advertised {stranger.public.fingerprint}"),
        ]  # fmt: skip
        for ad, why in cases:
            assert join(ad) == 2
            err = capsys.readouterr().err
            assert why in err and "nothing was joined" in err, err
            assert lobby.state.taken == 1 and len(lobby.state.players) == 1  # the host: unchanged
            assert not list(jo_home.glob("tables/*"))  # and here: no table, no log

        # the join app refuses the same way, and says so on the waiting-room screen
        app = TableApp(
            JoinPlan(LOCAL, lobby.port, LOCAL, other_table, real_fp), identity=stranger,
            home=jo_home, nickname="jo",
        )  # fmt: skip

        async def run() -> None:
            async with app.run_test(size=(80, 24)) as pilot:
                await _until(pilot, lambda: app.problem is not None, "the refusal", 30)
                assert isinstance(app.screen, LobbyScreen)
                await pilot.press("ctrl+q")

        asyncio.run(run())
        assert app.exit_code == 2 and "not the advertised" in (app.problem or "")
        assert lobby.state.taken == 1 and not list(jo_home.glob("tables/*"))

        # the advert that tells the truth is joined and played to a clean end
        assert join(advert(real_id, real_fp)) == 0, capsys.readouterr()
        assert len(list(jo_home.glob("tables/*/log"))) == 1
        assert host.finish(), "the host's seat did not end by itself"
    finally:
        host.stop()
    assert host.error is None and host.result is not None and host.result.result.clean


def test_join_goes_back_only_to_the_held_table_it_names() -> None:
    """Without --connect, `join` goes back to a held table, but never to one
    another id or host than --table-id / --host-fingerprint ask for (review
    of 2026-12-01: it went back to any held table, ignoring both)."""
    import argparse
    from types import SimpleNamespace

    from p2p.envelope import TableSpec
    from tui.lan import _is_asked_for

    host, me = Identity.generate(), Identity.generate()
    held = SimpleNamespace(spec=TableSpec(bytes.fromhex("ab" * 16), (host.public, me.public)))

    def asked(table=None, table_id=None, fp=None) -> bool:
        args = argparse.Namespace(table=table, table_id=table_id, host_fingerprint=fp)
        return _is_asked_for(held, args)

    assert asked() and asked(table="abab") and asked(table_id=bytes.fromhex("ab" * 16))
    assert asked(fp=host.public.fingerprint, table_id=bytes.fromhex("ab" * 16))
    assert not asked(table="11")
    assert not asked(table_id=bytes.fromhex("11" * 16))
    assert not asked(fp=me.public.fingerprint)  # I hold seat 1; the host is seat 0

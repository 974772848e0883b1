"""Going back to a held table in the app (issue 12): a joiner whose seat
was cut off mid-game runs ``nodealer join`` in a terminal with no table
named; the command finds the table its store holds and opens the app at
that table (not headless), where the person plays on to the end by key
presses. The command runs as it does for a person, with the terminal and
the app's run loop injected: Textual's Pilot drives the app the command
made."""

from __future__ import annotations

import asyncio
import re
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from p2p.identity import Identity
from table.seating import GameSettings, host_table, join_table
from tests.test_tui_lobby import LOCAL, SCALE, Peer, _bot, _until, bluff_by_keys
from tui.screens.bluff import BluffScreen
from tui.screens.lobby import LobbyScreen
from tui.table_app import ResumePlan, TableApp


@pytest.mark.slow
def test_join_goes_back_to_a_held_table_in_the_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tui.cli import main

    host_id = Identity.generate()
    jo_home = tmp_path / "jo"
    jo = Identity.load_or_create(jo_home)  # the key `nodealer join` loads from its home
    settings = GameSettings("bluff", 2, None, False, "Hal's table")
    opened, moved = threading.Event(), threading.Event()
    ports: list[int] = []

    def on_lobby(lobby: Any) -> None:
        ports.append(lobby.port)
        opened.set()

    host = Peer(
        lambda: host_table(
            host_id, settings, home=tmp_path / "hal", nickname="hal", host=LOCAL,
            player=_bot()(settings, 0), time_scale=SCALE, on_lobby=on_lobby,
            duty_wait=600,  # the joiner is gone a while: not named for it
        )
    )  # fmt: skip
    events = 0

    def counted(update: Any) -> None:
        nonlocal events
        events += update.kind == "event"
        if events >= 4:
            moved.set()

    try:
        assert opened.wait(30), host.error
        first = Peer(
            lambda: join_table(
                jo, LOCAL, ports[0], home=jo_home, nickname="jo", player_for=_bot(),
                time_scale=SCALE, on_update=counted,
            )
        )  # fmt: skip
        assert moved.wait(60), first.error
        # the joiner's seat is cut off mid-game (its log and secrets stay)
        assert first.stop(), "the joiner's first seat did not end"
        assert first.result is None

        apps: list[TableApp] = []

        def run_in_pilot(app: TableApp) -> None:
            apps.append(app)
            asyncio.run(_play_to_the_end(app))

        monkeypatch.setenv("NODEALER_HOME", str(jo_home))
        monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
        monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
        monkeypatch.setattr(TableApp, "run", run_in_pilot)
        code = main(["join", "--home", str(jo_home), "--interface", LOCAL,
                     "--time-scale", str(SCALE)])  # fmt: skip
        assert host.finish(), "the host's seat did not end by itself"
    finally:
        host.stop()
    out = capsys.readouterr()
    (app,) = apps
    assert isinstance(app.plan, ResumePlan) and app.seat == 1
    assert "going back to Hal's table" in out.out and "headless" not in out.err
    assert code == 0, (out.out, out.err)
    assert app.result is not None and app.result.result.clean
    assert host.error is None and host.result is not None and host.result.result.clean
    assert host.result.result.outcome == app.result.result.outcome


async def _play_to_the_end(app: TableApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        assert isinstance(app.screen, LobbyScreen)  # saying where it goes back to
        await _until(pilot, lambda: isinstance(app.screen, BluffScreen), "the table", 60)
        # the story so far is rebuilt from the log the seat held, by name
        def moves() -> list[str]:
            return [line for line in app.table_screen.told if line.startswith(("hal ", "you "))]

        await _until(pilot, lambda: bool(moves()), lambda: f"story {app.table_screen.told}", 30)
        assert not any(re.search(r"\bseat \d", line) for line in app.table_screen.told)
        await bluff_by_keys(pilot, app)
        assert "clean:" in app.screen.verdict
        await pilot.press("q")

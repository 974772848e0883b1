"""Tables with people on the LAN in the TUI (issue 12): the waiting room and
the table for ``nodealer host`` / ``nodealer join``, and the home screen's
live list of tables, its host form and its join by address.

Real peers on 127.0.0.1 with explicit addresses (no multicast). The other
seat is a headless peer with a bot, in its own thread with its own trio run
(the app's trio run is a guest on the test's asyncio loop: one per thread).
The home screen's LAN list is fed by an injected browser; real mDNS runs
only inside a private network namespace (tests/lobby_ns_check.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

from engines.core import game
from p2p.discovery import Change, TableAd, TableEvent
from p2p.identity import Identity
from table.seating import GameSettings, SeatResult, host_table, join_table
from tui.lan import parse_config
from tui.screens.bluff import BluffScreen
from tui.screens.home import HomeScreen, LanTables
from tui.screens.lobby import LobbyScreen, settings_lines
from tui.screens.over import GameOverScreen
from tui.table_app import HostPlan, JoinPlan, LanHomeApp, TableApp

HERE = Path(__file__).resolve().parent
LOCAL = "127.0.0.1"
SCALE = 0.02


def _bot(seed: int = 5) -> Callable[[GameSettings, int], Any]:
    def make(settings: GameSettings, seat: int) -> Any:
        return game(settings.game).sensible_bots(settings.seats, seed)[seat]

    return make


class Peer:
    """A headless seat with a bot, in its own thread and trio run."""

    def __init__(self, run: Callable[[], Any]) -> None:
        self.result: SeatResult | None = None
        self.error: BaseException | None = None
        self.token: trio.lowlevel.TrioToken | None = None
        self.scope: trio.CancelScope | None = None
        self._run = run
        self.thread = threading.Thread(target=self._main, daemon=True)
        self.thread.start()

    def _main(self) -> None:
        async def main() -> None:
            self.token = trio.lowlevel.current_trio_token()
            with trio.CancelScope() as scope:
                self.scope = scope
                self.result = await self._run()

        try:
            trio.run(main)
        except BaseException as exc:  # reported by the test
            self.error = exc

    def stop(self) -> None:
        if self.thread.is_alive() and self.token is not None and self.scope is not None:
            try:
                trio.from_thread.run_sync(self.scope.cancel, trio_token=self.token)
            except trio.RunFinishedError:
                pass
        self.thread.join(timeout=30)


def _keys_for(screen: BluffScreen) -> list[str]:
    view = screen.view
    if view is None:
        return []
    may = set(view["may"])
    if "show" in may:
        return ["s"]
    if "accept" in may:
        return ["a"]
    if "play" in may:
        return ["space", "enter"]
    return []


async def _until(pilot: Any, done: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await pilot.pause(0.05)


def _seats_text(screen: LobbyScreen) -> str:
    return str(screen.query_one("#lobby-seats").render())


def test_the_host_app_seats_a_joiner_starts_on_s_and_plays(tmp_path: Path) -> None:
    """The host's waiting room shows both seats (nickname, fingerprint) and
    the settings; s starts the table with the two seated (three offered);
    both reach the table and the host plays a whole game by key presses."""
    me, other = Identity.generate(), Identity.generate()
    config = parse_config(game("bluff"), ["jokers=true"])
    settings = GameSettings("bluff", 3, config, False, "Ann's table")
    app = TableApp(
        HostPlan(settings, LOCAL, 0, min_seats=2),
        identity=me,
        home=tmp_path / "ann",
        nickname="ann",
        time_scale=SCALE,
    )
    peer: Peer | None = None

    async def run() -> None:
        nonlocal peer
        async with app.run_test(size=(100, 34)) as pilot:
            await _until(pilot, lambda: app.lobby is not None, "the lobby to open")
            screen = app.screen
            assert isinstance(screen, LobbyScreen)
            port = app.lobby.port
            assert f"{LOCAL}:{port}" in str(screen.query_one("#lobby-where").render())
            peer = Peer(
                lambda: join_table(
                    other,
                    LOCAL,
                    port,
                    home=tmp_path / "bob",
                    nickname="bob",
                    player_for=_bot(),
                    time_scale=SCALE,
                )
            )
            await _until(
                pilot,
                lambda: app.lobby_state is not None and app.lobby_state.taken == 2,
                "the joiner to sit down",
            )
            await pilot.pause(0.1)
            seats = _seats_text(screen)
            assert "ann" in seats and me.public.fingerprint in seats and "(you)" in seats
            assert "bob" in seats and other.public.fingerprint in seats
            shown = str(screen.query_one("#lobby-settings").render())
            assert "Ann's table" in shown and "jokers=true" in shown and "unproven" in shown
            assert "press s to start" in str(screen.query_one("#lobby-status").render())
            assert app.table_screen is None  # not started until the host says so
            await pilot.press("s")
            await _until(pilot, lambda: isinstance(app.screen, BluffScreen), "the table")
            assert app.seat == 0 and app.settings is not None and app.settings.seats == 2
            for _ in range(4000):
                await pilot.pause(0.05)
                if isinstance(app.screen, GameOverScreen):
                    break
                if isinstance(app.screen, BluffScreen):
                    keys = _keys_for(app.screen)
                    if keys:
                        await pilot.press(*keys)
                        await pilot.pause(0.2)
            else:
                pytest.fail("the game did not end")
            over = app.screen
            assert isinstance(over, GameOverScreen) and "clean:" in over.verdict
            await pilot.press("q")

    try:
        asyncio.run(run())
    finally:
        if peer is not None:
            peer.stop()
    assert peer is not None and peer.error is None, peer.error
    assert peer.result is not None and peer.result.result.clean
    assert app.exit_code == 0 and app.result is not None
    assert app.result.result.outcome == peer.result.result.outcome

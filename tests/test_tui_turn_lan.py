"""The turn timer at a LAN table (issue 27 point 7): a person joins a
headless host whose table has a turn timer, by address on 127.0.0.1. The
waiting room shows the timer; the person never presses a move key, so their
seat's own peer moves for them when their turn runs out, and the host's
news marks those moves auto; the game ends clean for both."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from p2p.identity import Identity
from p2p.store import read_log
from table.seating import GameSettings, host_table
from table.turn_timer import AUTO
from table.verify import verify_log
from tests.test_tui_lobby import LOCAL, Peer, _bot, _until
from tui.screens.bluff import BluffScreen
from tui.screens.over import GameOverScreen
from tui.table_app import JoinPlan, TableApp

SCALE = 0.05  # a turn time of 20 s: 1 s here


@pytest.mark.slow
def test_a_joining_person_who_never_moves_is_moved_for(tmp_path) -> None:
    host_id, me = Identity.generate(), Identity.generate()
    settings = GameSettings("bluff", 2, None, False, "Hal's table", turn_time=20)
    opened = threading.Event()
    ports: list[int] = []
    news: list[Any] = []

    def on_lobby(lobby: Any) -> None:
        ports.append(lobby.port)
        opened.set()

    peer = Peer(
        lambda: host_table(
            host_id,
            settings,
            home=tmp_path / "hal",
            nickname="hal",
            host=LOCAL,
            player=_bot()(settings, 0),
            time_scale=SCALE,
            on_lobby=on_lobby,
            on_update=news.append,
        )
    )
    assert opened.wait(30), peer.error
    app = TableApp(
        JoinPlan(LOCAL, ports[0]), identity=me, home=tmp_path / "me", nickname="jo",
        time_scale=SCALE,
    )  # fmt: skip

    async def run() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await _until(pilot, lambda: isinstance(app.screen, BluffScreen), "the table")
            shown = str(app.lobby_screen.query_one("#lobby-settings").render())
            assert "turn timer: 20 s" in shown, shown
            await _until(
                pilot, lambda: isinstance(app.screen, GameOverScreen), "the game over", 240
            )
            told = app.table_screen.told if app.table_screen is not None else []
            assert any(line.endswith("(auto)") for line in told), told[-10:]
            await pilot.press("q")

    try:
        asyncio.run(run())
    finally:
        by_itself = peer.finish()
    assert by_itself and peer.error is None, peer.error
    assert peer.result is not None and peer.result.result.clean, peer.result
    assert app.result is not None and app.result.result.clean
    auto_news = [u for u in news if u.kind == "event" and u.text.endswith(AUTO)]
    assert auto_news and all(u.text.startswith("seat 1 ") for u in auto_news)
    log = app.result.log_path
    bodies = [(e.event.author, e.event.decoded_body()) for e in read_log(log).entries]
    assert bodies[0][1]["turn_time"] == 20
    assert all(b.get("auto") is True for a, b in bodies if a == 1 and b.get("t") == "move")
    assert verify_log(log).exit_code == 0

"""A peer that drops mid-game in the app (issue 12): the person sees a
notification and a story line, and the table screen stays usable. The host
is the app; two headless joiners with bots on 127.0.0.1, one of them
cancelled mid-game."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.widgets import RichLog

from p2p.identity import Identity
from table.seating import GameSettings, join_table
from tests.test_tui_lobby import LOCAL, SCALE, Peer, _bot, _until
from tui import words
from tui.screens.bluff import BluffScreen
from tui.table_app import HostPlan, TableApp


def _notes(app: TableApp) -> list[tuple[str, str]]:
    """Every notification the app raised (kept: a toast on screen expires)."""
    return app.__dict__.setdefault("_said", [])


def _keep_notes(app: TableApp) -> None:
    said = _notes(app)
    notify = app.notify

    def kept(message: str, *, severity: Any = "information", **options: Any) -> None:
        said.append((str(message), severity))
        notify(message, severity=severity, **options)

    app.notify = kept  # type: ignore[method-assign]


def test_the_app_says_when_a_peer_drops_and_stays_usable(tmp_path: Path) -> None:
    me = Identity.generate()
    others = [Identity.generate() for _ in range(2)]
    settings = GameSettings("bluff", 3, None, False, "Ann's table")
    app = TableApp(
        HostPlan(settings, LOCAL, 0), identity=me, home=tmp_path / "ann", nickname="ann",
        time_scale=SCALE,
    )  # fmt: skip
    _keep_notes(app)
    peers: list[Peer] = []

    def joiner(i: int) -> Any:
        return lambda: join_table(
            others[i], LOCAL, app.lobby.port, home=tmp_path / f"j{i}", nickname=f"j{i}",
            player_for=_bot(), time_scale=SCALE, duty_wait=600,
        )  # fmt: skip

    async def run() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await _until(pilot, lambda: app.lobby is not None, "the lobby to open")
            peers.extend(Peer(joiner(i)) for i in range(2))
            await _until(pilot, lambda: isinstance(app.screen, BluffScreen), "the table")
            screen = app.screen
            assert isinstance(screen, BluffScreen)
            await _until(pilot, lambda: app.session is not None and app.session.table is not None,
                         "the game to be set up")  # fmt: skip
            assert not any("connection" in text for text, _ in _notes(app))
            assert app.session is not None
            session = app.session
            seat = session.node.table.seat_of(others[1].public)  # seats go by arrival
            # the table can be set up before that seat connects (CI once
            # stopped it mid-handshake: then the news is another, tested in
            # test_session_peers)
            await _until(pilot, lambda: seat in session.node.connected, "the seat to connect")
            await pilot.pause(0.3)
            assert peers[1].stop(), "the seat stopped did not end"  # gone mid-game
            fp = others[1].public.fingerprint
            def lost() -> list[tuple[str, str]]:
                return [(text, sev) for text, sev in _notes(app) if fp in text and "lost" in text]

            await _until(
                pilot, lambda: bool(lost()),
                lambda: f"a note (seat {seat}; connected now: {session.node.connected}; "
                f"updates: {[u.kind for u in session.updates[-8:]]})", 30,
            )  # fmt: skip
            (note,) = lost()
            who = app.names.name(seat)  # the lobby's nickname
            assert note == (f"[dropped] lost the connection to {who} ({fp})", "warning")
            assert app.screen is screen and screen.is_mounted  # still the table, usable
            story = screen.query_one(screen.STORY, RichLog)
            assert any(note[0] in line.text for line in story.lines)  # and in the story
            missing = set(words.MISSING)
            await pilot.press("f2")  # the keys still work
            await pilot.pause(0.2)
            assert app.lang == "zh"
            assert set(words.MISSING) == missing  # every key said in Chinese ("palette" was not)
            await pilot.press("ctrl+q")

    try:
        asyncio.run(run())
    finally:
        for peer in peers:
            peer.stop()

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

    def finish(self, timeout: float = 30) -> bool:
        """Wait for the seat to end by itself (after the game a seat still
        waits up to 5 s for the others' acks), then stop what is left;
        whether it ended by itself."""
        self.thread.join(timeout=timeout)
        by_itself = not self.thread.is_alive()
        self.stop()
        return by_itself

    def stop(self) -> bool:
        """Cancel the seat; whether its thread has ended (within 30 s)."""
        if self.thread.is_alive() and self.token is not None and self.scope is not None:
            try:
                trio.from_thread.run_sync(self.scope.cancel, trio_token=self.token)
            except trio.RunFinishedError:
                pass
        self.thread.join(timeout=30)
        return not self.thread.is_alive()


async def bluff_by_keys(pilot: Any, app: Any) -> None:
    """The person plays Bluff by key presses until the game-over screen."""
    for _ in range(4000):
        await pilot.pause(0.05)
        if isinstance(app.screen, GameOverScreen):
            return
        if isinstance(app.screen, BluffScreen):
            keys = _keys_for(app.screen)
            if keys:
                await pilot.press(*keys)
                await pilot.pause(0.2)
    pytest.fail("the game did not end")


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


async def _until(
    pilot: Any, done: Callable[[], bool], what: str | Callable[[], str], seconds: float = 60
) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what() if callable(what) else what}")
        await pilot.pause(0.05)


def _seats_text(screen: LobbyScreen) -> str:
    return str(screen.query_one("#lobby-seats").render())


@pytest.mark.slow
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
            await bluff_by_keys(pilot, app)
            over = app.screen
            assert isinstance(over, GameOverScreen) and "clean:" in over.verdict
            await pilot.press("q")

    try:
        asyncio.run(run())
    finally:
        if peer is not None:
            peer.finish()
    assert peer is not None and peer.error is None, peer.error
    assert peer.result is not None and peer.result.result.clean
    assert app.exit_code == 0 and app.result is not None
    assert app.result.result.outcome == peer.result.result.outcome


def test_the_join_app_shows_the_waiting_room_then_the_table(tmp_path: Path) -> None:
    """A person joins a headless host by address: the waiting room shows
    both seats and the host's settings; the full table starts on its own
    and the joiner reaches the table screen at seat 1 and plays a move."""
    host_id, me = Identity.generate(), Identity.generate()
    settings = GameSettings("bluff", 2, None, False, "Hal's table")
    opened = threading.Event()
    ports: list[int] = []

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
        )
    )
    assert opened.wait(30), peer.error
    app = TableApp(
        JoinPlan(LOCAL, ports[0]),
        identity=me,
        home=tmp_path / "me",
        nickname="jo",
        time_scale=SCALE,
    )

    async def run() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await _until(pilot, lambda: isinstance(app.screen, BluffScreen), "the table")
            lobby = app.lobby_screen
            seats = _seats_text(lobby)
            assert "hal" in seats and host_id.public.fingerprint in seats
            assert "jo" in seats and me.public.fingerprint in seats and "(you)" in seats
            assert "Hal's table" in str(lobby.query_one("#lobby-settings").render())
            assert app.seat == 1
            screen = app.screen
            assert isinstance(screen, BluffScreen) and screen.seat == 1
            moved = False
            for _ in range(1200):
                await pilot.pause(0.05)
                keys = _keys_for(screen) if app.screen is screen else []
                if keys:
                    await pilot.press(*keys)
                    moved = True
                    break
            assert moved, "the joiner never had a move to make"
            await pilot.press("ctrl+q")

    try:
        asyncio.run(run())
    finally:
        peer.stop()


def test_a_bad_address_to_join_changes_nothing(tmp_path: Path) -> None:
    """Nobody listens there: the join app says why and ends with exit 2,
    no table is saved."""
    app = TableApp(
        JoinPlan(LOCAL, _closed_port()),
        identity=Identity.generate(),
        home=tmp_path / "me",
        nickname="jo",
    )

    async def run() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await _until(pilot, lambda: app.problem is not None, "the join to fail", 30)
            assert isinstance(app.screen, LobbyScreen)
            await pilot.press("q")

    asyncio.run(run())
    assert app.exit_code == 2 and app.problem
    assert not list((tmp_path / "me").glob("tables/*/log"))


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind((LOCAL, 0))
        return int(sock.getsockname()[1])


# --------------------------------------------------------------------------- home


def _ad(tid: int, taken: int = 1, total: int = 3, **kw: Any) -> TableAd:
    fields: dict[str, Any] = {"name": f"table {tid}", "host_name": "ann", "proven": True}
    fields.update(kw)
    return TableAd(
        bytes([tid]) * 8, "bluff", taken, total, "K3QF-7ZPA-M2XD-4RTY", "192.168.1.20", 4000 + tid,
        **fields,
    )  # fmt: skip


class FakeLan:
    """An injected LAN browser: the test sends the events (no mDNS)."""

    def __init__(self) -> None:
        self.token: trio.lowlevel.TrioToken | None = None
        self.closed = False
        self._send: Any = None

    @asynccontextmanager
    async def open(self) -> AsyncIterator[Any]:
        self.token = trio.lowlevel.current_trio_token()
        self._send, receive = trio.open_memory_channel[TableEvent](16)
        try:
            yield receive
        finally:
            self.closed = True

    def send(self, change: Change, ad: TableAd) -> None:
        """From the test's asyncio side: hand trio one event."""
        assert self.token is not None
        event = TableEvent(change, f"{ad.name}._nodealer._tcp.local.", ad)
        self.token.run_sync_soon(self._send.send_nowait, event)


def _lan_rows(app: LanHomeApp) -> list[str]:
    from textual.widgets import OptionList

    lan = app.home_screen.query_one("#lan", OptionList)
    return [str(lan.get_option_at_index(i).prompt) for i in range(lan.option_count)]


def test_the_home_screen_lists_lan_tables_live() -> None:
    """Tables appear, change and vanish as the browser says; an open one is
    joined by enter, a full one is refused with a note."""
    lan = FakeLan()
    app = LanHomeApp("me (XXXX-XXXX-XXXX-XXXX)", [("bluff", 2)], [], lan=lan.open)

    async def run() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await _until(pilot, lambda: lan.token is not None, "the browser to open", 10)
            await _until(pilot, lambda: "no open table" in _note(app), "the empty note", 10)
            lan.send(Change.APPEARED, _ad(1))
            await _until(pilot, lambda: len(_lan_rows(app)) == 1, "a table to appear", 10)
            (row,) = _lan_rows(app)
            assert row == "table 1 · bluff 1/3 · host ann K3QF-7ZPA-M2XD-4RTY · proven"
            lan.send(Change.APPEARED, _ad(2, 2, 2, name="", host_name="", proven=None))
            await _until(pilot, lambda: len(_lan_rows(app)) == 2, "a second table", 10)
            assert "full" in _lan_rows(app)[1] and "bluff 02020202" in _lan_rows(app)[1]
            lan.send(Change.UPDATED, _ad(1, 2))
            await _until(pilot, lambda: "bluff 2/3" in _lan_rows(app)[0], "the update", 10)
            lan.send(Change.VANISHED, _ad(1, 2))
            await _until(pilot, lambda: len(_lan_rows(app)) == 1, "a table to vanish", 10)
            await pilot.press("l", "enter")  # the full one: refused, nothing happens
            await pilot.pause(0.2)
            assert app.is_running and app.return_value is None
            lan.send(Change.APPEARED, _ad(1))
            await _until(pilot, lambda: len(_lan_rows(app)) == 2, "it to come back", 10)
            await pilot.press("home", "enter")
            await pilot.pause(0.2)

    asyncio.run(run())
    kind, _, listed = (app.return_value or "").partition(":")
    assert kind == "lan"  # joined by address, as advertised: that table id and host key
    assert json.loads(listed) == {
        "connect": "192.168.1.20:4001",
        "table": "01" * 8,
        "host": "K3QF-7ZPA-M2XD-4RTY",
    }
    assert lan.closed  # the browser is closed with the screen


def _note(app: LanHomeApp) -> str:
    return str(app.home_screen.query_one("#lan-note").render())


def test_join_by_address_shows_a_typo_and_changes_nothing() -> None:
    from textual.widgets import Input

    from tui.screens.home import JoinForm

    app = LanHomeApp("me", [("bluff", 2)], [])

    async def run() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            assert "LAN browsing is off" in _note(app)  # no browser given: no mDNS
            await pilot.press("j")
            await pilot.pause(0.1)
            assert isinstance(app.screen, JoinForm)
            await pilot.press(*"192.168.1.20", "enter")  # no port
            await pilot.pause(0.1)
            error = str(app.screen.query_one("#form-error").render())
            assert "port" in error.lower()
            assert isinstance(app.screen, JoinForm) and app.return_value is None
            app.screen.query_one("#address", Input).value = "127.0.0.1:4000"
            await pilot.press("enter")
            await pilot.pause(0.1)

    asyncio.run(run())
    assert app.return_value == "join:127.0.0.1:4000"


def test_host_a_table_checks_the_form_like_nodealer_host() -> None:
    from textual.widgets import Input

    from tui.screens.home import HostForm

    app = LanHomeApp("me", [("bluff", 2), ("bomb", 5)], [], lang="zh")

    async def run() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("h")
            await pilot.pause(0.1)
            form = app.screen
            assert isinstance(form, HostForm)
            assert "座位" in str(form.query_one("#seats-label").render())  # Chinese
            await pilot.press(*"99", "enter")
            await pilot.pause(0.1)
            assert "not 99" in str(form.query_one("#form-error").render())
            form.query_one("#seats", Input).value = "3"
            form.query_one("#variants", Input).value = "bogus=1"
            await pilot.press("enter")
            await pilot.pause(0.1)
            assert "KEY=VALUE" in str(form.query_one("#form-error").render())
            assert app.screen is form and app.return_value is None
            form.query_one("#variants", Input).value = "jokers=true, twos_reset=true"
            form.query_one("#name", Input).value = "Ann's table"
            await pilot.press("enter")
            await pilot.pause(0.1)

    asyncio.run(run())
    kind, _, plan = (app.return_value or "").partition(":")
    assert kind == "host"
    assert json.loads(plan) == {
        "game": "bluff",
        "seats": 3,
        "config": ["jokers=true", "twos_reset=true"],
        "name": "Ann's table",
    }


def test_the_settings_read_like_the_game() -> None:
    import doctest

    import tui.screens.home
    import tui.screens.lobby

    for module in (tui.screens.home, tui.screens.lobby):
        assert doctest.testmod(module).failed == 0
    lines = settings_lines(
        {"game": "bomb", "seats": 5, "config": None, "proven": True, "name": "", "rounds": None},
        "zh",
    )
    assert lines == ["bomb", "糊涂炸弹，5 人", "带证明的发牌", "变体：无（按规则原文）"]


@pytest.mark.netns
def test_the_home_screen_lists_a_table_over_real_mdns_in_a_namespace() -> None:
    """Real mDNS, only inside a fresh network namespace (loopback alone):
    the table appears, its seats change, it vanishes."""
    from tests.test_discovery import _netns, _unshare_prefix

    run = subprocess.run(
        [*_unshare_prefix(), sys.executable, str(HERE / "lobby_ns_check.py"), _netns()],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=HERE.parent,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    row = "Ann's table · bluff {} · host ann K3QF-7ZPA-M2XD-4RTY · proven"
    assert seen == {
        "before": [],
        "appeared": [row.format("1/3")],
        "updated": [row.format("2/3")],
        "vanished": [],
    }


def test_the_namespace_check_refuses_to_run_outside_one() -> None:
    if not os.path.exists("/proc/self/ns/net"):
        pytest.skip("needs Linux network namespaces")
    run = subprocess.run(
        [sys.executable, str(HERE / "lobby_ns_check.py"), os.readlink("/proc/self/ns/net")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 3 and "refusing to run" in run.stderr and run.stdout == ""


def test_a_port_in_use_or_a_bad_address_is_refused_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    from tui.cli import main

    with socket.socket() as busy:
        busy.bind((LOCAL, 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = main(["host", "bluff", "--interface", LOCAL, "--port", str(port),
                     "--no-advertise", "--home", str(tmp_path)])  # fmt: skip
    assert code == 2
    assert f"cannot listen on {LOCAL}:{port}" in capsys.readouterr().err
    assert main(["join", "--connect", "nowhere", "--home", str(tmp_path)]) == 2
    assert "--connect 'nowhere'" in capsys.readouterr().err
    assert not list(tmp_path.glob("tables/*"))

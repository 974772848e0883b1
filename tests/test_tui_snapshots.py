"""Screen snapshots (pytest-textual-snapshot): the deal, Bluff, Bomb, game
over, replay and help screens in English and Chinese at 80×24 and 160×45,
from fixed game states so that a snapshot changes only when the screen does.
``pytest --snapshot-update`` rewrites them after a deliberate change.

Also: F2 switches the language of a live screen, footer keys included."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.screen import Screen
from textual.widgets import Footer, Static

from engines.bots import Simulator, sensible_bots
from engines.core import game
from tui.base import NodealerApp
from tui.replay import load
from tui.screens.bluff import BluffScreen
from tui.screens.bomb import BombScreen
from tui.screens.common import HelpScreen, relabel
from tui.screens.over import GameOverScreen
from tui.screens.replay import ReplayScreen
from tui.story import progress_parts

VECTOR = Path(__file__).parent / "vectors" / "bluff-2-proven.log"
SIZES = [(80, 24), (160, 45)]
LANGS = ["en", "zh"]


class _Snap:
    def __init__(self, state: Any, view: dict[str, Any] | None) -> None:
        self.state, self.view = state, view


def _table(name: str, seats: int, events: int) -> tuple[Any, _Snap, list[str]]:
    """A game some way in, from a fixed deck and fixed bots."""
    engine = game(name)
    sim = Simulator(engine, engine.Config(), seats, deck_seed=3)
    bots = sensible_bots(name, seats, 3, salt_source=lambda n: bytes(n))
    rng = random.Random(3)
    while len(sim.events) < events and not engine.is_over(sim.state):
        sim.step(bots, rng)
    view = engine.view(sim.state, 0, sim.known[0])
    return engine, _Snap(sim.state, view), [str(e) for e in sim.events]


class ScreenApp(NodealerApp):
    """One screen with fixed contents, as the play app would show it (the
    keys, palette and language of every nodealer app)."""

    CSS_PATH = str(Path(__file__).resolve().parent.parent / "tui" / "app.tcss")

    def __init__(self, make: Any, lang: str, sub_title: str = "", title: str = "nodealer") -> None:
        super().__init__(lang)
        self.make, self.game = make, "bluff"
        self._sub, self._title = sub_title, title

    async def on_mount(self) -> None:
        self.title = self._title
        self.sub_title = self._sub
        relabel(self, self.lang)
        await self.make(self)

    def help_game(self) -> str | None:
        return self.game

    def submit(self, event: Any, seen: int | None = None) -> None:  # table screens hand moves here
        self.submitted = event


async def _table_screen(app: ScreenApp, screen: Screen[Any], name: str, seats: int, n: int) -> None:
    from tui.storyteller import StoryTeller

    engine, snap, lines = _table(name, seats, n)
    app.game = name
    await app.push_screen(screen)
    screen.refresh_table(snap, engine)  # type: ignore[attr-defined]
    teller = StoryTeller()  # as the play app tells it: one line per event
    for line in lines:
        for shown in teller.tell(line, app.lang):
            screen.story(shown)  # type: ignore[attr-defined]


def _deal(app: ScreenApp) -> Any:
    screen = BluffScreen(seat=0)

    async def show() -> None:
        await app.push_screen(screen)
        screen.refresh_table(_Snap(None, None), None)

    return show()


def _over(app: ScreenApp) -> Any:
    return app.push_screen(
        GameOverScreen(
            "winners [0], losers [1, 2]: B11/B12: hand empty, challenge failed",
            "clean: winners [0], losers [1, 2]: B11/B12: hand empty, challenge failed",
            "~/.local/share/nodealer/tables/9aa1caf97c1c2fff/log",
            True,
        )
    )


def _replay(app: ScreenApp) -> Any:
    steps, verdict = load(VECTOR, app.lang)
    return app.push_screen(ReplayScreen(steps, [v for v in verdict if "vectors" not in v]))


def _help(app: ScreenApp) -> Any:
    return app.push_screen(HelpScreen("bomb", app.lang, [("F1", "help"), ("d", "detonate!")]))


def _home(app: ScreenApp) -> Any:
    from p2p.discovery import Change, TableAd, TableEvent
    from tui.screens.home import HomeScreen

    screen = HomeScreen("ann (K3QF-7ZPA-M2XD-4RTY)", [("bluff", 4), ("bomb", 5), ("mao", 4)], [])

    async def show() -> None:
        await app.push_screen(screen)
        for tid, name, taken in ((1, "bluff", 1), (2, "bomb", 3)):
            ad = TableAd(bytes([tid]) * 8, name, taken, 4, "K3QF-7ZPA-M2XD-4RTY", "169.254.0.2",
                         4000 + tid, name=f"table {tid}", host_name="hal", proven=True)  # fmt: skip
            screen.lan_event(TableEvent(Change.APPEARED, f"t{tid}._nodealer._tcp.local.", ad))

    return show()


def _lobby(app: ScreenApp) -> Any:
    from p2p.lobby.messages import LobbyState, Player
    from table.seating import GameSettings
    from tui.screens.lobby import LobbyScreen

    screen = LobbyScreen(hosting=True, fingerprint="K3QF-7ZPA-M2XD-4RTY")
    settings = GameSettings("bluff", 3, None, True, "Ann's table").to_map()
    players = (Player(0, "ann", "K3QF-7ZPA-M2XD-4RTY"), Player(1, "hal", "M2XD-4RTY-K3QF-7ZPA"))
    async def show() -> None:
        await app.push_screen(screen)
        screen.show_where("169.254.0.2:4000")
        screen.show_state(LobbyState(bytes(8), settings, 3, 2, players))

    return show()


def _lobby_watched(app: ScreenApp) -> Any:
    """The waiting room of a table that takes spectators (one watching)."""
    from p2p.lobby.messages import LobbyState, Player
    from table.seating import GameSettings
    from tui.screens.lobby import LobbyScreen

    screen = LobbyScreen(hosting=False, fingerprint="M2XD-4RTY-K3QF-7ZPA")
    settings = GameSettings("bluff", 3, None, True, "Ann's table").to_map()
    players = (Player(0, "ann", "K3QF-7ZPA-M2XD-4RTY"), Player(1, "hal", "M2XD-4RTY-K3QF-7ZPA"))

    async def show() -> None:
        await app.push_screen(screen)
        screen.show_where("169.254.0.2:4000")
        screen.show_state(LobbyState(bytes(8), settings, 3, 2, players, watch=(4100, 4),
                                     watching=1))  # fmt: skip

    return show()


def _home_watched(app: ScreenApp) -> Any:
    """Home's LAN list with a table that takes spectators and one being played."""
    from p2p.discovery import Change, TableAd, TableEvent
    from tui.screens.home import HomeScreen

    screen = HomeScreen("ann (K3QF-7ZPA-M2XD-4RTY)", [("bluff", 4)], [])

    async def show() -> None:
        await app.push_screen(screen)
        for tid, taken, playing in ((1, 1, False), (2, 4, True)):
            ad = TableAd(bytes([tid]) * 8, "bluff", taken, 4, "K3QF-7ZPA-M2XD-4RTY",
                         "169.254.0.2", 4000 + tid, name=f"table {tid}", host_name="hal",
                         watch_port=4100 + tid, spectators=4, playing=playing)  # fmt: skip
            screen.lan_event(TableEvent(Change.APPEARED, f"t{tid}._nodealer._tcp.local.", ad))

    return show()


def _confirm(app: ScreenApp) -> Any:
    import tui.app  # noqa: F401  (registers the question's words)
    from tui.screens.common import Confirm

    async def show() -> None:
        await _table_screen(app, BluffScreen(seat=0), "bluff", 3, 12)
        question = "Leave this game? It ends here for you (the bots stop); its log is kept."
        from tui.words import t

        await app.push_screen(Confirm(t(question, app.lang), app.lang))

    return show()


SCREENS = {
    "home": (_home, ""),
    "waiting": (_lobby, ""),
    "waiting-watched": (_lobby_watched, ""),
    "home-watched": (_home_watched, ""),
    "deal": (_deal, "deal 0: seat 1 locks (proofs: 2 checked + 2 own of 6)"),
    "bluff": (lambda app: _table_screen(app, BluffScreen(seat=0), "bluff", 3, 12), ""),
    "bomb": (lambda app: _table_screen(app, BombScreen(seat=0), "bomb", 4, 25), ""),
    "over": (_over, ""),
    "replay": (_replay, ""),
    "help": (_help, ""),
    "confirm": (_confirm, ""),
}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", sorted(SCREENS))
def test_screen_snapshot(snap_compare, name: str, lang: str, size: tuple[int, int]) -> None:
    make, sub_title = SCREENS[name]
    title = "nodealer"
    if name == "deal":  # as the apps show a deal's progress: its step, then its count
        title, sub_title = progress_parts(sub_title, lang)
    async def settle(pilot: Any) -> None:  # drawn as it stays (a question on top included)
        for _ in range(3):
            await pilot.pause()
            await pilot.wait_for_scheduled_animations()
        if name == "confirm":
            from tui.screens.common import Confirm

            for _ in range(100):
                if isinstance(pilot.app.screen, Confirm):
                    break
                await pilot.pause(0.05)
            await pilot.pause()

    assert snap_compare(ScreenApp(make, lang, sub_title, title), terminal_size=size,
                        run_before=settle)  # fmt: skip


def test_f2_switches_the_language_of_a_live_screen_and_its_keys() -> None:
    asyncio.run(_switch_languages())


async def _switch_languages() -> None:
    app = ScreenApp(lambda a: _table_screen(a, BluffScreen(seat=0), "bluff", 3, 12), "en")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        status = str(app.screen.query_one("#status", Static).render())
        assert "Bluff · seat 0 · " in status
        keys = {active.binding.description for active in _footer_bindings(app)}
        assert "challenge" in keys and "中文" in keys  # F2 names the other language
        await pilot.press("f2")
        await pilot.pause()
        assert app.lang == "zh"
        status = str(app.screen.query_one("#status", Static).render())
        assert "吹牛 · 座位0 · " in status and "Bluff" not in status
        keys = {active.binding.description for active in _footer_bindings(app)}
        assert "吹牛！" in keys and "challenge" not in keys and "English" in keys
        await pilot.press("f1")  # help, in Chinese now
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen) and app.screen.lang == "zh"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, BluffScreen)
        theme = app.theme
        await pilot.press("f3")
        assert app.theme != theme


def _footer_bindings(app: App[Any]) -> list[Any]:
    app.screen.query_one(Footer)  # the footer shows what active_bindings holds
    return list(app.active_bindings.values())

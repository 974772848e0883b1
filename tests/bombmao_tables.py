"""Fixed Bomb and Mao tables for the Bomb/Mao screen tests and snapshots
(issue 26): a Bomb game some way in, its detonation window, its end; a Mao
game ended by vote with two secret rules revealed. Everything comes from
fixed seeds and scripts (no clock, no network)."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App

from engines.bomb import GAME as BOMB
from engines.bomb import BombState, Detonate
from engines.bots import Simulator, sensible_bots
from engines.mao import GAME as MAO
from engines.mao_author import RuleAuthor
from engines.mao_events import Vote
from tui.screens.common import SPEAKING, relabel, show_help, switch_language, switch_theme

CSS = str(Path(__file__).resolve().parent.parent / "tui" / "app.tcss")
OUTCOME = "winners [1, 2], losers [0, 3, 4]: K18: a captain killed an enemy captain"
VERDICT = "clean: " + OUTCOME
LOG = "~/.local/share/nodealer/tables/9aa1caf97c1c2fff/log"


class Snap:
    """What a session's snapshot holds for seat 0."""

    def __init__(self, state: Any, view: dict[str, Any] | None, known: Any = None) -> None:
        self.state, self.view, self.known = state, view, known


class TableApp(App[None]):
    """One table screen with fixed contents, as the play app shows it;
    moves the screen submits are kept in ``submitted``."""

    CSS_PATH = CSS
    BINDINGS = SPEAKING
    TIMERS_WAIT = True

    def __init__(self, make: Callable[[TableApp], Any], lang: str = "en", game: str = "bomb",
                 names: list[str] | None = None) -> None:  # fmt: skip
        super().__init__()
        self.make, self.lang, self.game = make, lang, game
        self.submitted: list[Any] = []
        if names is not None:
            self.names = names
        self.time_scale = 1.0

    async def on_mount(self) -> None:
        relabel(self, self.lang)
        await self.make(self)

    def push_screen(self, screen: Any, *args: Any, **kwargs: Any) -> Any:
        """A table screen gets the table's names as the play app gives them."""
        names = getattr(self, "names", None)
        if names is not None and hasattr(screen, "seat"):
            told = seat_names(names, screen.seat)
            if told is not None:
                screen.names = told
        return super().push_screen(screen, *args, **kwargs)

    def action_rules(self) -> None:
        show_help(self, self.game)

    def action_language(self) -> None:
        switch_language(self)

    def action_theme(self) -> None:
        switch_theme(self)

    def submit(self, event: Any) -> None:
        self.submitted.append(event)


def seat_names(names: list[str], me: int) -> Any:
    """The names as a table screen holds them (``table.names.SeatNames``,
    where that module exists; the screens otherwise read the app's list)."""
    try:
        from table.names import SeatNames  # type: ignore[import-not-found]
    except ImportError:
        return None
    return SeatNames(tuple(names), me=me)


# ---------------------------------------------------------------- the Bomb game


def bomb_until(until: Callable[[Simulator], bool], seats: int = 5, seed: int = 3) -> Simulator:
    """A Bomb game between seeded bots, stepped until ``until`` holds."""
    sim = Simulator(BOMB, BOMB.Config(), seats, deck_seed=seed)
    bots = sensible_bots("bomb", seats, seed, salt_source=lambda n: bytes(n))
    rng = random.Random(seed)
    for _ in range(20_000):
        if until(sim):
            return sim
        sim.step(bots, rng)
    raise AssertionError("the fixed Bomb game never got there")


def my_window(sim: Simulator) -> bool:
    """K16: a detonation window in which seat 0 may still detonate."""
    state: BombState = sim.state
    return state.phase == "window" and "detonate" in BOMB.legal_kinds(state, 0)


def bomb_over(seed: int = 3) -> Simulator:
    """The first window of the fixed game, where the first seat (not the
    target) that may detonate does (K17); then the identities are revealed."""
    sim = bomb_until(lambda s: s.state.phase == "window", seed=seed)
    state: BombState = sim.state
    assassin = next(s for s in range(state.seats)
                    if s != state.bomb and "detonate" in BOMB.legal_kinds(state, s))  # fmt: skip
    sim.submit(Detonate(assassin))
    while sim.serve():
        pass
    assert sim.state.phase == "over"
    return sim


def bomb_snap(sim: Simulator, seat: int = 0) -> Snap:
    return Snap(sim.state, BOMB.view(sim.state, seat, sim.known[seat]), sim.known[seat])


# ---------------------------------------------------------------- Mao


def mao_over() -> tuple[Any, RuleAuthor]:
    """The fixed game of tests/test_tui_mao_snapshots.py (two secret rules,
    yours judged a play of seat 2's), its drop vote refused, then ended by
    vote (M31) and every rule revealed."""
    from tests.test_tui_mao_snapshots import _game

    author = RuleAuthor(salt_source=lambda n: bytes(n))
    s = _game(author, round_2=True)
    s.submit(Vote(0, False))
    s.submit(Vote(2, False))
    s.vote_all("end")
    for slot in range(len(s.state.rules)):
        s.reveal(slot)
    assert s.state.phase == "over"
    return s, author


def mao_snap(s: Any) -> Snap:
    known = s.table.known[0]
    return Snap(s.state, MAO.view(s.state, 0, known), known)

"""Helpers for the Bluff screen's tests: tables some way into a game between
seeded bots (engines.bots.Simulator, a fixed deck), and an app that shows
one BluffScreen and records the moves it hands over."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.app import App

from engines.bluff import GAME, BluffConfig, BluffState, Challenge, Phase
from engines.bots import Simulator, sensible_bots
from tui.screens.bluff import BluffScreen
from tui.screens.common import SPEAKING, relabel, show_help, switch_language, switch_theme

CSS = str(Path(__file__).resolve().parent.parent / "tui" / "app.tcss")


@dataclass(frozen=True)
class Snap:
    """What the session hands the screen (table.session.Snapshot's fields)."""

    count: int
    state: Any
    view: dict[str, Any] | None
    known: dict[int, Any] = field(default_factory=dict)


class Table:
    """A seeded Bluff game between sensible bots, stepped on demand."""

    def __init__(self, seats: int = 3, seed: int = 5) -> None:
        self.sim = Simulator(GAME, BluffConfig(), seats, deck_seed=seed)
        self.bots = sensible_bots("bluff", seats, seed)
        self.rng = random.Random(seed)

    @property
    def state(self) -> BluffState:
        return self.sim.state

    def until(self, done: Callable[[BluffState], bool], limit: int = 3000) -> Table:
        for _ in range(limit):
            if done(self.sim.state):
                return self
            self.sim.step(self.bots, self.rng)
        raise AssertionError("the game never got there")

    def snap(self, seat: int = 0) -> Snap:
        sim = self.sim
        view = GAME.view(sim.state, seat, sim.known[seat])
        return Snap(len(sim.events), sim.state, view, dict(sim.known[seat]))

    def challenge(self, seat: int) -> Table:
        """``seat`` challenges the latest play; the reveal and the pile's
        transfer are answered (B7)."""
        self.sim.submit(Challenge(seat))
        while self.sim.serve():
            pass
        return self

    def lines(self) -> list[str]:
        return [str(e) for e in self.sim.events]


def persons_turn(state: BluffState) -> bool:
    """Seat 0 must place, with a claim of another seat's it may challenge."""
    return (
        state.phase is Phase.PLAY
        and state.turn == 0
        and state.last_open
        and bool(state.pile)
        and len(state.pile) >= 2
    )


class BluffApp(App[None]):
    """One Bluff table screen, as the play app shows it; moves are recorded."""

    CSS_PATH = CSS
    BINDINGS = SPEAKING
    TITLE = "nodealer"

    def __init__(self, lang: str = "en", time_scale: float = 1.0) -> None:
        super().__init__()
        self.lang, self.game, self.time_scale = lang, "bluff", time_scale
        self.screen_: BluffScreen = BluffScreen(seat=0)
        self.submitted: list[tuple[Any, int | None]] = []

    async def on_mount(self) -> None:
        relabel(self, self.lang)
        await self.push_screen(self.screen_)

    def show(self, snap: Snap, lines: list[str] = ()) -> None:  # type: ignore[assignment]
        from tui.story import story

        for line in lines:
            said = story(line, self.lang)
            if said:
                self.screen_.story(said)
        self.screen_.refresh_table(snap, GAME)

    def action_rules(self) -> None:
        show_help(self, self.game)

    def action_language(self) -> None:
        switch_language(self)

    def action_theme(self) -> None:
        switch_theme(self)

    def submit(self, event: Any, seen: int | None = None) -> None:
        self.submitted.append((event, seen))

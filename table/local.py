"""A whole table in one process: every seat a bot, every deal really
shuffled, locked, dealt and revealed with mental poker, every proof checked.

This is the table session without the network: the bodies each seat owes
(:meth:`table.seat.Seat.duties`) and the bots' moves go, in one total order,
into one :class:`table.machine.Table` that every peer would hold identically.
Time is simulated, as in ``engines.bots.Table``: every move costs
``seconds_per_move``; a timer (the 10-second rules, the Bomb game's time
limit) fires when its time has come, or early when nobody has anything else
to do. At the end every seat makes its final reveal and every deal is
audited.

It is what ``nodealer demo`` runs, and what tests use to play whole games
through the crypto layer without sockets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engines.bots import Bot, sensible_bots
from engines.core import Event, Outcome, SimulatedClock
from mental_poker.errors import Verdict

from .machine import Table, TableSetup
from .seat import Seat

__all__ = ["LocalTable", "TableFault", "sensible_bots"]


class TableFault(RuntimeError):
    """A body was refused: names the seat and the reason."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(str(verdict))
        self.verdict = verdict


@dataclass
class LocalTable:
    """Seats, bots and the shared public table; ``log`` is every body fed."""

    setup: TableSetup
    bots: Sequence[Bot]
    seed: int = 0
    max_bodies: int = 200_000
    seconds_per_move: int = 3
    table: Table = field(init=False)
    seats: list[Seat] = field(init=False)
    log: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    on_body: Callable[[int, dict[str, Any]], None] | None = None

    def __post_init__(self) -> None:
        self.table = Table(self.setup)
        self.seats = [Seat(self.table, s) for s in range(self.setup.seats)]
        self.clock = 0
        self.timers = SimulatedClock()

    def feed(self, author: int, body: dict[str, Any]) -> None:
        if len(self.log) >= self.max_bodies:
            raise RuntimeError(f"game not over after {self.max_bodies} log bodies")
        verdict = self.table.feed(author, body)
        if not verdict.ok:
            raise TableFault(verdict)
        self.log.append((author, body))
        if self.on_body is not None:
            self.on_body(author, body)

    def step(self) -> bool:
        """Feed one round of duties, or one move, or one timer. False when
        the game is over and every final reveal is in."""
        for seat in self.seats:
            duties = seat.duties()
            if duties:
                for body in duties:
                    self.feed(seat.seat, body)
                return True
        if self.table.over:
            return False
        if self._fire_timer(force=False):
            return True
        n = self.setup.seats
        first = (self.seed + len(self.log)) % n  # no seat always asked first
        order = [(first + i) % n for i in range(n)]
        game, state = self.table.game, self.table.state
        for s in order:
            event: Event | None = self.bots[s].act(game, state, s, self.seats[s].knowledge())
            if event is not None:
                self.feed(s, self.seats[s].move_body(event))
                self.clock += self.seconds_per_move
                return True
        if not self._fire_timer(force=True):
            raise RuntimeError(f"nobody can act after {len(self.log)} bodies")
        return True

    def _fire_timer(self, force: bool) -> bool:
        """Fire the earliest pending timer if due (or at all, if ``force``)."""
        self.timers.now = self.clock
        self.timers.watch(self.table.pending())
        purpose = self.timers.due(force)
        self.clock = self.timers.now
        if purpose is None:
            return False
        timers = self.table.timers
        if not timers.by_majority:  # v2: the sequencer's (seat 0's, term 0) timer
            self.feed(0, {"t": "timer", "purpose": purpose})
            return True
        since = timers.started(purpose)
        for seat in range(self.table.setup.seats):  # v3: a majority's words (§7.2)
            if timers.started(purpose) != since:
                break  # fired
            if seat not in timers.signed(purpose):
                self.feed(seat, {"t": "timer", "purpose": purpose})
        return True

    def play(self) -> Outcome:
        """Play to the end, make the final reveals, audit every deal."""
        while self.step():
            pass
        verdict = self.table.audit()
        if not verdict.ok:
            raise TableFault(verdict)
        outcome = self.table.game.outcome(self.table.state)
        assert outcome is not None
        return outcome

"""Bots and an in-process table that plays whole games with them.

A bot is anything with ``act(game, state, seat, known) -> Event | None``: it
sees the public state and its own private knowledge (exactly what the session
would give it) and either submits one player event or waits. Bots draw their
choices from their own seeded ``random.Random``; they never touch the deal.

``Simulator`` stands in for the whole session (p2p + mental_poker) so tests and
benchmarks can run the engines alone: it holds the true deck order (a seeded
shuffle, separate from every bot's generator), answers the engine's pending
requests the way the session would — private deals update one seat's
knowledge, reveals publish faces, jointly drawn values come from the deck's
generator, a ``prove`` request gets the verdict an honest verifier reaches —
and keeps a simulated clock for timers: every player event costs
``seconds_per_event``; when no bot wants to act the earliest timer fires.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from engines.cards import Card
from engines.core import (
    Deal,
    Event,
    Game,
    Prove,
    RandomDraw,
    RandomValue,
    Request,
    Reshuffle,
    Reveal,
    Revealed,
    SimulatedClock,
    Timer,
    Transfer,
)
from engines.core import game as engine_of


class Bot(Protocol):
    def act(
        self, game: Game[Any, Any], state: Any, seat: int, known: dict[int, Card]
    ) -> Event | None:
        """One player event for ``seat`` now, or None to wait."""


class Stuck(RuntimeError):
    """Nobody can act and nothing is pending: an engine or bot bug."""


@dataclass
class Simulator:
    """An in-process session: deck order, per-seat knowledge, simulated clock."""

    game: Game[Any, Any]
    config: Any
    seats: int
    deck_seed: int
    seconds_per_event: int = 3
    state: Any = None
    events: list[Event] = field(default_factory=list)
    known: list[dict[int, Card]] = field(default_factory=list)
    faces: dict[int, Card] = field(default_factory=dict)
    clock: int = 0
    timers: SimulatedClock = field(default_factory=SimulatedClock)
    version: int = 2
    """the table protocol whose rules the game follows (:meth:`Game.new_for`)"""

    def __post_init__(self) -> None:
        self._rng = random.Random(f"deck/{self.deck_seed}")
        cards = list(self.game.deck(self.config))
        self._rng.shuffle(cards)
        self.faces = dict(enumerate(cards))
        self.known = [{} for _ in range(self.seats)]
        self.state = self.game.new_for(self.config, self.seats, self.version)

    # -- the session's side --------------------------------------------------------
    def submit(self, event: Event) -> None:
        self.state = self.game.apply(self.state, event)
        self.events.append(event)

    def serve(self) -> bool:
        """Answer the first pending request that is work (not a timer)."""
        pending = self.game.pending(self.state)
        self.timers.now = self.clock
        self.timers.watch(pending)
        for request in pending:
            if isinstance(request, Timer):
                continue
            self.submit(self._answer(request))
            return True
        return False

    def _answer(self, request: Request) -> Event:
        if isinstance(request, Deal):
            self.known[request.seat].update((p, self.faces[p]) for p in request.positions)
            return request.answer()
        if isinstance(request, Transfer):
            self.known[request.seat].update((p, self.faces[p]) for p in request.positions)
            return request.answer()
        if isinstance(request, Reveal):
            cards = tuple(self.faces[p] for p in request.positions)
            return Revealed(request.positions, cards)
        if isinstance(request, RandomDraw):
            return RandomValue(request.purpose, self._rng.randrange(request.bound))
        if isinstance(request, Reshuffle):
            cards = [self.faces[p] for p in request.positions]
            self._rng.shuffle(cards)
            self.faces.update(zip(request.new_positions, cards, strict=True))
            return request.answer()
        if isinstance(request, Prove):  # what an honest verifier finds
            return request.answer(self.faces[request.position] in request.allowed)
        raise RuntimeError(f"no simulated answer to {request}")

    def fire_due_timer(self, force: bool = False) -> bool:
        self.timers.now = self.clock
        purpose = self.timers.due(force)
        self.clock = self.timers.now
        if purpose is None:
            return False
        timer = next(
            r for r in self.game.pending(self.state) if getattr(r, "purpose", None) == purpose
        )
        self.submit(timer.answer())  # type: ignore[attr-defined]
        return True

    # -- playing -------------------------------------------------------------------
    def step(self, bots: Sequence[Bot], order_rng: random.Random) -> None:
        """One event: pending work first, then a due timer, then a bot (polled
        in a random order), then the earliest timer."""
        if self.serve() or self.fire_due_timer():
            return
        order = list(range(self.seats))
        order_rng.shuffle(order)
        for seat in order:
            event = bots[seat].act(self.game, self.state, seat, self.known[seat])
            if event is not None:
                self.submit(event)
                self.clock += self.seconds_per_event
                return
        if not self.fire_due_timer(force=True):
            raise Stuck(f"nobody can act after {len(self.events)} events")

    def play(self, bots: Sequence[Bot], seed: int, max_events: int = 100_000) -> Any:
        """Play to the end; the outcome. Raises ``Stuck`` or ``RuntimeError``."""
        order_rng = random.Random(f"order/{seed}")
        while not self.game.is_over(self.state):
            if len(self.events) >= max_events:
                raise RuntimeError(f"game not over after {max_events} events")
            self.step(bots, order_rng)
        return self.game.outcome(self.state)


def sensible_bots(
    game: str, seats: int, seed: int, salt_source: Callable[[int], bytes] | None = None
) -> list[Bot]:
    """One sensible bot of ``game`` per seat, each with its own seed derived
    from ``seed`` (what ``nodealer demo`` and the session's bot seats use):
    the registered game's own :meth:`~engines.core.Game.sensible_bots`.
    ``salt_source(n)`` gives n secret bytes for Mao rule commitments (p2p
    passes ``secrets.token_bytes``; the engines never draw randomness)."""
    return engine_of(game).sensible_bots(seats, seed, salt_source)

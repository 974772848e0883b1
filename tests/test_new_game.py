"""A fourth game is one file (issue 15): a tiny game defined only in this
test module, registered with ``engines.core.register``, plays whole games
between real peers on 127.0.0.1 through the table machine and the session
— dealt, proven in zero knowledge, shown face up with the holder's keys,
audited and verified offline — with no edit anywhere else.

High card with a claim: each seat is dealt one hidden card; in seat order
each claims "high" or "low" and proves the claim without showing the card
(a ``prove`` request, as Bomb K12 uses); then each shows its card face up
with its own keys (an event whose ``shown()`` names it, as Mao M4 does).
The highest card wins."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import pytest
import trio

from engines.cards import Card
from engines.core import (
    Deal,
    Dealt,
    Event,
    Game,
    IllegalMove,
    Knowledge,
    Outcome,
    Prove,
    Proved,
    Request,
    register,
    to_data,
)
from table.bot_table import play_bot_table
from table.verify import verify_log

CARDS = tuple(Card(i) for i in (0, 4, 9, 13, 17, 22, 26, 30, 35, 39, 43, 48))
HIGH = tuple(c for c in CARDS if c.index % 13 >= 7)  # 8 and above
LOW = tuple(c for c in CARDS if c not in HIGH)


@dataclass(frozen=True)
class ClaimConfig:
    pass


@dataclass(frozen=True, slots=True)
class ClaimHigh(Event):
    KIND: ClassVar[str] = "claim"
    seat: int
    high: bool


@dataclass(frozen=True, slots=True)
class ShowCard(Event):
    KIND: ClassVar[str] = "show"
    seat: int
    position: int
    card: Card

    def shown(self) -> tuple[tuple[int, Card], ...]:
        return ((self.position, self.card),)


@dataclass(frozen=True)
class ClaimState:
    config: ClaimConfig
    seats: int
    dealt: tuple[int, ...] = ()
    claims: tuple[bool, ...] = ()  # in seat order
    proven: int = 0  # claims proven so far
    cheater: int = -1
    shown: tuple[Card, ...] = ()  # in seat order


class ClaimGame(Game[ClaimState, ClaimConfig]):
    name = "highclaim"
    min_seats, max_seats, default_seats = 2, 4, 3
    Config = ClaimConfig
    events = (ClaimHigh, ShowCard, Dealt, Proved)

    def deck(self, config: ClaimConfig) -> tuple[Card, ...]:
        return CARDS

    def new(self, config: ClaimConfig, seats: int) -> ClaimState:
        if not self.min_seats <= seats <= self.max_seats:
            raise IllegalMove("2 to 4 seats")
        return ClaimState(config, seats)

    def pending(self, state: ClaimState) -> tuple[Request, ...]:
        if state.cheater >= 0:
            return ()
        deals = tuple(Deal(s, (s,)) for s in range(state.seats) if s not in state.dealt)
        if deals:
            return deals
        if state.proven < len(state.claims):
            s = state.proven
            allowed = HIGH if state.claims[s] else LOW
            return (Prove(s, s, allowed, "high" if state.claims[s] else "low"),)
        return ()

    def legal_kinds(self, state: ClaimState, seat: int) -> frozenset[str]:
        if state.cheater >= 0 or len(state.dealt) < state.seats:
            return frozenset()
        if len(state.claims) == seat and state.proven == seat:
            return frozenset({"claim"})
        if state.proven == state.seats and len(state.shown) == seat:
            return frozenset({"show"})
        return frozenset()

    def _apply(self, state: ClaimState, event: Event) -> ClaimState:
        if isinstance(event, Dealt):
            return replace(state, dealt=(*state.dealt, event.seat))
        if isinstance(event, Proved):
            if not event.ok:
                return replace(state, cheater=event.seat)
            return replace(state, proven=state.proven + 1)
        if event.KIND not in self.legal_kinds(state, event.author or 0):
            raise IllegalMove(f"not now: {event}", seat=event.author)
        if isinstance(event, ClaimHigh):
            return replace(state, claims=(*state.claims, event.high))
        if isinstance(event, ShowCard):
            if event.position != event.seat:
                raise IllegalMove("show your own card", seat=event.seat)
            return replace(state, shown=(*state.shown, event.card))
        raise IllegalMove(f"unexpected {event}")

    def view(self, state: ClaimState, seat: int, known: Knowledge) -> dict[str, Any]:
        mine = known.get(seat)
        return {"mine": None if mine is None else mine.index, "shown": to_data(state.shown)}

    def outcome(self, state: ClaimState) -> Outcome | None:
        everyone = tuple(range(state.seats))
        if state.cheater >= 0:
            rest = tuple(s for s in everyone if s != state.cheater)
            return Outcome(rest, (state.cheater,), "a false claim", (state.cheater,))
        if len(state.shown) < state.seats:
            return None
        best = max(everyone, key=lambda s: state.shown[s].index % 13)
        return Outcome((best,), tuple(s for s in everyone if s != best), "highest card")

    def sensible_bots(
        self, seats: int, seed: int, salt_source: Callable[[int], bytes] | None = None
    ) -> list[Any]:
        return [HonestClaimer() for _ in range(seats)]


class HonestClaimer:
    """Claims what its card is, then shows it."""

    def act(self, game: Game, state: ClaimState, seat: int, known: Knowledge) -> Event | None:
        kinds = game.legal_kinds(state, seat)
        card = known.get(seat)
        if card is None:
            return None
        if "claim" in kinds:
            return ClaimHigh(seat, card in HIGH)
        if "show" in kinds:
            return ShowCard(seat, seat, card)
        return None


register(ClaimGame())


@pytest.mark.trio
@pytest.mark.slow
@pytest.mark.parametrize(("seats", "proven"), [(3, True), (2, False)])
async def test_a_game_defined_in_a_test_plays_between_real_peers(
    tmp_path, seats: int, proven: bool
) -> None:
    with trio.fail_after(120):
        peers = await play_bot_table(
            "highclaim", seats, tmp_path, proven=proven, seed=1, time_scale=0.02
        )
    outcomes = {str(p.result.outcome) for p in peers}
    assert len(outcomes) == 1
    for peer in peers:
        result = peer.result
        assert result.clean, result
        assert result.outcome is not None and result.outcome.reason == "highest card"
        report = verify_log(peer.log_path)
        assert report.exit_code == 0, report.lines()
        assert report.counts["proofs"] >= seats  # every claim proven in zero knowledge

"""The common engine interface (engines/core.py), exercised through a toy
game written the way a new game would be: one class, a few events."""

from __future__ import annotations

import doctest
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engines.core as core
from engines.cards import Card
from engines.core import (
    Deal,
    Dealt,
    Event,
    Game,
    IllegalMove,
    MalformedEvent,
    Outcome,
    Reveal,
    Revealed,
    TimerExpired,
    from_data,
    to_data,
)


@dataclass(frozen=True)
class HighCardConfig:
    rounds: int = 1


@dataclass(frozen=True)
class Show(Event):
    KIND: ClassVar[str] = "show"
    seat: int


@dataclass(frozen=True)
class HighCardState:
    config: HighCardConfig
    seats: int
    dealt: tuple[int, ...] = ()
    shown: tuple[int, ...] = ()
    faces: tuple[tuple[int, Card], ...] = ()


class HighCard(Game[HighCardState, HighCardConfig]):
    """Each seat is dealt one position, shows it; the highest index wins."""

    name = "highcard"
    min_seats, max_seats, default_seats = 2, 4, 2
    Config = HighCardConfig
    events = (Show, Dealt, Revealed, TimerExpired)

    def sensible_bots(self, seats: int, seed: int, salt_source: Any = None) -> list[Any]:
        return [ShowWhenDealt() for _ in range(seats)]

    def new(self, config: HighCardConfig, seats: int) -> HighCardState:
        if not self.min_seats <= seats <= self.max_seats:
            raise IllegalMove("2 to 4 seats")
        return HighCardState(config, seats)

    def pending(self, state: HighCardState) -> tuple[core.Request, ...]:
        deals = tuple(Deal(s, (s,)) for s in range(state.seats) if s not in state.dealt)
        reveals = tuple(Reveal((s,), "show") for s in state.shown if s not in dict(state.faces))
        return deals + reveals

    def _apply(self, state: HighCardState, event: Event) -> HighCardState:
        if isinstance(event, Dealt):
            if Deal(event.seat, event.positions) not in self.pending(state):
                raise IllegalMove("no such deal pending")
            return replace(state, dealt=(*state.dealt, event.seat))
        if isinstance(event, Show):
            if "show" not in self.legal_kinds(state, event.seat):
                raise IllegalMove("cannot show now", seat=event.seat)
            return replace(state, shown=(*state.shown, event.seat))
        if isinstance(event, Revealed):
            if Reveal(event.positions, "show") not in self.pending(state):
                raise IllegalMove("no such reveal pending")
            return replace(state, faces=(*state.faces, *event.faces.items()))
        raise IllegalMove(f"unexpected {event}")

    def legal_kinds(self, state: HighCardState, seat: int) -> frozenset[str]:
        ok = len(state.dealt) == state.seats and seat not in state.shown
        return frozenset({"show"} if ok else ())

    def view(self, state: HighCardState, seat: int, known: core.Knowledge) -> dict[str, Any]:
        mine = known.get(seat) if seat in state.dealt else None
        return {"mine": None if mine is None else mine.index, "faces": to_data(state.faces)}

    def outcome(self, state: HighCardState) -> Outcome | None:
        if len(state.faces) < state.seats:
            return None
        best = max(state.faces, key=lambda pc: pc[1])[0]
        rest = tuple(s for s in range(state.seats) if s != best)
        return Outcome((best,), rest, "highest card")


class ShowWhenDealt:
    """The toy game's bot: shows its card as soon as it may."""

    def act(self, game: Any, state: HighCardState, seat: int, known: Any) -> Event | None:
        return Show(seat) if "show" in game.legal_kinds(state, seat) else None


GAME = HighCard()


def play(events: list[Event]) -> HighCardState:
    state = GAME.new(HighCardConfig(), 2)
    for e in events:
        state = GAME.apply(state, e)
    return state


FULL = [
    Dealt(0, (0,)),
    Dealt(1, (1,)),
    Show(0),
    Show(1),
    Revealed((0,), (Card.parse("9♦"),)),
    Revealed((1,), (Card.parse("K♣"),)),
]


def test_doctests() -> None:
    assert doctest.testmod(core).failed == 0


def test_a_whole_toy_game_through_the_interface() -> None:
    state = GAME.new(HighCardConfig(), 2)
    assert GAME.pending(state) == (Deal(0, (0,)), Deal(1, (1,)))
    for e in FULL:
        assert not GAME.is_over(state)
        state = GAME.apply(state, e)
    assert GAME.is_over(state)
    assert GAME.outcome(state) == Outcome((1,), (0,), "highest card")
    with pytest.raises(IllegalMove, match="over"):
        GAME.apply(state, Show(0))


def test_illegal_move_leaves_state_unchanged_and_carries_reason() -> None:
    state = play(FULL[:2])
    before = GAME.encode(state)
    with pytest.raises(IllegalMove) as err:
        GAME.apply(state, Dealt(0, (0,)))
    assert err.value.reason == "no such deal pending" and err.value.penalty is None
    with pytest.raises(IllegalMove, match="no seat 7"):
        GAME.apply(state, Show(7))
    assert GAME.encode(state) == before
    assert str(IllegalMove("out of turn", penalty="talking", seat=2)) == (
        "seat 2: out of turn (penalty: talking)"
    )


def test_events_round_trip_through_msgpack() -> None:
    for e in [*FULL, TimerExpired("detonation")]:
        data = msgpack.unpackb(msgpack.packb(e.to_data(), use_bin_type=True), raw=False)
        assert GAME.decode_event(data) == e


def test_system_events_have_no_author() -> None:
    assert Show(1).author == 1
    assert Dealt(1, (1,)).author is None and Dealt.SYSTEM


@pytest.mark.parametrize(
    "data, message",
    [
        ([1, 2], "map"),
        ({"kind": 3}, "map"),
        ({"kind": "fly", "seat": 0}, "no event kind"),
        ({"kind": "show"}, "missing"),
        ({"kind": "show", "seat": 0, "x": 1}, "unexpected"),
        ({"kind": "show", "seat": True}, "integer"),
        ({"kind": "show", "seat": "0"}, "integer"),
        ({"kind": "dealt", "seat": 0, "positions": 5}, "list"),
        ({"kind": "dealt", "seat": 0, "positions": [1, 1]}, "repeat"),
        ({"kind": "dealt", "seat": 0, "positions": [-1]}, "non-negative"),
        ({"kind": "dealt", "seat": 0, "positions": list(range(5000))}, "at most"),
        ({"kind": "revealed", "positions": [1], "cards": [999]}, "card index"),
        ({"kind": "revealed", "positions": [1, 2], "cards": [3]}, "one card"),
        ({"kind": "timer", "purpose": "x" * 300}, "text"),
    ],
)
def test_decode_refuses_malformed_data(data: Any, message: str) -> None:
    with pytest.raises(MalformedEvent, match=message):
        GAME.decode_event(data)


def test_decode_config_is_strict() -> None:
    assert GAME.decode_config({"rounds": 3}) == HighCardConfig(3)
    with pytest.raises(MalformedEvent):
        GAME.decode_config({"rounds": 3.0})
    with pytest.raises(MalformedEvent):
        from_data(Outcome, {"winners": [0], "losers": [], "reason": 1, "cheaters": []})


_ANY_DATA = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.binary(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)
# maps with a real kind and plausible fields, so some data does decode
# (arbitrary maps alone never name a kind: the round trip was never reached)
_FIELD = st.integers(-2, 60) | st.lists(st.integers(-2, 60), max_size=3) | st.text(max_size=5)
_NEAR_EVENT = st.sampled_from(GAME.events).flatmap(
    lambda cls: st.fixed_dictionaries(
        {"kind": st.just(cls.KIND), **{f.name: _FIELD for f in fields(cls)}},
        optional={"extra": _ANY_DATA},
    )
)


@settings(max_examples=300, deadline=None)
@given(_ANY_DATA | _NEAR_EVENT)
def test_arbitrary_data_never_crashes_decode(data: Any) -> None:
    try:
        event = GAME.decode_event(data)
    except MalformedEvent:
        return
    assert GAME.decode_event(event.to_data()) == event


def test_view_never_shows_another_seats_face() -> None:
    state = play(FULL[:2])
    known_to_1 = {0: Card.parse("9♦"), 1: Card.parse("K♣")}  # a leaky mapping
    assert GAME.view(state, 1, known_to_1)["mine"] == Card.parse("K♣").index


def test_encoding_is_deterministic_and_outcome_encodes() -> None:
    a, b = play(FULL), play(list(FULL))
    assert GAME.encode(a) == GAME.encode(b)
    assert to_data(GAME.outcome(a)) == {
        "winners": [1],
        "losers": [0],
        "reason": "highest card",
        "cheaters": [],
    }


def test_game_lookup_refuses_non_games() -> None:
    for name in ("core", "cards", "nope", "../x", "bots"):
        with pytest.raises(KeyError):
            core.game(name)

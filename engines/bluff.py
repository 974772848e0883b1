"""Bluff / 吹牛 (GAMES.md B1–B13): face-down plays with claims that may lie.

Theory of operation
-------------------
The public state knows, for every deck position, which zone holds it (a
seat's hand, the pile, or set aside) and, only once it has been turned up,
its face. A play moves positions from a hand to the pile with a ``Claim``
("3 × 7"); the engine never sees the placed faces unless the play is
challenged, when the session reveals exactly that play's positions (B7).

Phases, in order::

    deal ──► starter ──► play ⇄ challenge ──► (transfer) ──► play … ──► over
                            └──► last claim (claimant's hand empty) ──┘

* deal (B1): the deck (52, or 54 with the joker variant B8) is split evenly;
  seat ``s`` gets positions ``s*h … s*h+h-1`` with ``h = n // seats``; the
  remaining ``n % seats`` positions are set aside face down, unused.
* starter (B3): the A♠ holder shows it (``show``; the session reveals that
  position). If nobody has shown within ``config.show_seconds`` (A♠ may be set
  aside with 3+ players), a jointly drawn random seat starts. With
  ``config.start = random`` the draw is made at once. A ``show`` whose card is
  not A♠ turns the card face up, marks the seat as a cheater, and the wait
  goes on.
* play (B4–B6): the seat on turn places one or more of its positions and
  claims X × Y; X need not equal the number placed. The claim must beat the
  standing claim (B5: larger X, or same X and higher rank; A lowest). With
  twos reset (B9) a claim of rank 2 is always allowed — the 2 is the reset
  card — and after it the next claim may be anything. Only the latest play
  may be challenged (B6/B7), by any seat other than its claimant (B13: the
  first challenge in the log counts), until the next play is made.
* challenge (B7/B8/B10): the session reveals the latest play. Fewer than X
  cards of rank Y (jokers count as any rank under B8) and the claimant takes
  the whole pile; otherwise the challenger does. Hidden pile positions placed
  by others move to the taker with a ``transfer`` request. The pile empties,
  the claim sequence starts over and the challenger plays next (B10).
* last claim (B11): a play that empties the claimant's hand must either be
  challenged or let stand (``accept``, by the next seat). Standing — accepted,
  or a failed challenge — wins (B11; a failed challenge leaves the other
  player holding all the cards, which is B12). A seat due to play with no
  cards also wins (B12).

B13 (3–6 seats, classic Cheat) uses the same rules; turns go round in seat
order. What this engine is bad at: it cannot tell a truthful play from a lie
until a challenge, by design; it does not enumerate plays (any subset of a
hand with any claim), ``apply`` is the full check.

>>> str(Claim.parse("3x7")), Claim(2, 12).beats(Claim(2, 11))
('3 × 7', True)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, ClassVar

from engines.cards import Card, full_deck, parse_rank, rank_name
from engines.core import (
    COMMON_EVENTS,
    Deal,
    Dealt,
    Event,
    Game,
    IllegalMove,
    Knowledge,
    Outcome,
    RandomDraw,
    RandomValue,
    Request,
    Reveal,
    Revealed,
    Timer,
    TimerExpired,
    Transfer,
    Transferred,
    register,
    to_data,
)

ACE_OF_SPADES = Card.parse("A♠")
MAX_CLAIM = 54
"""No claim may name more cards than a deck holds."""


class Start(StrEnum):
    """Who starts (B3)."""

    ACE_OF_SPADES = "ace_of_spades"
    RANDOM = "random"


@dataclass(frozen=True, slots=True)
class BluffConfig:
    """Table options: B8 jokers, B9 twos reset, B3 starting rule."""

    jokers: bool = False
    twos_reset: bool = False
    start: Start = Start.ACE_OF_SPADES
    show_seconds: int = 10

    def __post_init__(self) -> None:
        if not 1 <= self.show_seconds <= 3600:
            raise ValueError("show_seconds must be 1…3600")


@dataclass(frozen=True, slots=True, order=True)
class Claim:
    """ "X cards of rank Y" (B4), e.g. ``Claim(3, 7)`` is ``3 × 7``."""

    count: int
    rank: int

    def __post_init__(self) -> None:
        if not 1 <= self.count <= MAX_CLAIM:
            raise ValueError(f"a claim names 1…{MAX_CLAIM} cards, not {self.count}")
        if not 1 <= self.rank <= 13:
            raise ValueError(f"a claim's rank is 1…13 (A…K), not {self.rank}")

    @classmethod
    def parse(cls, text: str) -> Claim:
        """``'3x7'``, ``'3 × Q'``, ``'2*A'``."""
        for sep in ("×", "x", "X", "*"):
            if sep in text:
                count, _, rank = text.partition(sep)
                return cls(int(count.strip()), parse_rank(rank))
        raise ValueError(f"not a claim: {text!r} (try '3 × 7')")

    def beats(self, other: Claim | None) -> bool:
        """B5: more cards, or as many of a higher rank (A lowest)."""
        return other is None or (self.count, self.rank) > (other.count, other.rank)

    def __str__(self) -> str:
        return f"{self.count} × {rank_name(self.rank)}"


# -- events ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PlayFaceDown(Event):
    """B4: ``seat`` places ``positions`` face down and claims ``claim``."""

    KIND: ClassVar[str] = "play"
    seat: int
    positions: tuple[int, ...]
    claim: Claim

    def __post_init__(self) -> None:
        if not self.positions:
            raise ValueError("a play places at least one card")
        if len(set(self.positions)) != len(self.positions):
            raise ValueError("a play repeats a position")

    def __str__(self) -> str:
        return f"seat {self.seat} places {len(self.positions)}, claims {self.claim}"


@dataclass(frozen=True, slots=True)
class Challenge(Event):
    """B6/B7: "吹牛!" — ``seat`` challenges the latest play."""

    KIND: ClassVar[str] = "challenge"
    seat: int

    def __str__(self) -> str:
        return f"seat {self.seat} challenges: 吹牛!"


@dataclass(frozen=True, slots=True)
class Accept(Event):
    """B11: the next seat lets a hand-emptying claim stand."""

    KIND: ClassVar[str] = "accept"
    seat: int

    def __str__(self) -> str:
        return f"seat {self.seat} lets the claim stand"


@dataclass(frozen=True, slots=True)
class Show(Event):
    """B3: ``seat`` shows that the card at ``position`` is A♠."""

    KIND: ClassVar[str] = "show"
    seat: int
    position: int

    def __str__(self) -> str:
        return f"seat {self.seat} shows #{self.position} as A♠"


# -- state ----------------------------------------------------------------------
class Phase(StrEnum):
    DEAL = "deal"
    STARTER = "starter"
    PLAY = "play"
    LAST_CLAIM = "last_claim"
    CHALLENGE = "challenge"
    TRANSFER = "transfer"
    OVER = "over"


@dataclass(frozen=True, slots=True)
class PileEntry:
    """One face-down play on the pile."""

    seat: int
    positions: tuple[int, ...]
    claim: Claim


@dataclass(frozen=True, slots=True)
class BluffState:
    """The public state. ``public`` lists (position, face) for every card
    turned up so far, sorted by position."""

    config: BluffConfig
    seats: int
    phase: Phase
    hands: tuple[tuple[int, ...], ...]
    aside: tuple[int, ...]
    dealt: tuple[int, ...] = ()
    pile: tuple[PileEntry, ...] = ()
    claim: Claim | None = None
    last_open: bool = False
    turn: int = 0
    showing: int | None = None
    draw_starter: bool = False
    challenger: int | None = None
    transfer_to: int | None = None
    transfer: tuple[int, ...] = ()
    public: tuple[tuple[int, Card], ...] = ()
    winner: int | None = None
    reason: str = ""
    cheaters: tuple[int, ...] = ()

    @property
    def last(self) -> PileEntry | None:
        return self.pile[-1] if self.pile else None

    def holder(self, position: int) -> int | None:
        for seat, hand in enumerate(self.hands):
            if position in hand:
                return seat
        return None

    def face(self, position: int) -> Card | None:
        for p, card in self.public:
            if p == position:
                return card
        return None


def _next(state: BluffState, seat: int) -> int:
    return (seat + 1) % state.seats


def _with_faces(state: BluffState, faces: dict[int, Card]) -> tuple[tuple[int, Card], ...]:
    merged = dict(state.public)
    merged.update(faces)
    return tuple(sorted(merged.items()))


def _give(hands: tuple[tuple[int, ...], ...], seat: int, positions: tuple[int, ...]):
    return tuple(tuple(sorted((*h, *positions))) if s == seat else h for s, h in enumerate(hands))


class Bluff(Game[BluffState, BluffConfig]):
    name = "bluff"
    min_seats, max_seats = 2, 6
    default_seats = 2
    Config = BluffConfig
    events = (PlayFaceDown, Challenge, Accept, Show, *COMMON_EVENTS)

    def deck(self, config: BluffConfig) -> tuple[Card, ...]:
        return tuple(full_deck(1, jokers=config.jokers))  # B1, B8

    def new(self, config: BluffConfig, seats: int) -> BluffState:
        if not self.min_seats <= seats <= self.max_seats:
            raise IllegalMove(f"Bluff is for 2 to 6 seats (B13), not {seats}")
        n = len(self.deck(config))
        h = n // seats
        hands = tuple(tuple(range(s * h, s * h + h)) for s in range(seats))
        return BluffState(config, seats, Phase.DEAL, hands, tuple(range(seats * h, n)))  # B1

    # -- what the session must do ----------------------------------------------------
    def pending(self, state: BluffState) -> tuple[Request, ...]:
        if state.phase is Phase.DEAL:
            return tuple(
                Deal(s, state.hands[s]) for s in range(state.seats) if s not in state.dealt
            )
        if state.phase is Phase.STARTER:
            if state.showing is not None:
                return (Reveal((state.showing,), "starter"),)
            if _waiting_for_show(state):
                return (Timer("starter", state.config.show_seconds),)
            return (RandomDraw("starter", state.seats),)
        if state.phase is Phase.CHALLENGE:
            return (Reveal(state.last.positions, "challenge"),)  # type: ignore[union-attr]
        if state.phase is Phase.TRANSFER:
            return (Transfer(state.transfer_to, state.transfer),)  # type: ignore[arg-type]
        return ()

    def legal_kinds(self, state: BluffState, seat: int) -> frozenset[str]:
        kinds: set[str] = set()
        last = state.last
        if state.phase is Phase.STARTER and _waiting_for_show(state):
            if state.hands[seat]:
                kinds.add("show")
        elif state.phase is Phase.PLAY:
            if seat == state.turn and state.hands[seat]:
                kinds.add("play")
            if state.last_open and last is not None and seat != last.seat:
                kinds.add("challenge")
        elif state.phase is Phase.LAST_CLAIM and last is not None:
            if seat != last.seat:
                kinds.add("challenge")
            if seat == state.turn:
                kinds.add("accept")
        return frozenset(kinds)

    # -- rules -------------------------------------------------------------------------
    def _apply(self, state: BluffState, event: Event) -> BluffState:
        if not event.SYSTEM and event.KIND not in self.legal_kinds(state, event.author):  # type: ignore[arg-type]
            raise IllegalMove(_why_not(state, event), seat=event.author)
        match event:
            case Dealt():
                return self._dealt(state, event)
            case Show():
                return self._show(state, event)
            case Revealed():
                return self._revealed(state, event)
            case TimerExpired():
                if Timer(event.purpose, state.config.show_seconds) not in self.pending(state):
                    raise IllegalMove(f"no timer {event.purpose!r} is running")
                return replace(state, draw_starter=True)  # B3: nobody showed; draw a starter
            case RandomValue():
                if RandomDraw(event.purpose, state.seats) not in self.pending(state):
                    raise IllegalMove(f"no random draw {event.purpose!r} is pending")
                if not 0 <= event.value < state.seats:
                    raise IllegalMove(f"random starter {event.value} is not a seat")
                return replace(state, phase=Phase.PLAY, turn=event.value, draw_starter=False)
            case PlayFaceDown():
                return self._play(state, event)
            case Challenge():
                return replace(state, phase=Phase.CHALLENGE, challenger=event.seat)
            case Accept():  # B11: the claim stands and the hand is empty
                return _win(state, state.last.seat, "B11: hand empty, last claim stood")  # type: ignore[union-attr]
            case Transferred():
                if Transfer(event.seat, event.positions) not in self.pending(state):
                    raise IllegalMove("no such transfer is pending")
                state = replace(state, phase=Phase.PLAY, transfer=(), transfer_to=None)
                return _check_b12(state)
        raise IllegalMove(f"{event.KIND} is not a Bluff event")  # pragma: no cover

    def _dealt(self, state: BluffState, event: Dealt) -> BluffState:
        if Deal(event.seat, event.positions) not in self.pending(state):
            raise IllegalMove(f"no deal of {list(event.positions)} to seat {event.seat} pending")
        state = replace(state, dealt=(*state.dealt, event.seat))
        if len(state.dealt) == state.seats:
            state = replace(state, phase=Phase.STARTER)
        return state

    def _show(self, state: BluffState, event: Show) -> BluffState:
        if event.position not in state.hands[event.seat]:
            raise IllegalMove(f"#{event.position} is not in your hand", seat=event.seat)
        return replace(state, showing=event.position)

    def _revealed(self, state: BluffState, event: Revealed) -> BluffState:
        request = next((r for r in self.pending(state) if isinstance(r, Reveal)), None)
        if request is None or request.positions != event.positions:
            raise IllegalMove("no reveal of these positions is pending")
        state = replace(state, public=_with_faces(state, event.faces))
        if request.purpose == "starter":  # B3
            (card,) = event.cards
            seat = state.holder(event.positions[0])
            if card == ACE_OF_SPADES:
                return replace(state, phase=Phase.PLAY, turn=seat, showing=None)
            return replace(state, showing=None, cheaters=_add(state.cheaters, seat))
        return self._judge(state, event.cards)

    def _judge(self, state: BluffState, cards: tuple[Card, ...]) -> BluffState:
        """B7/B8/B10: settle a challenge from the turned-up latest play."""
        last, challenger = state.last, state.challenger
        assert last is not None and challenger is not None
        wild = state.config.jokers
        matching = sum(1 for c in cards if c.rank == last.claim.rank or (wild and c.is_joker))
        claim_stands = matching >= last.claim.count
        taker = challenger if claim_stands else last.seat
        everything = tuple(p for entry in state.pile for p in entry.positions)
        hidden = tuple(
            sorted(
                p
                for entry in state.pile
                if entry.seat != taker
                for p in entry.positions
                if state.face(p) is None
            )
        )
        state = replace(
            state,
            hands=_give(state.hands, taker, everything),
            pile=(),
            claim=None,
            last_open=False,
            challenger=None,
            turn=challenger,  # B10: the challenger plays next, whatever the outcome
        )
        if claim_stands and not state.hands[last.seat]:
            # the game ends before the pile's hidden cards reach the taker:
            # they stay unknown to it (view keeps them hidden)
            state = replace(state, transfer_to=taker, transfer=hidden)
            return _win(state, last.seat, "B11/B12: hand empty, challenge failed")
        if hidden:
            return replace(state, phase=Phase.TRANSFER, transfer_to=taker, transfer=hidden)
        return _check_b12(replace(state, phase=Phase.PLAY))

    def _play(self, state: BluffState, event: PlayFaceDown) -> BluffState:
        hand = state.hands[event.seat]
        missing = [p for p in event.positions if p not in hand]
        if missing:
            raise IllegalMove(f"{missing} are not in your hand", seat=event.seat)
        reset = state.config.twos_reset and event.claim.rank == 2  # B9
        if not reset and not event.claim.beats(state.claim):
            raise IllegalMove(
                f"claim {event.claim} does not beat {state.claim} (B5: more cards, "
                "or as many of a higher rank)",
                seat=event.seat,
            )
        hands = tuple(
            tuple(p for p in h if p not in event.positions) if s == event.seat else h
            for s, h in enumerate(state.hands)
        )
        state = replace(
            state,
            hands=hands,
            pile=(*state.pile, PileEntry(event.seat, event.positions, event.claim)),
            claim=None if reset else event.claim,
            last_open=True,
            turn=_next(state, event.seat),
        )
        if not hands[event.seat]:
            return replace(state, phase=Phase.LAST_CLAIM)  # B11: challenge or accept
        return state

    # -- reading the state -----------------------------------------------------------
    def legal_claims(self, state: BluffState, limit: int = MAX_CLAIM) -> list[Claim]:
        """B5/B9: every claim a play may make now, lowest first (more cards,
        or as many of a higher rank, A lowest; rank 2 always with twos
        reset), up to ``limit`` cards: what a screen offers instead of
        validating guesses."""
        out = [
            Claim(count, rank)
            for count in range(1, limit + 1)
            for rank in range(1, 14)
            if Claim(count, rank).beats(state.claim) or (state.config.twos_reset and rank == 2)
        ]
        return out

    def view(self, state: BluffState, seat: int, known: Knowledge) -> dict[str, Any]:
        # own faces only once the session has delivered them (deal, transfer)
        mine = set(state.hands[seat]) if seat in state.dealt else set()
        mine -= set(state.transfer)

        def face(p: int) -> int | None:
            card = state.face(p)
            if card is None and p in mine:
                card = known.get(p)
            return None if card is None else card.index

        last = state.last
        return {
            "game": self.name,
            "seat": seat,
            "phase": state.phase.value,
            "turn": state.turn,
            "hand": [[p, face(p)] for p in state.hands[seat]],
            "counts": [len(h) for h in state.hands],
            "pile": sum(len(e.positions) for e in state.pile),
            "claim": None if state.claim is None else str(state.claim),
            "last": None
            if last is None
            else {"seat": last.seat, "placed": len(last.positions), "claim": str(last.claim)},
            "may": sorted(self.legal_kinds(state, seat)),
            "public": to_data(state.public),
            "aside": len(state.aside),
            "winner": state.winner,
        }

    def outcome(self, state: BluffState) -> Outcome | None:
        if state.winner is None:
            return None
        losers = tuple(s for s in range(state.seats) if s != state.winner)
        return Outcome((state.winner,), losers, state.reason, state.cheaters)


def _waiting_for_show(state: BluffState) -> bool:
    """B3: the A♠ holder may show it (nothing is being revealed or drawn)."""
    return (
        state.config.start is Start.ACE_OF_SPADES
        and state.showing is None
        and not state.draw_starter
    )


def _add(seats: tuple[int, ...], seat: int | None) -> tuple[int, ...]:
    return seats if seat is None or seat in seats else tuple(sorted((*seats, seat)))


def _win(state: BluffState, seat: int, reason: str) -> BluffState:
    return replace(state, phase=Phase.OVER, winner=seat, reason=reason)


def _check_b12(state: BluffState) -> BluffState:
    if state.phase is Phase.PLAY and not state.hands[state.turn]:
        return _win(state, state.turn, "B12: no cards left to play")
    return state


def _why_not(state: BluffState, event: Event) -> str:
    if state.phase in (Phase.DEAL, Phase.CHALLENGE, Phase.TRANSFER) or state.showing is not None:
        return f"waiting for the table ({state.phase.value}); {event.KIND} is not possible now"
    if event.KIND == "play" and state.phase is Phase.PLAY:
        return f"it is seat {state.turn}'s turn to play"
    if event.KIND == "challenge":
        return "only the latest play may be challenged, by another seat, before the next play"
    return f"{event.KIND} is not possible in phase {state.phase.value}"


GAME = register(Bluff())

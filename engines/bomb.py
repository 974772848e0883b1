"""糊涂炸弹, the Bomb game (GAMES.md K1–K25), 3 to 9 seats.

Theory of operation
-------------------
One 54-card deck (K1). Seat ``s`` is dealt position ``s`` as its identity
card (K2), which stays hidden until the game ends; positions ``seats … 53``
are the draw pile, top first. The engine never learns an identity before the
end, so it cannot check plays of kind A and B (K12) itself:

* A play names its positions, the faces the player says they are, and its
  kind. Kind C (a pair, or 3+ cards in an arithmetic sequence, A as 1 or 14,
  jokers wild) is checked on the named faces at once. Kinds A (1–3 cards, one
  related to the identity) and B (the whole hand, none related) are checked
  for shape at once, and the session is asked (``prove`` request) for a
  zero-knowledge proof that the identity lies in the set of faces that would
  make the play legal; it answers with a ``verdict`` event.
* The played positions are revealed (``reveal``, purpose ``play``); faces
  that differ from the named ones, or a failed proof, are cheating: the game
  ends at once naming the seat. Once revealed (and, for A/B, proven) the cards
  go face up into the public area (K14).
* Every accepted A/B play is kept and re-checked against the identities
  revealed at the end (K17); a violation names the seat and takes it out of
  the winners.

Flow (K8–K16): rounds. At a round's start the bomb holder refills to 5
(K9); the first seat of a round is the one after the seat that acted last
(the first round: a jointly drawn seat, K10). A seat with no cards draws 5 at
the start of its turn (K11: "may" — without cards no play is possible, so
the engine draws). Draws come from the top of the draw pile; when it runs out
the discard pile is reshuffled into fresh positions (``reshuffle`` request,
K9). When the area reaches 7 cards the round ends (K14): exactly 7 and the
player places the bomb in front of any seat (K15); more and the bomb goes in
front of the player. Then a detonation window opens (``timer`` purpose
``detonation``, 10 s by default, K16): any seat may ``detonate`` (K17) or
``pass``; if all pass or time runs out, the area goes to the discard pile,
the bomb stays and the next round starts. (Tables of protocol v3,
``state.race``, set by :meth:`Bomb.new_for`:) a detonation does not end the game at once: the window
stays open for the ``race`` timer (:data:`RACE_SECONDS`) and every seat
that detonates before it closes is a detonator; one detonator is the
assassin, several draw the assassin by lot (a joint random draw, purpose
``assassin``), so two shouts that cross are not ordered by whoever
sequences the log (issue 28). v2 logs keep K17 as written: the first
detonation in the log. The ``time-limit`` timer (K25,
default one hour, ``config.time_limit``) ends the game without a winner
alliance. At the end the identities are revealed (``reveal`` purpose
``identities``) and judged (K4, K18–K24).

Choices where the seed is silent, written down:

* K4 roles use identity ranks A(1) < 2 < … < K; a joker is a civilian.
* The "assassin's alliance" of K18–K23 is the side the assassin plays for:
  a traitor plays for the enemy alliance (K5, K21), so a traitor who
  detonates makes the enemy alliance lose (K20).
* K15: the bomb may be placed in front of any seat, the placer's own
  included; K16: anyone may detonate, the target included.
* A seat with no cards and nothing left to draw is skipped.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import lru_cache
from itertools import product
from typing import Any, ClassVar

from engines.cards import Card, Suit, full_deck
from engines.core import (
    COMMON_EVENTS,
    Deal,
    Dealt,
    Event,
    Game,
    IllegalMove,
    Knowledge,
    Outcome,
    Prove,
    Proved,
    RandomDraw,
    RandomValue,
    Request,
    Reshuffle,
    Reshuffled,
    Reveal,
    Revealed,
    Timer,
    TimerExpired,
    register,
    to_data,
)

AREA_SIZE = 7
"""K8/K14: the public area holds 7; a round ends at 7 or more."""
DECK = tuple(full_deck(1))


# -- the card relations -----------------------------------------------------------
def _relates(a: Card, b: Card) -> bool:
    return a.is_joker or b.is_joker or a.suit == b.suit or a.rank == b.rank


_RELATED = tuple(tuple(_relates(a, b) for b in DECK) for a in DECK)


def related(a: Card, b: Card) -> bool:
    """K7: same suit or same rank; a joker relates to every card."""
    return _RELATED[a.index % 54][b.index % 54]


@lru_cache(maxsize=4096)
def related_faces(cards: tuple[Card, ...]) -> tuple[Card, ...]:
    """Identities for which a kind-A play of ``cards`` is legal (K12 A)."""
    return tuple(i for i in DECK if any(_RELATED[i.index][c.index % 54] for c in cards))


@lru_cache(maxsize=4096)
def unrelated_faces(cards: tuple[Card, ...]) -> tuple[Card, ...]:
    """Identities for which a kind-B play of ``cards`` is legal (K12 B)."""
    return tuple(i for i in DECK if not any(_RELATED[i.index][c.index % 54] for c in cards))


def honest(play: PlayRecord, identity: Card) -> bool:
    """The end-of-game re-check of one play against the revealed identity."""
    hits = any(related(identity, c) for c in play.cards)
    if play.rule is Kind.A:
        return hits
    if play.rule is Kind.B:
        return not hits
    return is_pattern(play.cards)


def is_pattern(cards: tuple[Card, ...]) -> bool:
    """K12 C: a pair (two equal ranks) or 3+ cards in an arithmetic sequence,
    suits ignored, A as 1 or 14, jokers wild (K6)."""
    return _is_pattern(tuple(sorted(c.rank for c in cards)))


@lru_cache(maxsize=4096)
def _is_pattern(ranks: tuple[int, ...]) -> bool:
    n = len(ranks)
    fixed = [r for r in ranks if r != 0]  # rank 0 is a joker
    if n == 2:
        return len(fixed) < 2 or fixed[0] == fixed[1]
    if n < 3 or n > 14:
        return False
    for values in product(*[(1, 14) if r == 1 else (r,) for r in fixed]):
        need = Counter(values)
        for step in range(0, 14):
            for first in range(1, 15):
                last = first + (n - 1) * step
                if last > 14:
                    break
                if not need - Counter(first + i * step for i in range(n)):
                    return True
    return False


# -- identities and roles (K3, K4) ----------------------------------------------------
class Role(StrEnum):
    CAPTAIN = "captain"
    MEMBER = "member"
    TRAITOR = "traitor"
    CIVILIAN = "civilian"


class Alliance(StrEnum):
    BLACK = "black"
    RED = "red"

    @property
    def enemy(self) -> Alliance:
        return Alliance.RED if self is Alliance.BLACK else Alliance.BLACK


def alliance_of(card: Card) -> Alliance | None:
    """K3: ♠♣ black, ♥♦ red, jokers none (civilians)."""
    if card.is_joker:
        return None
    return Alliance.RED if card.suit in (Suit.HEARTS, Suit.DIAMONDS) else Alliance.BLACK


def roles(identities: tuple[Card, ...]) -> tuple[Role, ...]:
    """K4: per suit, the highest identity is captain, the lowest traitor, the
    rest members; a suit held by one seat has only a captain."""
    held: dict[Suit, list[int]] = {}
    for card in identities:
        if not card.is_joker:
            held.setdefault(card.suit, []).append(card.rank)
    out: list[Role] = []
    for card in identities:
        if card.is_joker:
            out.append(Role.CIVILIAN)
            continue
        ranks = held[card.suit]
        if card.rank == max(ranks):
            out.append(Role.CAPTAIN)
        elif card.rank == min(ranks):
            out.append(Role.TRAITOR)
        else:
            out.append(Role.MEMBER)
    return tuple(out)


def side_of(card: Card, role: Role) -> Alliance | None:
    """The alliance a seat wins and loses with (K5/K21: traitors with the enemy)."""
    alliance = alliance_of(card)
    if alliance is None:
        return None
    return alliance.enemy if role is Role.TRAITOR else alliance


# -- config, events, requests ---------------------------------------------------------
RACE_SECONDS = 1
"""(v3) how long the window stays open after the first detonation: long
enough for a shout that crossed it on the wire, short enough that a seat
seeing it cannot weigh its own for long"""


@dataclass(frozen=True, slots=True)
class BombConfig:
    """K25 ``time_limit`` seconds (0: none), K16 ``detonation_seconds``,
    K9/K11 ``hand_size``."""

    time_limit: int = 3600
    detonation_seconds: int = 10
    hand_size: int = 5

    def __post_init__(self) -> None:
        if not 0 <= self.time_limit <= 7 * 24 * 3600:
            raise ValueError("time_limit must be 0 (none) … one week")
        if not 1 <= self.detonation_seconds <= 600:
            raise ValueError("detonation_seconds must be 1…600")
        if not 1 <= self.hand_size <= 5:
            raise ValueError("hand_size must be 1…5")


class Kind(StrEnum):
    """K12: the three ways to play."""

    A = "A"  # 1–3 cards, at least one related to the identity
    B = "B"  # the whole hand, none related to the identity
    C = "C"  # a pair or an arithmetic sequence


@dataclass(frozen=True, slots=True)
class PlayToArea(Event):
    """K12: ``seat`` plays ``positions``, naming their faces ``cards``."""

    KIND: ClassVar[str] = "play"
    seat: int
    positions: tuple[int, ...]
    cards: tuple[Card, ...]
    rule: Kind

    def __post_init__(self) -> None:
        if not self.positions:
            raise ValueError("a play puts at least one card out")
        if len(set(self.positions)) != len(self.positions):
            raise ValueError("a play repeats a position")
        if len(self.cards) != len(self.positions):
            raise ValueError("name one face per position")
        if len(set(self.cards)) != len(self.cards) or any(c.index >= 54 for c in self.cards):
            raise ValueError("faces must be distinct cards of one deck")

    def __str__(self) -> str:
        return f"seat {self.seat} plays {' '.join(map(str, self.cards))} ({self.rule.value})"


@dataclass(frozen=True, slots=True)
class PlaceBomb(Event):
    """K15: with exactly 7 in the area, ``seat`` places the bomb at ``target``."""

    KIND: ClassVar[str] = "place_bomb"
    seat: int
    target: int

    def __str__(self) -> str:
        return f"seat {self.seat} places the bomb in front of seat {self.target}"


@dataclass(frozen=True, slots=True)
class Detonate(Event):
    """K16/K17: "炸掉!" — ``seat`` detonates and becomes the assassin."""

    KIND: ClassVar[str] = "detonate"
    seat: int

    def __str__(self) -> str:
        return f"seat {self.seat}: 炸掉!"


@dataclass(frozen=True, slots=True)
class Pass(Event):
    """K16: ``seat`` will not detonate this round."""

    KIND: ClassVar[str] = "pass"
    seat: int

    def __str__(self) -> str:
        return f"seat {self.seat} passes"


# -- state --------------------------------------------------------------------
class Phase(StrEnum):
    IDENTITIES = "identities"  # dealing identity cards
    STARTER = "starter"  # drawing the first seat
    TURN = "turn"  # a seat must play (after any draws)
    PLAYING = "playing"  # a play awaits its reveal (and proof)
    PLACE_BOMB = "place_bomb"  # exactly 7: the player places the bomb
    WINDOW = "window"  # detonation window
    LOT = "lot"  # (v3) several detonated at once: the assassin is drawn by lot
    JUDGING = "judging"  # identities being revealed
    OVER = "over"


@dataclass(frozen=True, slots=True)
class PlayRecord:
    """One play: accepted plays of kind A/B are re-checked at the end."""

    seat: int
    positions: tuple[int, ...]
    cards: tuple[Card, ...]
    rule: Kind
    proven: bool = False
    revealed: bool = False


@dataclass(frozen=True, slots=True)
class BombState:
    """The public state. ``work`` is the queue of blocking deals and
    reshuffles; ``faces`` the face-up cards (area and discard pile)."""

    config: BombConfig
    seats: int
    phase: Phase
    draw: tuple[int, ...]
    hands: tuple[tuple[int, ...], ...]
    discard: tuple[int, ...] = ()
    area: tuple[int, ...] = ()
    faces: tuple[tuple[int, Card], ...] = ()
    work: tuple[Request, ...] = ()
    next_position: int = len(DECK)
    round: int = 0
    turn: int = 0
    last_actor: int = 0
    bomb: int | None = None
    play: PlayRecord | None = None
    history: tuple[PlayRecord, ...] = ()
    passed: tuple[int, ...] = ()
    detonators: tuple[int, ...] = ()  # (v3) who detonated in this window, by seat
    race: bool = False
    """(v3) detonations that cross draw lots (K17 as a race, see the
    module's docstring); False (v2 logs): the first in the log is the assassin"""
    assassin: int | None = None
    ended_by: str = ""
    identities: tuple[Card, ...] = ()
    result: Outcome | None = None

    def face(self, position: int) -> Card | None:
        for p, card in self.faces:
            if p == position:
                return card
        return None


def _hand_without(
    state: BombState, seat: int, gone: tuple[int, ...]
) -> tuple[tuple[int, ...], ...]:
    return tuple(
        tuple(p for p in h if p not in gone) if s == seat else h for s, h in enumerate(state.hands)
    )


def _draw(state: BombState, seat: int, count: int) -> BombState:
    """Move up to ``count`` positions from the draw pile into ``seat``'s hand,
    queueing the private deals (and a reshuffle when the pile runs out, K9)."""
    draw, work, hands = state.draw, list(state.work), list(state.hands)
    faces, discard, nxt = dict(state.faces), state.discard, state.next_position
    while count > 0:
        if not draw:
            if not discard:
                break
            new = tuple(range(nxt, nxt + len(discard)))
            work.append(Reshuffle(discard, new))
            for p in discard:
                faces.pop(p, None)
            draw, discard, nxt = new, (), nxt + len(new)
        taken, draw = draw[:count], draw[count:]
        hands[seat] = (*hands[seat], *taken)
        work.append(Deal(seat, taken))
        count -= len(taken)
    return replace(
        state,
        draw=draw,
        work=tuple(work),
        hands=tuple(hands),
        faces=tuple(sorted(faces.items())),
        discard=discard,
        next_position=nxt,
    )


def _start_turn(state: BombState, seat: int) -> BombState:
    """K11: a seat without cards draws 5; one that cannot draw is skipped."""
    for _ in range(state.seats):
        if not state.hands[seat]:
            state = _draw(state, seat, state.config.hand_size)
        if state.hands[seat]:
            return replace(state, phase=Phase.TURN, turn=seat)
        seat = (seat + 1) % state.seats
    raise AssertionError("no seat holds or can draw a card")  # 54 cards: unreachable


def _start_round(state: BombState, first: int) -> BombState:
    """K9/K10: discard the area, the bomb holder refills, ``first`` plays."""
    state = replace(
        state, round=state.round + 1, discard=(*state.discard, *state.area), area=(), passed=()
    )
    if state.bomb is not None:
        short = state.config.hand_size - len(state.hands[state.bomb])
        if short > 0:
            state = _draw(state, state.bomb, short)
    return _start_turn(state, first)


def _end(state: BombState, ended_by: str, assassin: int | None = None) -> BombState:
    """K17/K25: stop everything and reveal the identities."""
    return replace(
        state, phase=Phase.JUDGING, ended_by=ended_by, assassin=assassin, work=(), play=None
    )


def _abort(state: BombState, seat: int, reason: str) -> BombState:
    losers = tuple(s for s in range(state.seats) if s != seat)
    result = Outcome((), losers, f"game stopped: seat {seat} {reason}", (seat,))
    return replace(state, phase=Phase.OVER, work=(), play=None, result=result)


class Bomb(Game[BombState, BombConfig]):
    name = "bomb"
    min_seats, max_seats = 3, 9
    default_seats = 5
    Config = BombConfig
    events = (PlayToArea, PlaceBomb, Detonate, Pass, Proved, *COMMON_EVENTS)

    def deck(self, config: BombConfig) -> tuple[Card, ...]:
        return DECK  # K1

    def new(self, config: BombConfig, seats: int) -> BombState:
        if not self.min_seats <= seats <= self.max_seats:
            raise IllegalMove(f"the Bomb game is for 3 to 9 seats, not {seats}")
        work = tuple(Deal(s, (s,), "identity") for s in range(seats))  # K2
        return BombState(
            config,
            seats,
            Phase.IDENTITIES,
            draw=tuple(range(seats, len(DECK))),
            hands=((),) * seats,
            work=work,
        )

    # -- what the session must do ----------------------------------------------------
    def pending(self, state: BombState) -> tuple[Request, ...]:
        if state.phase is Phase.OVER:
            return ()
        if state.phase is Phase.JUDGING:
            return (Reveal(tuple(range(state.seats)), "identities"),)
        out: list[Request] = list(state.work)
        if state.phase is Phase.STARTER:
            out.append(RandomDraw("starter", state.seats))
        elif state.phase is Phase.PLAYING and state.play is not None:
            play = state.play
            if not play.revealed:
                out.append(Reveal(play.positions, "play"))
            if play.rule is not Kind.C and not play.proven:
                allowed = (related_faces if play.rule is Kind.A else unrelated_faces)(play.cards)
                out.append(Prove(play.seat, play.seat, allowed, f"K12 {play.rule.value}"))
        elif state.phase is Phase.WINDOW and state.detonators:
            out.append(Timer("race", RACE_SECONDS))  # (v3) K17: shouts that cross
        elif state.phase is Phase.WINDOW:
            out.append(Timer("detonation", state.config.detonation_seconds))
        elif state.phase is Phase.LOT:
            out.append(RandomDraw("assassin", len(state.detonators)))
        if state.phase is not Phase.IDENTITIES and state.config.time_limit:
            out.append(Timer("time-limit", state.config.time_limit))
        return tuple(out)

    def legal_kinds(self, state: BombState, seat: int) -> frozenset[str]:
        if state.phase is Phase.TURN and not state.work and seat == state.turn:
            return frozenset({"play"})
        if state.phase is Phase.PLACE_BOMB and seat == state.turn:
            return frozenset({"place_bomb"})
        if state.phase is Phase.WINDOW and state.detonators:
            return frozenset() if seat in state.detonators else frozenset({"detonate"})
        if state.phase is Phase.WINDOW:
            return frozenset({"detonate"} if seat in state.passed else {"detonate", "pass"})
        return frozenset()

    def new_for(self, config: BombConfig, seats: int, version: int) -> BombState:
        """(v3) detonations that cross draw lots; v2 logs: the first counts."""
        return replace(self.new(config, seats), race=version >= 3)

    # -- rules -------------------------------------------------------------------------
    def _apply(self, state: BombState, event: Event) -> BombState:
        if not event.SYSTEM and event.KIND not in self.legal_kinds(state, event.author):  # type: ignore[arg-type]
            raise IllegalMove(_why_not(state, event), seat=event.author)
        match event:
            case Dealt() | Reshuffled():
                return self._work_done(state, event)
            case RandomValue() if event.purpose == "assassin":
                if RandomDraw("assassin", len(state.detonators)) not in self.pending(state):
                    raise IllegalMove("no draw of the assassin is pending")
                if not 0 <= event.value < len(state.detonators):
                    raise IllegalMove(f"random assassin {event.value} is not a detonator")
                return _end(state, "detonation", state.detonators[event.value])  # K17
            case RandomValue():
                if RandomDraw(event.purpose, state.seats) not in self.pending(state):
                    raise IllegalMove(f"no random draw {event.purpose!r} is pending")
                if not 0 <= event.value < state.seats:
                    raise IllegalMove(f"random starter {event.value} is not a seat")
                return _start_round(state, event.value)  # K10
            case TimerExpired():
                return self._timer(state, event)
            case PlayToArea():
                return self._play(state, event)
            case Revealed():
                return self._revealed(state, event)
            case Proved():
                return self._proved(state, event)
            case PlaceBomb():
                if not 0 <= event.target < state.seats:
                    raise IllegalMove(
                        f"no seat {event.target} to place the bomb at", seat=event.seat
                    )
                return replace(state, bomb=event.target, phase=Phase.WINDOW)  # K15
            case Detonate() if state.race:  # (v3) the window stays open
                return replace(state, detonators=tuple(sorted((*state.detonators, event.seat))))
            case Detonate():
                return _end(state, "detonation", event.seat)  # K17
            case Pass():
                state = replace(state, passed=tuple(sorted((*state.passed, event.seat))))
                if len(state.passed) == state.seats:
                    return _start_round(state, (state.last_actor + 1) % state.seats)  # K16
                return state
        raise IllegalMove(f"{event.KIND} is not a Bomb event")  # pragma: no cover

    def _work_done(self, state: BombState, event: Dealt | Reshuffled) -> BombState:
        if not state.work or state.work[0].answer() != event:  # type: ignore[attr-defined]
            raise IllegalMove(f"{event} does not answer the next pending deal or reshuffle")
        state = replace(state, work=state.work[1:])
        if state.phase is Phase.IDENTITIES and not state.work:
            state = replace(state, phase=Phase.STARTER)
        return state

    def _timer(self, state: BombState, event: TimerExpired) -> BombState:
        timers = [r for r in self.pending(state) if isinstance(r, Timer)]
        if event.purpose not in {t.purpose for t in timers}:
            raise IllegalMove(f"no timer {event.purpose!r} is running")
        if event.purpose == "time-limit":
            return _end(state, "time limit")  # K25
        if event.purpose == "race":  # (v3) K17: the detonators of the window
            if len(state.detonators) == 1:
                return _end(state, "detonation", state.detonators[0])
            return replace(state, phase=Phase.LOT)
        return _start_round(state, (state.last_actor + 1) % state.seats)  # K16: nobody

    def _play(self, state: BombState, event: PlayToArea) -> BombState:
        seat, hand = event.seat, state.hands[event.seat]
        missing = [p for p in event.positions if p not in hand]
        if missing:
            raise IllegalMove(f"{missing} are not in your hand", seat=seat)
        public = {card for _, card in state.faces}
        if public & set(event.cards):
            raise IllegalMove("a named face is already face up elsewhere", seat=seat)
        n = len(event.cards)
        if event.rule is Kind.A and not 1 <= n <= 3:
            raise IllegalMove("K12 A: play one, two or three cards", seat=seat)
        if event.rule is Kind.B:
            if set(event.positions) != set(hand):
                raise IllegalMove("K12 B: play all your hand cards", seat=seat)
            if not unrelated_faces(event.cards):
                raise IllegalMove("K12 B: every identity relates to one of these", seat=seat)
        if event.rule is Kind.C and not is_pattern(event.cards):
            raise IllegalMove(
                "K12 C: not a pair or an arithmetic sequence (A is 1 or 14, jokers wild)",
                seat=seat,
            )
        record = PlayRecord(seat, event.positions, event.cards, event.rule)
        return replace(state, phase=Phase.PLAYING, play=record)

    def _revealed(self, state: BombState, event: Revealed) -> BombState:
        reveal = next((r for r in self.pending(state) if isinstance(r, Reveal)), None)
        if reveal is None or reveal.positions != event.positions:
            raise IllegalMove("no reveal of these positions is pending")
        if reveal.purpose == "identities":
            return _judge(replace(state, identities=event.cards))
        play = state.play
        assert play is not None
        if event.cards != play.cards:
            return _abort(state, play.seat, "played other cards than it named (K13)")
        return self._settle(state, replace(play, revealed=True))

    def _proved(self, state: BombState, event: Proved) -> BombState:
        prove = next((r for r in self.pending(state) if isinstance(r, Prove)), None)
        if prove is None or (prove.seat, prove.position) != (event.seat, event.position):
            raise IllegalMove("no identity proof is pending for that seat")
        if not event.ok:
            return _abort(state, event.seat, "could not prove its play honest (K13)")
        return self._settle(state, replace(state.play, proven=True))  # type: ignore[arg-type]

    def _settle(self, state: BombState, play: PlayRecord) -> BombState:
        """Once revealed (and proven for A/B) the cards go face up (K14)."""
        if not play.revealed or (play.rule is not Kind.C and not play.proven):
            return replace(state, play=play)
        state = replace(
            state,
            hands=_hand_without(state, play.seat, play.positions),
            area=(*state.area, *play.positions),
            faces=tuple(
                sorted(
                    {
                        **dict(state.faces),
                        **dict(zip(play.positions, play.cards, strict=True)),
                    }.items()
                )
            ),
            history=(*state.history, play),
            play=None,
            last_actor=play.seat,
        )
        if len(state.area) < AREA_SIZE:
            return _start_turn(state, (play.seat + 1) % state.seats)
        if len(state.area) == AREA_SIZE:
            return replace(state, phase=Phase.PLACE_BOMB)  # K15: placer chooses
        return replace(state, phase=Phase.WINDOW, bomb=play.seat)  # K15: own goal

    # -- reading the state -----------------------------------------------------------
    def view(self, state: BombState, seat: int, known: Knowledge) -> dict[str, Any]:
        undelivered = {p for r in state.work if isinstance(r, Deal) for p in r.positions}
        identity_known = not any(isinstance(r, Deal) and r.positions == (seat,) for r in state.work)

        def face(p: int) -> int | None:
            card = state.face(p)
            if card is None and p not in undelivered:
                card = known.get(p)
            return None if card is None else card.index

        play = state.play
        return {
            "game": self.name,
            "seat": seat,
            "phase": state.phase.value,
            "round": state.round,
            "turn": state.turn,
            "identity": face(seat) if identity_known else None,
            "hand": [[p, face(p)] for p in state.hands[seat]],
            "counts": [len(h) for h in state.hands],
            "area": [state.face(p).index for p in state.area],  # type: ignore[union-attr]
            "draw": len(state.draw),
            "discard": len(state.discard),
            "bomb": state.bomb,
            "playing": None if play is None else to_data(play),
            "history": [
                {"seat": r.seat, "rule": r.rule.value, "cards": to_data(r.cards)}
                for r in state.history
            ],
            "passed": list(state.passed),
            "detonators": list(state.detonators),
            "may": sorted(self.legal_kinds(state, seat)),
            "assassin": state.assassin,
            "identities": to_data(state.identities),
        }

    def outcome(self, state: BombState) -> Outcome | None:
        return state.result


def _judge(state: BombState) -> BombState:
    """K18–K25 from the revealed identities, then re-check every A/B play."""
    ids = state.identities
    role = roles(ids)
    side = [side_of(c, r) for c, r in zip(ids, role, strict=True)]
    seats = range(state.seats)
    civilians = [s for s in seats if role[s] is Role.CIVILIAN]
    a = state.assassin
    if state.ended_by == "time limit" or a is None:
        winners, reason = set(civilians), "K25: time limit reached, civilians win"
    elif role[a] is Role.CIVILIAN:
        winners = set(seats) - {a}
        reason = "K22: a civilian detonated and loses alone"
    else:
        t = state.bomb
        assert t is not None
        mine = side[a]
        assert mine is not None
        if (
            role[a] is Role.CAPTAIN
            and role[t] is Role.CAPTAIN
            and alliance_of(ids[t]) != alliance_of(ids[a])
        ):
            win, reason = mine, "K18: a captain killed an enemy captain"
        elif (
            role[a] is Role.CAPTAIN
            and role[t] is Role.TRAITOR
            and alliance_of(ids[t]) == alliance_of(ids[a])
        ):
            win, reason = mine, "K19: a captain killed a traitor of their own alliance"
        elif role[t] is Role.CIVILIAN:
            win, reason = mine.enemy, "K23: a civilian was killed"
        else:
            win, reason = mine.enemy, "K20: the assassination failed"
        winners = {s for s in seats if side[s] is win}  # K21: traitors via side_of
        if role[t] is not Role.CIVILIAN:
            winners |= set(civilians)  # K24
    cheaters = tuple(sorted({r.seat for r in state.history if not honest(r, ids[r.seat])}))
    won = tuple(s for s in seats if s in winners and s not in cheaters)
    lost = tuple(s for s in seats if s not in won)
    return replace(state, phase=Phase.OVER, result=Outcome(won, lost, reason, cheaters))


def _why_not(state: BombState, event: Event) -> str:
    waiting = (Phase.IDENTITIES, Phase.STARTER, Phase.PLAYING, Phase.LOT, Phase.JUDGING)
    if state.work or state.phase in waiting:
        return f"waiting for the table ({state.phase.value}); {event.KIND} is not possible now"
    if event.KIND == "play":
        return f"it is seat {state.turn}'s turn to play"
    if event.KIND == "detonate" and state.phase is Phase.WINDOW and state.detonators:
        return "you already detonated"
    if event.KIND == "pass" and state.phase is Phase.WINDOW and state.detonators:
        return "the bomb was set off: the window is closing"
    if event.KIND == "pass":
        return "you already passed" if state.phase is Phase.WINDOW else "nothing to pass on"
    return f"{event.KIND} is not possible in phase {state.phase.value}"


GAME = register(Bomb())

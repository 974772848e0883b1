"""Mao's public state as small immutable values (GAMES.md M1–M40).

Everything here is public: every peer holds the same ``MaoState`` after the
same events, and ``engines.core.Game.encode`` turns it into identical bytes.
Hidden cards are deck positions (their faces are never here unless everyone
has seen them); the rules that move them live in ``engines.mao``. Also here:
the turn arithmetic (:func:`turn_of`) and which card may be played
(:func:`is_valid_play`), which bots and views need without applying events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from engines.cards import DECK_SIZE, Card
from engines.core import Request
from engines.mao_events import MaoConfig
from engines.mao_rules import JudgeContext, Rule, VerdictEffect
from engines.phrases import Phrase

RECORD_CHUNK = 64
"""Verdicts per chunk of a rule's record (appending copies one chunk, not all)."""


# -- state values -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PileCard:
    position: int
    card: Card


@dataclass(frozen=True, slots=True)
class Flow:
    """Whose turn it is and what the next card must be."""

    last: int  # the seat that took the last turn (turn_of walks on from here)
    direction: int = 1  # +1 clockwise (M6), -1 after an odd number of 8s (M10)
    missed: tuple[int, ...] = ()  # turns each seat must still miss (M8, skip rules)
    again: bool = False  # the last player plays again (secret rule effect)
    chain: int = 0  # 7s in the running chain (M9)
    suit: int = -1  # suit the next card must follow after a J (M11), else -1
    jack_open: bool = False  # a J is on top and nobody has named a suit yet
    turn_no: int = 0
    timeouts: int = 0  # 10-second timers run out this turn (M23)


@dataclass(frozen=True, slots=True)
class Owed:
    """A phrase ``seat`` must still say in this window (M24)."""

    seat: int
    phrase: str  # phrase key
    continued: bool = False


@dataclass(frozen=True, slots=True)
class Violation:
    """A violation in the current window and whether it was penalised (M18)."""

    seat: int
    phrase: str  # penalty phrase key


@dataclass(frozen=True, slots=True)
class Note:
    """A penalty given: for views, bots and logs."""

    seq: int
    target: int
    phrase: str  # as said (English)
    cards: int
    by: int  # calling seat, or -1 for the engine / a rule's verdict
    slot: int = -1  # secret rule slot for verdict penalties


@dataclass(frozen=True, slots=True)
class Undo:
    """What a ``return`` verdict restores: the last play, before it took effect."""

    seq: int
    seat: int
    position: int
    card: Card
    flow: Flow
    owed: tuple[Owed, ...]
    last_card: bool
    retracted: bool = False


@dataclass(frozen=True, slots=True)
class Judgement:
    slot: int
    ctx: JudgeContext


@dataclass(frozen=True, slots=True)
class Judged:
    """A verdict the author gave, kept until the rule is revealed."""

    ctx: JudgeContext
    effects: tuple[VerdictEffect, ...]


@dataclass(frozen=True, slots=True)
class SecretRule:
    author: int
    commitment: str
    status: str = "active"  # active | dropped | revealed
    rule: Rule | None = None
    record: tuple[tuple[Judged, ...], ...] = ()  # verdicts, in chunks of RECORD_CHUNK
    faults: tuple[str, ...] = ()  # why the author was caught, if ever


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A call the secret rules' authors are judging. A "talking" call (M37)
    names its ``target``, the ``words`` it is about and the words ``vouched``
    for so far."""

    seq: int
    caller: int
    waiting: int
    upheld: bool = False
    target: int = -1
    words: tuple[str, ...] = ()
    vouched: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Proposal:
    action: str
    slot: int
    yes: tuple[int, ...]
    no: tuple[int, ...] = ()


class Phase(StrEnum):
    """Where a Mao game is (compares equal to its text)."""

    DEAL = "deal"  # a round's cards being dealt (M2)
    PLAY = "play"
    ENDING = "ending"  # the table voted to end (M31): rules being revealed
    OVER = "over"


@dataclass(frozen=True, slots=True)
class MaoState:
    config: MaoConfig
    seats: int
    seq: int = 0
    round: int = 0
    phase: Phase = Phase.DEAL
    next_position: int = 0
    draw: tuple[int, ...] = ()  # top is the last element
    hands: tuple[tuple[int, ...], ...] = ()
    pile: tuple[PileCard, ...] = ()  # top is the last element
    shown: tuple[PileCard, ...] = ()  # faces of hand cards everyone has seen
    requests: tuple[Request, ...] = ()
    start: int = -1  # the position turned up to start the round
    flow: Flow = field(default_factory=lambda: Flow(last=0))
    owed: tuple[Owed, ...] = ()
    violations: tuple[Violation, ...] = ()
    rule_hits: tuple[tuple[int, int], ...] = ()  # (slot, seat) penalised this window
    talk: tuple[tuple[int, str], ...] = ()  # M37: (seat, words) a rule might allow, this window
    penalized: tuple[int, ...] = ()  # seats penalised this window
    last_card: tuple[bool, ...] = ()  # said "last card" on reaching one card
    poo: int = -1  # seat that called the point of order, or -1
    undo: Undo | None = None
    pending_win: int = -1
    judgements: tuple[Judgement, ...] = ()
    calls: tuple[PendingCall, ...] = ()
    rules: tuple[SecretRule, ...] = ()
    awaiting_rule: int = -1
    credits: tuple[int, ...] = ()
    out: tuple[bool, ...] = ()  # M36 winners who left; M39 card-less dictator
    wins: tuple[int, ...] = ()
    proposal: Proposal | None = None
    notes: tuple[Note, ...] = ()
    penalties: int = 0

    # -- small public helpers -------------------------------------------------
    @property
    def top(self) -> Card | None:
        return self.pile[-1].card if self.pile else None

    @property
    def turn(self) -> int:
        return turn_of(self)

    def hand_size(self, seat: int) -> int:
        return len(self.hands[seat])

    def shown_face(self, position: int) -> Card | None:
        for p in self.shown:
            if p.position == position:
                return p.card
        return None

    def owes(self, seat: int) -> tuple[Phrase, ...]:
        return tuple(Phrase.from_key(o.phrase) for o in self.owed if o.seat == seat)


_EFFECTIVE = tuple((9, 2) if i >= 52 else (i % 13 + 1, i // 13) for i in range(DECK_SIZE))


def effective(card: Card) -> tuple[int, int]:
    """(rank, suit) for the rules: a joker is the 9♦ in every respect (M7)."""
    return _EFFECTIVE[card.index % DECK_SIZE]


def is_valid_play(state: MaoState, card: Card) -> bool:
    """M5/M9/M11: whether ``card`` may go on the pile now."""
    rank, suit = effective(card)
    flow = state.flow
    if flow.chain:
        return rank == 7
    if flow.suit >= 0:
        return rank == 11 or suit == flow.suit
    top = state.top
    if top is None:
        return False
    trank, tsuit = effective(top)
    return rank == trank or suit == tsuit


def next_turn(flow: Flow, active: tuple[bool, ...], seats: int) -> tuple[int, tuple[int, ...]]:
    """The seat whose turn it is after ``flow.last``, and ``missed`` after it."""
    if flow.again and active[flow.last]:
        return flow.last, flow.missed
    missed = list(flow.missed)
    seat = flow.last
    for _ in range(seats * (sum(missed) + 2)):
        seat = (seat + flow.direction) % seats
        if not active[seat]:
            continue
        if missed[seat] > 0:
            missed[seat] -= 1
            continue
        return seat, tuple(missed)
    return flow.last, tuple(missed)


def _active(state: MaoState) -> tuple[bool, ...]:
    return tuple(not o for o in state.out)


def turn_of(state: MaoState) -> int:
    """The seat whose turn it is (M6, M8, M10)."""
    return next_turn(state.flow, _active(state), state.seats)[0]


def append_record(record: tuple[tuple[Judged, ...], ...], item: Judged) -> tuple:
    """Append to a chunked record, so a long game does not copy it all each time."""
    if record and len(record[-1]) < RECORD_CHUNK:
        return (*record[:-1], (*record[-1], item))
    return (*record, (item,))


def judged_of(rule: SecretRule) -> list[Judged]:
    """Every verdict kept for ``rule``, in order."""
    return [j for chunk in rule.record for j in chunk]

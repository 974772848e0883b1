"""The working copy of a Mao state (:class:`MaoWork`) and the rules every
event handler shares (GAMES.md M1–M40): the requests it makes of the deal, the
zones (draw pile, hands, pile) and dealing a round (M2, M9, M26), penalties
(M17), and the end of a round (M15, M36) and of the game (M31). The handlers
are in ``engines.mao_flow``, ``engines.mao_calls`` and ``engines.mao_verdicts``;
they import from here, never the other way round."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from engines.cards import Card
from engines.core import Deal, Request, Reshuffle, Reveal
from engines.mao_events import MaoConfig
from engines.mao_state import (
    Flow,
    Judgement,
    MaoState,
    Note,
    Owed,
    PendingCall,
    Phase,
    PileCard,
    Proposal,
    SecretRule,
    Undo,
    Violation,
    next_turn,
)
from engines.phrases import Phrase

NOTES = 12
"""Penalties kept in the state for views (the latest ones)."""


@dataclass(slots=True)
class MaoWork:
    """A typed, mutable working copy of a :class:`MaoState` while one event
    is applied (the state's tuples as lists); :meth:`freeze` makes the next
    state, so a refused event changes nothing. ``ev_seq`` is the number of
    the event being applied."""

    config: MaoConfig
    seats: int
    seq: int
    round: int
    phase: Phase
    next_position: int
    draw: list[int]
    hands: list[list[int]]
    pile: list[PileCard]
    shown: list[PileCard]
    requests: list[Request]
    start: int
    flow: Flow
    owed: list[Owed]
    violations: list[Violation]
    rule_hits: list[tuple[int, int]]
    talk: list[tuple[int, str]]
    penalized: list[int]
    last_card: list[bool]
    poo: int
    undo: Undo | None
    pending_win: int
    judgements: list[Judgement]
    calls: list[PendingCall]
    rules: list[SecretRule]
    awaiting_rule: int
    credits: list[int]
    out: list[bool]
    wins: list[int]
    proposal: Proposal | None
    notes: list[Note]
    penalties: int
    ev_seq: int

    @classmethod
    def of(cls, state: MaoState) -> MaoWork:
        values: dict[str, Any] = {}
        for name in _FIELDS:
            value = getattr(state, name)
            values[name] = list(value) if isinstance(value, tuple) else value
        values["hands"] = [list(h) for h in state.hands]
        return cls(**values, ev_seq=state.seq)

    def freeze(self) -> MaoState:
        values: dict[str, Any] = {}
        for name in _FIELDS:
            v = getattr(self, name)
            values[name] = tuple(v) if isinstance(v, list) else v
        values["hands"] = tuple(tuple(h) for h in self.hands)
        values["notes"] = values["notes"][-NOTES:]
        return MaoState(**values)

    @property
    def top(self) -> Card | None:  # so is_valid_play reads a working copy too
        return self.pile[-1].card if self.pile else None


def _in_game(t: MaoWork | MaoState, seat: int) -> bool:
    return not t.out[seat]


def _turn(t: MaoWork) -> int:
    return next_turn(t.flow, tuple(not o for o in t.out), t.seats)[0]


_FIELDS = tuple(f.name for f in fields(MaoState))


# -- requests --------------------------------------------------------------------------


def _need(t: MaoWork, request: Request) -> None:
    t.requests.append(request)


# -- zones -----------------------------------------------------------------------------


def _fresh(t: MaoWork, count: int) -> list[int]:
    new = list(range(t.next_position, t.next_position + count))
    t.next_position += count
    return new


def _may_retract(t: MaoWork) -> bool:
    """Whether the last play may still be sent back by a verdict (M28)."""
    u = t.undo
    if u is None or u.retracted:
        return False
    return u.seq == t.ev_seq or any(j.ctx.seq == u.seq for j in t.judgements)


def _refill(t: MaoWork) -> None:
    """An empty draw pile takes the discard pile but its top card, reshuffled."""
    # while a play may still be sent back (M28 verdicts due), the card under it stays
    keep = 2 if _may_retract(t) else 1
    if t.draw or len(t.pile) <= keep:
        return
    under, t.pile = t.pile[:-keep], t.pile[-keep:]
    new = _fresh(t, len(under))
    _need(t, Reshuffle(tuple(p.position for p in under), tuple(new)))
    t.draw = new[::-1]


def _take(t: MaoWork, count: int) -> list[int]:
    taken: list[int] = []
    while len(taken) < count:
        _refill(t)
        if not t.draw:
            break  # every card is in a hand: nothing to draw (documented)
        taken.append(t.draw.pop())
    return taken


def _give(t: MaoWork, seat: int, count: int, purpose: str) -> None:
    """``seat`` draws ``count`` cards from the draw pile."""
    taken = _take(t, count)
    if taken:
        t.hands[seat].extend(taken)
        _need(t, Deal(seat, tuple(taken), purpose))
    if len(t.hands[seat]) != 1:
        t.last_card[seat] = False


def _give_from_discard(t: MaoWork, seat: int, count: int) -> None:
    """M9 (seed): the 7 chain's cards come from the discard pile, oldest first,
    never its top card; the rest, if it runs short, from the draw pile."""
    keep = 2 if _may_retract(t) else 1
    n = min(count, max(0, len(t.pile) - keep))
    taken, t.pile = t.pile[:n], t.pile[n:]
    t.hands[seat].extend(p.position for p in taken)
    t.shown.extend(taken)
    if count > n:
        _give(t, seat, count - n, "seven")
    t.last_card[seat] = False


def _show(t: MaoWork, position: int, card: Card) -> None:
    """A card seen face up stays known in the hand it goes back to (M21, M22, M28)."""
    if all(p.position != position for p in t.shown):
        t.shown.append(PileCard(position, card))


def _deal_round(t: MaoWork, first: bool = False) -> None:
    """M2/M26: (reveal and reshuffle everything,) deal, turn up the top card."""
    if not first:
        hidden = [p for h in t.hands for p in h if all(s.position != p for s in t.shown)]
        hidden += list(t.draw)
        if hidden:
            _need(t, Reveal(tuple(sorted(hidden)), "round end"))
        everything = sorted([p for h in t.hands for p in h] + list(t.draw) +
                            [p.position for p in t.pile])  # fmt: skip
        new = _fresh(t, len(everything))
        _need(t, Reshuffle(tuple(everything), tuple(new)))
        t.draw = new[::-1]
        t.pile, t.shown = [], []
        t.hands = [[] for _ in range(t.seats)]
        t.round += 1
    if t.config.continuous:
        t.out = [False] * t.seats
    if t.config.dictator >= 0 and not t.config.dictator_plays:
        t.out[t.config.dictator] = True
    t.phase = Phase.DEAL
    for seat in range(t.seats):
        if _in_game(t, seat):
            _give(t, seat, t.config.hand_size, "hand")
    t.start = t.draw.pop()
    _need(t, Reveal((t.start,), "start"))
    first_player = t.round % t.seats
    while not _in_game(t, first_player):
        first_player = (first_player + 1) % t.seats
    t.flow = Flow(last=(first_player - 1) % t.seats, missed=(0,) * t.seats)
    t.owed, t.violations, t.rule_hits, t.penalized, t.talk = [], [], [], [], []
    t.last_card = [False] * t.seats
    t.poo, t.undo, t.pending_win = -1, None, -1
    t.judgements, t.calls = [], []


# -- penalties -------------------------------------------------------------------------


def _penalize(t: MaoWork, target: int, phrase: Phrase, by: int = -1, slot: int = -1) -> None:
    """M17: the penalty phrase plus card(s) from the draw pile (3 for M25)."""
    _give(t, target, phrase.cards, "penalty")
    t.violations.append(Violation(target, phrase.key))
    if target not in t.penalized:
        t.penalized.append(target)
    t.owed = [o for o in t.owed if not (o.seat == target and o.phrase == "mao")]
    if t.pending_win == target:
        t.pending_win = -1
    t.notes.append(Note(t.ev_seq, target, str(phrase), phrase.cards, by, slot))
    t.penalties += 1


# -- the end of a round and of the game ------------------------------------------------


def _maybe_win(t: MaoWork) -> None:
    """M15: a Mao claimed wins once no verdict or call is due; M36: in
    continuous play the winner leaves; else the winner (the dictator, M39)
    adds a rule (M27) and the next round is dealt (M26)."""
    seat = t.pending_win
    if seat < 0 or t.judgements or t.calls or t.hands[seat]:
        return
    t.pending_win = -1
    t.wins[seat] += 1
    if t.config.continuous:  # M36: the winner leaves; the game goes on without them
        t.out[seat] = True
        t.credits[seat] += 1
        t.owed = [o for o in t.owed if o.seat != seat]
        if sum(_in_game(t, s) for s in range(t.seats)) >= 2:
            return
    maker = t.config.dictator if t.config.dictator >= 0 else seat
    if not t.config.continuous:
        t.awaiting_rule = maker
    _deal_round(t)


def _maybe_over(t: MaoWork) -> None:
    """M31: an ending game is over once every secret rule is revealed (M30)."""
    if t.phase == "ending" and all(r.status == "revealed" for r in t.rules):
        t.phase = Phase.OVER

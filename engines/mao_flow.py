"""The rules that move a Mao state (GAMES.md M1–M40), one event at a time,
on a typed working copy (:class:`MaoWork`): requests and timers, the zones
(draw pile, hands, pile), penalties, what players say, turns and card
effects, calls, the secret rules' verdicts, proposals and votes.
:class:`~engines.mao.MaoGame` dispatches each event to its handler here
(``HANDLERS``); see its module docstring for the theory of operation."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from functools import lru_cache
from typing import Any

from engines.cards import DECK_SIZE, Card
from engines.core import (
    Deal,
    Dealt,
    IllegalMove,
    Request,
    Reshuffle,
    Reshuffled,
    Reveal,
    Revealed,
    Timer,
    TimerExpired,
)
from engines.mao_events import (
    AddRule,
    Call,
    Draw,
    MaoConfig,
    PlayCard,
    Propose,
    RevealRule,
    RuleVerdict,
    Say,
    Vote,
)
from engines.mao_rules import (
    HISTORY,
    JudgeContext,
    Rule,
    RuleError,
    VerdictEffect,
    commitment,
    judge,
    validate,
)
from engines.mao_state import (
    Flow,
    Judged,
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
    append_record,
    effective,
    is_valid_play,
    judged_of,
    next_turn,
    turn_of,
)
from engines.phrases import (
    POO_ENDERS,
    Phrase,
    PhraseError,
    fail_say,
    is_asking,
    is_explaining,
    is_swearing,
    nice_day,
    normalize,
    parse,
    parse_penalty,
    spade_name,
    thank_you,
)

MAX_RULES = 64
TALK_LIMIT = 8
"""M37: distinct words kept per seat and window for a "talking" call (a
verdict has at most 8 effects, one vouch each); later words are not kept."""
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


def _valid(t: MaoWork, card: Card) -> bool:
    return is_valid_play(t, card)  # type: ignore[arg-type]


_FIELDS = tuple(f.name for f in fields(MaoState))


# -- requests and timers ------------------------------------------------------------


def _timer(state: MaoState) -> Timer | None:
    if (
        state.phase != "play"
        or state.poo >= 0
        or state.judgements
        or state.awaiting_rule >= 0
        or state.requests
    ):
        return None
    f = state.flow
    return Timer(f"turn {f.turn_no}.{f.timeouts} seat {turn_of(state)}", state.config.timeout)


def _need(t: MaoWork, request: Request) -> None:
    t.requests.append(request)


def _answer(t: MaoWork, kind: type[Request]) -> Request:
    if not t.requests or not isinstance(t.requests[0], kind):
        raise IllegalMove(f"no pending {kind.KIND} request is first in line")
    return t.requests.pop(0)


def _on_dealt(t: MaoWork, e: Dealt) -> None:
    req = _answer(t, Deal)
    if (req.seat, req.positions) != (e.seat, e.positions):  # type: ignore[attr-defined]
        raise IllegalMove("dealt answers a different deal")


def _on_reshuffled(t: MaoWork, e: Reshuffled) -> None:
    req = _answer(t, Reshuffle)
    if req.new_positions != e.new_positions:  # type: ignore[attr-defined]
        raise IllegalMove("reshuffled answers a different reshuffle")


def _on_revealed(t: MaoWork, e: Revealed) -> None:
    req = _answer(t, Reveal)
    if req.positions != e.positions:  # type: ignore[attr-defined]
        raise IllegalMove("revealed answers a different reveal")
    limit = DECK_SIZE * t.config.decks
    if any(c.index >= limit for c in e.cards):
        raise IllegalMove("a revealed card is not in this deck")
    if req.purpose == "start":  # type: ignore[attr-defined]
        (position,), (card,) = e.positions, e.cards
        if any(p.card == card for p in t.pile + t.shown):
            raise IllegalMove(f"{card} is already face up")
        t.pile.append(PileCard(position, card))
        t.start = -1
        t.phase = Phase.PLAY
    # "round end" reveals need no bookkeeping: those positions are reshuffled next


def _on_timer(t: MaoWork, e: TimerExpired) -> None:
    timer = _timer(t.freeze())
    if timer is None or timer.purpose != e.purpose:
        raise IllegalMove("no such timer is running")
    seat = turn_of(t.freeze())
    key = "cont_fail_10s" if t.flow.timeouts else "fail_10s"
    t.flow = replace(t.flow, timeouts=t.flow.timeouts + 1)
    _penalize(t, seat, Phrase(key))


# -- zones ----------------------------------------------------------------------------


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


def _close_window(t: MaoWork) -> None:
    """M19/M24: the next turn starts; phrases still owed are penalised."""
    still: list[Owed] = []
    for o in list(t.owed):
        phrase = Phrase.from_key(o.phrase)
        if o.phrase == "mao":
            _penalize(t, o.seat, fail_say(phrase))
        elif o.continued:
            _penalize(t, o.seat, fail_say(phrase, continued=True))
        else:
            _penalize(t, o.seat, fail_say(phrase))
            still.append(replace(o, continued=True))
    t.owed = still
    t.violations, t.rule_hits, t.penalized, t.talk = [], [], [], []


# -- what players say --------------------------------------------------------------------


def _hear(t: MaoWork, seat: int, says: tuple[str, ...], with_action: bool) -> None:
    """Apply each utterance in order (M9–M16, M32–M38). ``with_action``: said
    with a play or draw (it changes nothing here: talk is talk, M37)."""
    talked: list[str] = []  # words the base rules neither require nor allow now
    outsider = not _in_game(t, seat)
    for i, text in enumerate(says):
        p = parse(text)
        if outsider:  # outside the game no Mao rule binds (M36, M39)
            if p is not None and p.id == "rejoin":
                _rejoin(t, seat, says)
            continue
        if p is None:
            if t.poo < 0 and t.config.conduct:
                for test, key in ((is_swearing, "swearing"), (is_asking, "asking"),
                                  (is_explaining, "explaining")):  # fmt: skip
                    if test(text) and Violation(seat, key) not in t.violations:
                        _penalize(t, seat, Phrase(key))
                        break
            talked.append(text)
            continue
        if p.id == "point_of_order":
            if t.poo >= 0:
                _penalize(t, seat, Phrase("poo_in_poo"))
            else:
                t.poo = seat
            continue
        if p.id in POO_ENDERS:
            if t.poo >= 0:
                t.poo = -1
            else:
                talked.append(text)
            continue
        if p.id == "poo_quoted":
            if t.poo < 0:
                talked.append(text)
            continue
        if p.id == "mao" and not t.config.mini:
            _mao(t, seat, last=i == len(says) - 1)
            continue
        owed = next((o for o in t.owed if o.seat == seat and o.phrase == p.key), None)
        if owed is not None:
            t.owed.remove(owed)
            if p.id == "last_card" and len(t.hands[seat]) == 1:
                t.last_card[seat] = True
            continue
        if p.id == "suit" and t.flow.jack_open:
            t.flow = replace(t.flow, suit=p.arg, jack_open=False)
            continue
        talked.append(text)
    if talked and t.config.no_talking and t.poo < 0 and not outsider:
        _talked(t, seat, talked)


def _talked(t: MaoWork, seat: int, words: list[str]) -> None:
    """M37: with no secret rule in force, words the base rules neither require
    nor allow are talking, penalised at once. With secret rules in force they
    may be a rule's words, which only its author knows: they are kept for the
    window, and a "talking" call on them goes to the authors (``vouch``)."""
    if not any(r.status == "active" for r in t.rules):
        if Violation(seat, "talking") not in t.violations:
            _penalize(t, seat, Phrase("talking"))
        return
    kept = [w for s, w in t.talk if s == seat]
    for w in words:
        if len(kept) < TALK_LIMIT and all(normalize(w) != normalize(k) for k in kept):
            kept.append(w)
            t.talk.append((seat, w))


def _mao(t: MaoWork, seat: int, last: bool) -> None:
    """M15/M25: a win, or 3 cards for taking the Chairman's name in vain."""
    owes_mao = any(o.seat == seat and o.phrase == "mao" for o in t.owed)
    others = [o for o in t.owed if o.seat == seat and o.phrase != "mao"]
    if owes_mao and t.last_card[seat] and not others and last and seat not in t.penalized:
        t.owed = [o for o in t.owed if not (o.seat == seat and o.phrase == "mao")]
        t.pending_win = seat  # won once every secret rule has judged this turn
        return
    if owes_mao and not t.last_card[seat]:
        _penalize(t, seat, fail_say(Phrase("last_card")))
    _penalize(t, seat, Phrase("in_vain"))


def _maybe_win(t: MaoWork) -> None:
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


def _rejoin(t: MaoWork, seat: int, says: tuple[str, ...]) -> None:
    """M36: deal yourself a new hand, saying "rejoining the game"."""
    if not t.config.continuous or t.phase != "play":
        return
    t.out[seat] = False
    _give(t, seat, t.config.hand_size, "hand")
    if any((p := parse(u)) is not None and p.id == "new_rule" for u in says):
        if t.credits[seat] > 0 and t.awaiting_rule < 0:
            t.credits[seat] -= 1
            t.awaiting_rule = seat


# -- turns -------------------------------------------------------------------------------


def _check_turn_allowed(t: MaoWork, seat: int) -> None:
    if t.phase != "play":
        raise IllegalMove("the round has not started", seat=seat)
    if t.awaiting_rule >= 0:
        raise IllegalMove(f"waiting for seat {t.awaiting_rule} to add a secret rule", seat=seat)
    if t.judgements:
        raise IllegalMove("waiting for the secret rules' verdicts", seat=seat)
    if not _in_game(t, seat):
        raise IllegalMove("you are not in the game", seat=seat)


def _take_turn(t: MaoWork) -> int:
    seat, missed = next_turn(t.flow, tuple(not o for o in t.out), t.seats)
    t.flow = replace(t.flow, last=seat, missed=missed, again=False, turn_no=t.flow.turn_no + 1,
                     timeouts=0)  # fmt: skip
    return seat


def _on_play(t: MaoWork, e: PlayCard) -> None:
    seat = e.seat
    _check_turn_allowed(t, seat)
    if e.position not in t.hands[seat]:
        raise IllegalMove(f"position {e.position} is not in your hand", seat=seat)
    if e.card.index >= DECK_SIZE * t.config.decks:
        raise IllegalMove(f"{e.card} is not in this deck", seat=seat)
    face = next((p.card for p in t.shown if p.position == e.position), None)
    if face is not None and face != e.card:
        raise IllegalMove(f"that card is known to be {face}", seat=seat)
    if face is None and any(p.card == e.card for p in t.pile + t.shown):
        raise IllegalMove(f"{e.card} is already face up elsewhere", seat=seat)
    if t.poo >= 0:  # M34
        _penalize(t, seat, Phrase("touching"))
        _hear(t, seat, e.says, with_action=True)
        return
    if _turn(t) != seat:  # M22: the card goes back, and was seen
        _show(t, e.position, e.card)
        _penalize(t, seat, Phrase("out_of_turn"))
        _hear(t, seat, e.says, with_action=True)
        return
    _close_window(t)
    if not _valid(t, e.card):  # M21: back to hand; turn not used
        _show(t, e.position, e.card)
        _penalize(t, seat, Phrase("bad_card"))
        _hear(t, seat, e.says, with_action=True)
        return
    before = (tuple(t.pile), t.flow.direction)
    t.undo = Undo(t.ev_seq, seat, e.position, e.card, t.flow, tuple(t.owed), t.last_card[seat])
    t.hands[seat].remove(e.position)
    t.shown = [p for p in t.shown if p.position != e.position]
    t.pile.append(PileCard(e.position, e.card))
    _take_turn(t)
    _card_effects(t, seat, e.card)
    _hear(t, seat, e.says, with_action=True)
    _judge_event(t, before, "play", seat, e.card, e.says)
    if t.config.mini and not t.hands[seat]:  # M40: no Mao needed
        t.pending_win = seat
    _maybe_win(t)


def _show(t: MaoWork, position: int, card: Card) -> None:
    if all(p.position != position for p in t.shown):
        t.shown.append(PileCard(position, card))


def _card_effects(t: MaoWork, seat: int, card: Card) -> None:
    """M7–M14 for a card just played by ``seat``."""
    rank, suit = effective(card)
    flow = replace(t.flow, suit=-1, jack_open=False)
    owe: list[Phrase] = []
    left = len(t.hands[seat])
    if not t.config.mini:
        if rank == 7:
            flow = replace(flow, chain=flow.chain + 1)
            owe.append(nice_day(flow.chain))
        if rank == 8:
            flow = replace(flow, direction=-flow.direction)
        if rank == 11:
            flow = replace(flow, suit=suit, jack_open=True)
        if card.is_joker or (rank, suit) == (9, 2):
            owe.append(Phrase("badger"))
        elif suit == 0:
            owe.append(spade_name(rank))
        if left == 1:
            owe.append(Phrase("last_card"))
        elif left == 0:
            owe.append(Phrase("mao"))
    t.flow = flow
    if rank == 1 and not t.config.mini:  # M8: the next player is skipped
        nxt, _ = next_turn(t.flow, tuple(not o for o in t.out), t.seats)
        missed = list(t.flow.missed)
        missed[nxt] += 1
        t.flow = replace(t.flow, missed=tuple(missed))
    if left != 0:
        t.last_card[seat] = False
    t.owed.extend(Owed(seat, p.key) for p in owe)


def _on_draw(t: MaoWork, e: Draw) -> None:
    seat = e.seat
    _check_turn_allowed(t, seat)
    if t.poo >= 0:
        _penalize(t, seat, Phrase("touching"))
        _hear(t, seat, e.says, with_action=True)
        return
    if _turn(t) != seat:
        _penalize(t, seat, Phrase("out_of_turn"))
        _hear(t, seat, e.says, with_action=True)
        return
    _close_window(t)
    before = (tuple(t.pile), t.flow.direction)
    t.undo = None
    _take_turn(t)
    chain = t.flow.chain
    if chain:  # M9: "thank you (very … much)" and the chain's cards
        t.flow = replace(t.flow, chain=0)
        t.owed.append(Owed(seat, thank_you(chain).key))
        if t.config.seven_draw == "discard":
            _give_from_discard(t, seat, chain)
        else:
            _give(t, seat, chain, "seven")
    else:
        _give(t, seat, 1, "draw")
    _hear(t, seat, e.says, with_action=True)
    _judge_event(t, before, "draw", seat, None, e.says)


def _on_say(t: MaoWork, e: Say) -> None:
    if t.phase in ("ending", "over"):
        raise IllegalMove("the game is ending", seat=e.seat)
    before = (tuple(t.pile), t.flow.direction)
    _hear(t, e.seat, e.says, with_action=False)
    if t.phase == "play" and _in_game(t, e.seat):
        _judge_event(t, before, "say", e.seat, None, e.says)
    _maybe_win(t)


# -- calls -------------------------------------------------------------------------------


def _on_call(t: MaoWork, e: Call) -> None:
    caller, target = e.seat, e.target
    if t.phase != "play":
        raise IllegalMove("penalties are given during play", seat=caller)
    if target >= t.seats:
        raise IllegalMove(f"no seat {target}", seat=caller)
    if t.config.dictator >= 0 and caller != t.config.dictator:
        raise IllegalMove("only the dictator gives penalties (M39)", seat=caller)
    if not _in_game(t, caller) and caller != t.config.dictator:
        raise IllegalMove("you are not in the game", seat=caller)
    if not _in_game(t, target):
        raise IllegalMove(f"seat {target} is not in the game", seat=caller)
    try:
        phrase = parse_penalty(e.phrase)
    except PhraseError as exc:
        raise IllegalMove(str(exc), seat=caller) from None
    if phrase.id == "custom":
        active = [i for i, r in enumerate(t.rules) if r.status == "active"]
        if not active:
            _penalize(t, caller, Phrase("bad_call"), by=-1)
            return
        ctx = JudgeContext(t.ev_seq, "call", caller, call_phrase=e.phrase, call_target=target)
        t.judgements.extend(Judgement(i, ctx) for i in active)
        t.calls.append(PendingCall(t.ev_seq, caller, len(active)))
        return
    if phrase.id in ("lying", "ungentlemanly"):  # M38: player-called, not checkable
        ok = t.config.conduct and Violation(target, phrase.key) not in t.violations
        if ok:
            _penalize(t, target, phrase, by=caller)
        elif not t.config.conduct:
            _penalize(t, caller, Phrase("bad_call"))
        return
    if phrase.id in ("fail_say", "cont_fail_say"):
        inner = phrase.arg.key  # type: ignore[union-attr]
        cont = phrase.id == "cont_fail_say"
        owed = next((o for o in t.owed if o.seat == target and o.phrase == inner
                     and o.continued == cont), None)  # fmt: skip
        if owed is not None:  # called before the window closed: honoured at once
            t.owed.remove(owed)
            _penalize(t, target, phrase, by=caller)
            if not cont and inner != "mao":
                t.owed.append(replace(owed, continued=True))
            return
    if Violation(target, phrase.key) in t.violations:
        return  # M18: already penalised; another call changes nothing
    if phrase.id == "talking" and t.config.no_talking and _talking_call(t, caller, target, e):
        return
    _penalize(t, caller, Phrase("bad_call"))  # M20


def _talking_call(t: MaoWork, caller: int, target: int, e: Call) -> bool:
    """M37: a "talking" call on words kept this window; False when there are none.
    With no rule in force any more the call stands; else the authors judge it."""
    words = tuple(w for s, w in t.talk if s == target)
    if not words:
        return False
    active = [i for i, r in enumerate(t.rules) if r.status == "active"]
    if not active:
        _penalize(t, target, Phrase("talking"), by=caller)
        return True
    ctx = JudgeContext(t.ev_seq, "call", caller, said=words, call_phrase=e.phrase,
                       call_target=target)  # fmt: skip
    t.judgements.extend(Judgement(i, ctx) for i in active)
    t.calls.append(PendingCall(t.ev_seq, caller, len(active), target=target, words=words))
    return True


# -- secret rules ------------------------------------------------------------------------


def _judge_event(
    t: MaoWork,
    before: tuple[tuple[PileCard, ...], int],
    trigger: str,
    seat: int,
    card: Card | None,
    says: tuple[str, ...],
) -> None:
    active = [i for i, r in enumerate(t.rules) if r.status == "active"]
    if not active:
        return
    pile, direction = before
    ctx = JudgeContext(
        seq=t.ev_seq,
        trigger=trigger,
        seat=seat,
        card=card,
        pile=tuple(p.card for p in reversed(pile[-HISTORY:])),
        direction=0 if direction == 1 else 1,
        hand=len(t.hands[seat]),
        said=says,
        chain=t.flow.chain,
        next_seat=_turn(t),
    )
    t.judgements.extend(Judgement(i, ctx) for i in active)


def due_context(state: MaoState, slot: int) -> JudgeContext | None:
    """The context the author of ``slot`` must judge next (M28), or None."""
    for j in state.judgements:
        if j.slot == slot:
            if j.ctx.trigger == "call":
                hits = tuple(sorted({s for sl, s in state.rule_hits if sl == slot}))
                return replace(j.ctx, violators=hits)
            return j.ctx
    return None


def author_verdict(state: MaoState, slot: int, rule: Rule) -> RuleVerdict | None:
    """What the author's peer submits for the next judgement of ``slot``."""
    ctx = due_context(state, slot)
    if ctx is None:
        return None
    return RuleVerdict(state.rules[slot].author, slot, ctx.seq, judge(rule, ctx))


def _on_verdict(t: MaoWork, e: RuleVerdict) -> None:
    if e.slot >= len(t.rules) or t.rules[e.slot].author != e.seat:
        raise IllegalMove(f"seat {e.seat} is not the author of rule {e.slot}", seat=e.seat)
    ctx = due_context(t, e.slot)  # type: ignore[arg-type]
    if ctx is None or ctx.seq != e.on:
        raise IllegalMove("this verdict is not the next one due for that rule", seat=e.seat)
    for eff in e.effects:
        if eff.do in ("penalty", "skip", "draw", "uphold", "vouch") and not (
            0 <= eff.target < t.seats
        ):
            raise IllegalMove("a verdict effect names no seat", seat=e.seat)
        if eff.do == "vouch" and (
            ctx.trigger != "call" or eff.target != ctx.call_target or eff.phrase not in ctx.said
        ):
            raise IllegalMove("a vouch answers a talking call, for words it is about",
                              seat=e.seat)  # fmt: skip
        if eff.do == "return" and ctx.trigger != "play":
            raise IllegalMove("only a play can be sent back", seat=e.seat)
        if eff.do == "uphold" and ctx.trigger != "call":
            raise IllegalMove("only a call can be upheld", seat=e.seat)
        if eff.do == "penalty" and not _in_game(t, eff.target):
            raise IllegalMove(f"seat {eff.target} is not in the game", seat=e.seat)
        if eff.do == "penalty" and not normalize(eff.phrase):
            raise IllegalMove("a penalty needs a penalty phrase", seat=e.seat)
    index = next(i for i, j in enumerate(t.judgements) if j.slot == e.slot)
    del t.judgements[index]
    rule = t.rules[e.slot]
    t.rules[e.slot] = replace(rule, record=append_record(rule.record, Judged(ctx, e.effects)))
    retracted = t.undo is None or t.undo.seq != ctx.seq or t.undo.retracted
    for eff in e.effects:
        if eff.do == "penalty":
            _penalize(t, eff.target, Phrase("custom", eff.phrase), slot=e.slot)
            t.rule_hits.append((e.slot, eff.target))
        elif eff.do == "uphold":
            t.calls = [replace(c, upheld=True) if c.seq == ctx.seq else c for c in t.calls]
        elif eff.do == "vouch":
            t.calls = [replace(c, vouched=(*c.vouched, eff.phrase)) if c.seq == ctx.seq else c
                       for c in t.calls]  # fmt: skip
        elif eff.do == "return":
            if not retracted:
                _retract(t)
                retracted = True
        elif ctx.trigger in ("play", "draw") and not (ctx.trigger == "play" and retracted):
            _flow_effect(t, eff)
    if ctx.trigger == "call":
        _settle_call(t, ctx.seq)
    _maybe_win(t)


def _evolve(state: MaoState, **changes: Any) -> MaoState:
    """A copy of ``state`` with a few fields changed (cheaper than ``replace``)."""
    new = object.__new__(MaoState)
    for name in _FIELDS:
        object.__setattr__(new, name, changes.get(name, getattr(state, name)))
    return new


def _quiet_verdict(state: MaoState, e: RuleVerdict) -> MaoState | None:
    """Fast path for the common verdict "nothing" on a play, draw or say: it only
    moves the judgement into the rule's record. None when the full path is needed."""
    if state.pending_win >= 0 or e.slot >= len(state.rules):
        return None
    rule = state.rules[e.slot]
    if rule.author != e.seat:
        return None
    index = next((i for i, j in enumerate(state.judgements) if j.slot == e.slot), -1)
    if index < 0 or state.judgements[index].ctx.trigger == "call":
        return None
    ctx = state.judgements[index].ctx
    if ctx.seq != e.on:
        return None
    rules = list(state.rules)
    rules[e.slot] = replace(rule, record=append_record(rule.record, Judged(ctx, ())))
    judgements = state.judgements[:index] + state.judgements[index + 1 :]
    return _evolve(state, judgements=judgements, rules=tuple(rules), seq=state.seq + 1)


def _retract(t: MaoWork) -> None:
    u = t.undo
    if u is None or not t.pile or t.pile[-1].position != u.position:
        return  # the card is no longer on top: nothing to send back
    t.pile.pop()
    t.hands[u.seat].append(u.position)
    _show(t, u.position, u.card)
    t.flow, t.owed = u.flow, list(u.owed)
    t.last_card[u.seat] = u.last_card
    if t.pending_win == u.seat:
        t.pending_win = -1
    t.undo = replace(u, retracted=True)


def _flow_effect(t: MaoWork, eff: VerdictEffect) -> None:
    if eff.do == "skip":
        missed = list(t.flow.missed)
        missed[eff.target] += eff.n
        t.flow = replace(t.flow, missed=tuple(missed))
    elif eff.do == "reverse":
        t.flow = replace(t.flow, direction=-t.flow.direction, again=False)
    elif eff.do == "again":
        t.flow = replace(t.flow, again=True)
    elif eff.do == "draw" and _in_game(t, eff.target):
        _give(t, eff.target, eff.n, "rule")


def _settle_call(t: MaoWork, seq: int) -> None:
    for i, c in enumerate(t.calls):
        if c.seq != seq:
            continue
        c = replace(c, waiting=c.waiting - 1)
        if c.waiting > 0:
            t.calls[i] = c
            return
        del t.calls[i]
        if c.words:  # M37: the call stands unless every word was vouched for
            vouched = {normalize(v) for v in c.vouched}
            if all(normalize(w) in vouched for w in c.words):
                if _in_game(t, c.caller):
                    _penalize(t, c.caller, Phrase("bad_call"))
            elif _in_game(t, c.target) and Violation(c.target, "talking") not in t.violations:
                _penalize(t, c.target, Phrase("talking"), by=c.caller)
            return
        if not c.upheld and _in_game(t, c.caller):
            _penalize(t, c.caller, Phrase("bad_call"))
        return


def _on_add_rule(t: MaoWork, e: AddRule) -> None:
    seat = e.seat
    if t.phase in ("ending", "over"):
        raise IllegalMove("the game is ending", seat=seat)
    if t.config.dictator >= 0 and seat != t.config.dictator:
        raise IllegalMove("only the dictator adds rules (M39)", seat=seat)
    if t.awaiting_rule == seat:
        t.awaiting_rule = -1
    elif t.credits[seat] > 0:
        t.credits[seat] -= 1
    else:
        raise IllegalMove("you have no rule to add now (M27)", seat=seat)
    if e.commitment:
        if len(t.rules) >= MAX_RULES:
            raise IllegalMove(f"at most {MAX_RULES} secret rules", seat=seat)
        t.rules.append(SecretRule(seat, e.commitment))


def _must_reveal(state: MaoState | MaoWork, rule: SecretRule) -> bool:
    return rule.status == "dropped" or (state.phase == "ending" and rule.status == "active")


def _on_reveal_rule(t: MaoWork, e: RevealRule) -> None:
    if not 0 <= e.slot < len(t.rules) or t.rules[e.slot].author != e.seat:
        raise IllegalMove(f"seat {e.seat} is not the author of rule {e.slot}", seat=e.seat)
    rule = t.rules[e.slot]
    if not _must_reveal(t, rule):
        raise IllegalMove("a secret rule is revealed only when dropped or at the end")
    faults = list(rule.faults)
    if commitment(e.rule, bytes.fromhex(e.salt)) != rule.commitment:
        faults.append("the revealed rule does not match its commitment")
    else:
        problem = _rule_problem(e.rule)
        if problem:
            faults.append(f"the rule was not allowed: {problem}")
        for judged in judged_of(rule):
            if judge(e.rule, judged.ctx) != judged.effects:
                faults.append(f"wrong verdict on event {judged.ctx.seq}")
    t.rules[e.slot] = replace(rule, status="revealed", rule=e.rule, faults=tuple(faults))
    _maybe_over(t)


@lru_cache(maxsize=1024)
def _rule_problem(rule: Rule) -> str:
    try:
        validate(rule)
    except RuleError as exc:
        return str(exc)
    return ""


def _maybe_over(t: MaoWork) -> None:
    if t.phase == "ending" and all(r.status == "revealed" for r in t.rules):
        t.phase = Phase.OVER


def _on_propose(t: MaoWork, e: Propose) -> None:
    if t.proposal is not None:
        raise IllegalMove("a vote is already open", seat=e.seat)
    if t.phase in ("ending", "over"):
        raise IllegalMove("the game is ending", seat=e.seat)
    if e.action != "end" and not (
        0 <= e.slot < len(t.rules) and t.rules[e.slot].status == "active"
    ):
        raise IllegalMove("no such active rule", seat=e.seat)
    t.proposal = Proposal(e.action, e.slot, (e.seat,))
    _settle_vote(t)


def _on_vote(t: MaoWork, e: Vote) -> None:
    p = t.proposal
    if p is None:
        raise IllegalMove("there is no vote open", seat=e.seat)
    if e.seat in p.yes + p.no:
        raise IllegalMove("you have voted", seat=e.seat)
    t.proposal = replace(p, yes=(*p.yes, e.seat)) if e.yes else replace(p, no=(*p.no, e.seat))
    _settle_vote(t)


def _settle_vote(t: MaoWork) -> None:
    """M30/M31: a strict majority of all seats decides."""
    p = t.proposal
    assert p is not None
    if 2 * len(p.no) >= t.seats:
        t.proposal = None
        return
    if 2 * len(p.yes) <= t.seats:
        return
    t.proposal = None
    if p.action == "end":
        t.phase = Phase.ENDING
        t.judgements, t.calls, t.requests = [], [], []
        t.awaiting_rule = -1
        _maybe_over(t)
        return
    rule = t.rules[p.slot]
    t.rules[p.slot] = replace(rule, status="dropped")
    for j in [j for j in t.judgements if j.slot == p.slot]:
        t.judgements.remove(j)
        if j.ctx.trigger == "call":  # the dropped rule no longer answers that call
            _settle_call(t, j.ctx.seq)
    if p.action == "change":
        t.credits[rule.author] += 1
    _maybe_win(t)


HANDLERS: dict[type, Any] = {
    PlayCard: _on_play,
    Draw: _on_draw,
    Say: _on_say,
    Call: _on_call,
    RuleVerdict: _on_verdict,
    AddRule: _on_add_rule,
    RevealRule: _on_reveal_rule,
    Propose: _on_propose,
    Vote: _on_vote,
    Dealt: _on_dealt,
    Revealed: _on_revealed,
    Reshuffled: _on_reshuffled,
    TimerExpired: _on_timer,
}

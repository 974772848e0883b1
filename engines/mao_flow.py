"""The rules that move a Mao state (GAMES.md M1–M40), one event at a time,
on a typed working copy (:class:`~engines.mao_work.MaoWork`): the answers to
requests and timers, what players say, turns and card effects, proposals and
votes. Calls are in ``engines.mao_calls``, the secret rules' verdicts in
``engines.mao_verdicts``, and what they all share (zones, penalties, the end of
a round) in ``engines.mao_work``. :class:`~engines.mao.MaoGame` dispatches each
event to its handler here (``HANDLERS``); see its module docstring for the
theory of operation."""

from __future__ import annotations

from dataclasses import replace
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
from engines.mao_calls import _on_call, _settle_call
from engines.mao_events import (
    AddRule,
    Call,
    Draw,
    PlayCard,
    Propose,
    RevealRule,
    RuleVerdict,
    Say,
    Vote,
)
from engines.mao_state import (
    MaoState,
    Owed,
    Phase,
    PileCard,
    Proposal,
    Undo,
    Violation,
    effective,
    is_valid_play,
    next_turn,
    turn_of,
)
from engines.mao_verdicts import _judge_event, _on_add_rule, _on_reveal_rule, _on_verdict
from engines.mao_work import (
    MaoWork,
    _give,
    _give_from_discard,
    _in_game,
    _maybe_over,
    _maybe_win,
    _penalize,
    _show,
    _turn,
)
from engines.phrases import (
    POO_ENDERS,
    Phrase,
    fail_say,
    is_asking,
    is_explaining,
    is_swearing,
    nice_day,
    normalize,
    parse,
    spade_name,
    thank_you,
)

TALK_LIMIT = 8
"""M37: distinct words kept per seat and window for a "talking" call (a
verdict has at most 8 effects, one vouch each); later words are not kept."""


def _valid(t: MaoWork, card: Card) -> bool:
    return is_valid_play(t, card)  # type: ignore[arg-type]


# -- requests and timers ---------------------------------------------------------------


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


def _on_timer(t: MaoWork, e: TimerExpired) -> None:
    timer = _timer(t.freeze())
    if timer is None or timer.purpose != e.purpose:
        raise IllegalMove("no such timer is running")
    seat = turn_of(t.freeze())
    key = "cont_fail_10s" if t.flow.timeouts else "fail_10s"
    t.flow = replace(t.flow, timeouts=t.flow.timeouts + 1)
    _penalize(t, seat, Phrase(key))


# -- the penalty window ----------------------------------------------------------------


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


# -- what players say ------------------------------------------------------------------


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


# -- turns -----------------------------------------------------------------------------


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


# -- proposals and votes ---------------------------------------------------------------


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

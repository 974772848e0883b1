"""Mao's secret rules in play (GAMES.md M27–M30): adding one as a commitment
(M27), what each event puts before the authors (:func:`_judge_event`), an
author's verdict and its effects (M28), and revealing a rule, checked against
its commitment and every verdict it gave (M30). The rule language itself is in
``engines.mao_rules``."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Any

from engines.cards import Card
from engines.core import IllegalMove
from engines.mao_calls import _settle_call
from engines.mao_events import AddRule, RevealRule, RuleVerdict
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
    Judged,
    Judgement,
    MaoState,
    PileCard,
    SecretRule,
    append_record,
    judged_of,
)
from engines.mao_work import (
    _FIELDS,
    MaoWork,
    _give,
    _in_game,
    _maybe_over,
    _maybe_win,
    _penalize,
    _show,
    _turn,
)
from engines.phrases import Phrase, normalize

MAX_RULES = 64
"""At most this many secret rules in a game (M27; it bounds the state)."""


# -- judging (M28) ---------------------------------------------------------------------


def _judge_event(
    t: MaoWork,
    before: tuple[tuple[PileCard, ...], int],
    trigger: str,
    seat: int,
    card: Card | None,
    says: tuple[str, ...],
) -> None:
    """M28: every rule in force judges the event; ``before`` is the pile and
    the direction before it."""
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
    if not 0 <= e.slot < len(t.rules) or t.rules[e.slot].author != e.seat:
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
    if state.pending_win >= 0 or not 0 <= e.slot < len(state.rules):
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


# -- adding and revealing (M27, M30) ---------------------------------------------------


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

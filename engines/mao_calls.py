"""Calls in Mao (GAMES.md M17–M20, M37, M38): a seat gives another a penalty
with a penalty phrase. A call the engine can check is honoured, or costs the
caller "bad call" (M20); a call on a secret rule's own phrase, or a "talking"
call on words a secret rule may allow (M37), goes to the rules' authors and is
settled once every author has answered (:func:`_settle_call`)."""

from __future__ import annotations

from dataclasses import replace

from engines.core import IllegalMove
from engines.mao_events import Call
from engines.mao_rules import JudgeContext
from engines.mao_state import Judgement, PendingCall, Violation
from engines.mao_work import MaoWork, _in_game, _penalize
from engines.phrases import Phrase, PhraseError, normalize, parse_penalty


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

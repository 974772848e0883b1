"""Mao (GAMES.md M1–M40, seed ``mao.zh.txt``) as a pure deterministic engine.

Theory of operation
-------------------
The public state (:class:`MaoState`) holds, for every deck position, its zone
— the draw pile (hidden), a seat's hand (hidden, unless its face was shown),
or the discard pile (face up) — plus the turn *flow*, the phrases each seat
still owes, the current penalty window and the secret rules' commitments.
Plays are face up (M4): a ``play`` event names the position and the card and
the session proves the face. All rules of the base game are enforced by the
engine itself; players may also call penalties, and a wrong call is "bad
call" (M20).

*Turns and the penalty window (M17–M19).* The turn belongs to the seat
:func:`turn_of` computes from ``flow.last`` (who last took a turn), the
direction (M6, M10), the turns each seat must still miss (the A, M8, and
``skip`` rules) and the ``again`` flag. A *penalty window* runs from one turn
to the first play or draw of the next turn. A required phrase (M9, M12–M14,
M24) may be said with the play or on its own before the window closes; when
it closes, every phrase still owed is penalised ("failure to say X") and
stays owed one more window ("continued failure to say X"). Violations
detected on the spot (bad card M21, out of turn M22, 10 seconds M23, Mao in
vain M25, point of order M33–M34, talking M37 with no rule in force, M38
keywords) are penalised at once and remembered for the window so that a
player's call of the same violation is not "bad call" but simply has no
effect (M18). Calls about a
phrase still owed are honoured at once. After the window nothing can be
called (M19).

*The 7 chain (M9).* ``flow.chain`` counts the 7s just played; the next
player must play a 7 or draw the chain's cards saying "thank you (very…
much)". The cards come from the bottom of the discard pile (the seed's
reading, the top card stays) or, with ``seven_draw = "draw"``, the draw pile.

*Jacks (M11).* After a J the first suit named by anyone before the next card
sets the suit; the next card must be that suit or a J. The turned-up first
card of a round has no effect (the usual house reading).

*Mao (M14–M16, M25).* A play leaving one card owes "last card"; leaving none
owes "Mao", said last of all, after every other owed phrase, with "last card"
said on the previous turn and no penalty this turn; then the round is won
(M26). Otherwise "Mao" costs 3 cards (M25).

*Secret rules (M27–M30).* The engine never knows a secret rule. A winner
commits to one (``add_rule``); after every judged event (a play or draw that
took effect, a ``say``, a call with a phrase the base rules do not know) each
active rule's author owes a ``verdict`` for that event, in event order, and
no turn can be taken until all are in. The engine applies verdicts (penalty,
card back, skip, reverse, play again, draw, uphold a call) and keeps each one
with the :class:`~engines.mao_rules.JudgeContext` it was given for. When the
rule is revealed (M30 vote, or the end of the game) the engine checks the
commitment and re-judges every kept verdict with the same
:func:`~engines.mao_rules.judge`: a difference names the author as a cheater.

*Rounds (M26, M31).* A round ends with a win; every hidden card is revealed,
all cards are reshuffled into fresh positions and dealt again. The game has
no end of its own: it ends by majority vote (``propose end``), after which
every author must reveal their rules.

*No talking (M37).* Words the base rules neither require nor allow are
talk, with a play, a draw or on their own: penalised at once while no secret
rule is in force; with rules in force they are kept for the window, and a
"talking" call on them stands unless the rules' authors vouch (``vouch``
verdicts) for every word.

*Point of order (M32–M35)* pauses turns and timers; touching cards and
saying "point of order" again are penalised; the quoted form ``"point of
order"`` is the safe way to name it.

Variants (M36–M40) are ``MaoConfig`` switches: continuous play (winners
leave and rejoin), no talking, the M38 conduct penalties, Dictator Mao (only
the dictator calls penalties and adds rules; the engine's own detection of
base-rule violations stands for the dictator's eye) and Mini Mao (no card
effects or phrases, a first secret rule before the first deal). The choices
made where the seed is silent are in ``protocol.md`` §5.4.

Layout: the state values are in ``engines.mao_state``, the events and config
in ``engines.mao_events``, the rule language and judgement in
``engines.mao_rules``, phrases in ``engines.phrases``. This module holds the
game's interface (what is pending, who may do what, views, the outcome);
``engines.mao_flow`` holds the rules that move the state, one handler per
event (calls in ``engines.mao_calls``, the secret rules' verdicts, adding and
revealing in ``engines.mao_verdicts``), on :class:`~engines.mao_work.MaoWork`
— a typed, mutable working copy frozen again at the end, so a refused event
changes nothing; ``engines.mao_work`` also holds the zones and penalties every
handler shares. Phases are :class:`~engines.mao_state.Phase` values, as in
Bluff and the Bomb game.

What the engine is bad at: "lying" and "ungentlemanly conduct" (M38) cannot
be detected from data, so such calls are accepted as the caller says;
"touching" (M34) covers plays and draws only (there is no event for
reordering a hand); a secret rule is judged only on the events listed above,
and phrases a secret rule requires must be said in the judged event itself.
Every verdict is kept in the state until its rule is revealed, so the
encoded state grows with the game (chunked, so applying stays cheap).
"""

from __future__ import annotations

from typing import Any, ClassVar

from engines.cards import DECK_SIZE, Card, full_deck
from engines.core import (
    COMMON_EVENTS,
    Event,
    Game,
    IllegalMove,
    Knowledge,
    Outcome,
    Request,
    register,
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
from engines.mao_flow import HANDLERS, _timer
from engines.mao_rules import (
    HISTORY,
)
from engines.mao_state import (
    Flow,
    MaoState,
    Note,
    effective,
    is_valid_play,
    judged_of,
    turn_of,
)
from engines.mao_verdicts import _must_reveal, _quiet_verdict, author_verdict, due_context
from engines.mao_work import MaoWork, _deal_round, _in_game


class MaoGame(Game[MaoState, MaoConfig]):
    name: ClassVar[str] = "mao"
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int] = 10
    default_seats: ClassVar[int] = 4
    Config: ClassVar[type] = MaoConfig
    events: ClassVar[tuple[type[Event], ...]] = (
        PlayCard, Draw, Say, Call, RuleVerdict, AddRule, RevealRule, Propose, Vote, *COMMON_EVENTS
    )  # fmt: skip

    # -- setup ------------------------------------------------------------------
    def deck(self, config: MaoConfig) -> tuple[Card, ...]:
        return tuple(full_deck(config.decks))

    def new(self, config: MaoConfig, seats: int) -> MaoState:
        if not isinstance(config, MaoConfig):
            raise IllegalMove("not a Mao config")
        if not self.min_seats <= seats <= self.max_seats:
            raise IllegalMove(f"Mao is for {self.min_seats}–{self.max_seats} players")
        if config.dictator >= seats:
            raise IllegalMove("the dictator must be one of the seats")
        out = [False] * seats
        if config.dictator >= 0 and not config.dictator_plays:
            out[config.dictator] = True
        players = seats - sum(out)
        if players < 2:
            raise IllegalMove("Mao needs at least two players holding cards")
        n = DECK_SIZE * config.decks
        if players * config.hand_size + 1 > n:
            raise IllegalMove("not enough cards: use two decks (M1)")
        state = MaoState(
            config=config,
            seats=seats,
            next_position=n,
            draw=tuple(range(n - 1, -1, -1)),
            hands=tuple(() for _ in range(seats)),
            last_card=(False,) * seats,
            credits=(0,) * seats,
            out=tuple(out),
            wins=(0,) * seats,
            flow=Flow(last=0, missed=(0,) * seats),
        )
        t = MaoWork.of(state)
        if config.mini:  # M40: one player invents the first secret rule
            t.awaiting_rule = config.dictator if config.dictator >= 0 else 0
        _deal_round(t, first=True)
        return t.freeze()

    # -- the interface -------------------------------------------------------------
    def pending(self, state: MaoState) -> tuple[Request, ...]:
        timer = _timer(state)
        return state.requests + ((timer,) if timer else ())

    def legal_kinds(self, state: MaoState, seat: int) -> frozenset[str]:
        if state.phase == "over":
            return frozenset()
        kinds = {"say", "propose"} if state.phase != "ending" else set()
        if state.proposal is not None and seat not in state.proposal.yes + state.proposal.no:
            kinds.add("vote")
        if state.phase == "play":
            dictator = state.config.dictator
            if (dictator < 0 and _in_game(state, seat)) or seat == dictator:
                kinds.add("call")
            if not state.judgements and state.awaiting_rule < 0 and _in_game(state, seat):
                kinds |= {"play", "draw"}
        if any(state.rules[j.slot].author == seat for j in state.judgements):
            kinds.add("verdict")
        if state.awaiting_rule == seat or state.credits[seat] > 0:
            kinds.add("add_rule")
        if any(r.author == seat and _must_reveal(state, r) for r in state.rules):
            kinds.add("reveal_rule")
        return frozenset(kinds)

    def owed(self, state: MaoState) -> dict[int, str]:
        """M28: a rule author owes its verdicts, in event order, before any
        turn is taken; M30/M31: it owes the reveal of a dropped rule, and of
        every rule when the game is ending. (Writing a rule, M27, is the
        player's own choice and takes thought: not a duty with a clock.)"""
        out: dict[int, str] = {}
        for j in state.judgements:  # the first one due names the duty (in event order)
            author = state.rules[j.slot].author
            out.setdefault(author, f"its verdict for rule {j.slot} on event {j.ctx.seq} (M28)")
        for slot, rule in enumerate(state.rules):
            if _must_reveal(state, rule):
                out.setdefault(rule.author, f"the reveal of its rule {slot} (M30)")
        return out

    def view(self, state: MaoState, seat: int, known: Knowledge) -> dict[str, Any]:
        hand = []
        for p in state.hands[seat]:
            face = state.shown_face(p) or known.get(p)
            hand.append({"position": p, "card": str(face) if face is not None else None})
        others = {}
        for s in range(state.seats):
            if s == seat:
                continue
            shown = {p.position: str(p.card) for p in state.shown if p.position in state.hands[s]}
            others[s] = {"cards": len(state.hands[s]), "shown": shown}
        return {
            "seat": seat,
            "round": state.round,
            "phase": state.phase,
            "turn": turn_of(state) if state.phase == "play" else None,
            "direction": "clockwise" if state.flow.direction == 1 else "counter-clockwise",
            "top": str(state.top) if state.top else None,
            "pile": [str(p.card) for p in state.pile[-HISTORY:]],
            "draw_pile": len(state.draw),
            "suit": state.flow.suit,
            "chain": state.flow.chain,
            "hand": hand,
            "others": others,
            "owed": [str(p) for p in state.owes(seat)],
            "point_of_order": state.poo,
            "penalties": [
                {"target": n.target, "phrase": n.phrase, "cards": n.cards, "by": n.by}
                for n in state.notes
            ],
            "rules": [
                {
                    "slot": i,
                    "author": r.author,
                    "status": r.status,
                    "text": str(r.rule) if r.rule else None,
                }
                for i, r in enumerate(state.rules)
            ],
            "wins": list(state.wins),
            "opening": state.config.opening,
        }

    def outcome(self, state: MaoState) -> Outcome | None:
        if state.phase != "over":
            return None
        best = max(state.wins)
        cheaters = tuple(sorted({r.author for r in state.rules if r.faults}))
        winners = tuple(
            s
            for s in range(state.seats)
            if best > 0 and state.wins[s] == best and s not in cheaters
        )
        losers = tuple(s for s in range(state.seats) if s not in winners)
        reason = (
            f"the table voted to end the game (M31) after {state.round} round(s); "
            f"most rounds won: {best}"
        )
        return Outcome(winners, losers, reason, cheaters)

    # -- apply ----------------------------------------------------------------------
    def _apply(self, state: MaoState, event: Event) -> MaoState:
        if type(event) is RuleVerdict and not event.effects:
            quick = _quiet_verdict(state, event)
            if quick is not None:
                return quick
        t = MaoWork.of(state)
        handler = HANDLERS.get(type(event))
        if handler is None:
            raise IllegalMove(f"Mao does not use {event.KIND} events")
        handler(t, event)
        t.seq = state.seq + 1
        return t.freeze()


GAME = register(MaoGame())

__all__ = [
    "GAME",
    "MaoGame",
    "MaoState",
    "Note",
    "author_verdict",
    "due_context",
    "effective",
    "is_valid_play",
    "judged_of",
    "turn_of",
]

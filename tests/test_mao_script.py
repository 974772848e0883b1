"""A scripted Mao table for the tests: chosen hands, every request answered
the way the session would (deals, reveals, reshuffles), and short verbs for
the players' events. The only test here checks the script deals what it says."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engines.bots import Simulator
from engines.cards import Card, full_deck
from engines.core import Deal, Event, TimerExpired
from engines.mao import GAME, MaoState, Note, author_verdict, due_context
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
from engines.mao_rules import Rule, commitment

C = Card.parse


@dataclass
class Script:
    hands: list[list[str]]
    top: str
    draws: list[str] = field(default_factory=list)
    config: MaoConfig = field(default_factory=MaoConfig)
    seats: int = 0
    secrets: dict[int, tuple[Rule, bytes]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.seats = self.seats or len(self.hands)
        self.table = Simulator(GAME, self.config, self.seats, deck_seed=0)
        self.deal(self.hands, self.top, self.draws)

    def deal(self, hands: list[list[str]], top: str, draws: list[str] = ()) -> None:  # type: ignore[assignment]
        """Script the (next) deal: seats' hands in seat order, the top card, the
        draw pile's first cards; the rest of the deck follows in index order."""
        t = self.table
        while t.state.requests and not isinstance(t.state.requests[0], Deal):
            t.serve()  # a new round: the reveal and the reshuffle come first
        state = t.state
        order = [p for r in state.requests if isinstance(r, Deal) for p in r.positions]
        order += [state.start, *reversed(state.draw)]
        wanted = [C(x) for h in hands for x in h] + [C(top)] + [C(x) for x in draws]
        assert len(set(wanted)) == len(wanted), "a card appears twice in the script"
        rest = [c for c in full_deck(self.config.decks) if c not in wanted]
        assert len(order) == len(wanted + rest)
        t.faces.update(zip(order, wanted + rest, strict=True))
        self.serve()

    # -- the session ----------------------------------------------------------
    @property
    def state(self) -> MaoState:
        return self.table.state

    def serve(self) -> None:
        while self.table.serve():
            pass

    def submit(self, event: Event) -> MaoState:
        self.table.submit(event)
        self.serve()
        return self.state

    # -- reading ----------------------------------------------------------------
    def hand(self, seat: int) -> list[str]:
        s = self.state
        return [str(s.shown_face(p) or self.table.faces[p]) for p in s.hands[seat]]

    def position(self, seat: int, card: str) -> int:
        for p in self.state.hands[seat]:
            if self.table.faces[p] == C(card):
                return p
        raise AssertionError(f"seat {seat} does not hold {card}: {self.hand(seat)}")

    def notes(self, since: int = 0) -> list[tuple[int, str]]:
        return [(n.target, n.phrase) for n in self.state.notes if n.seq >= since]

    def all_notes(self) -> list[Note]:
        return list(self.state.notes)

    # -- the players ------------------------------------------------------------
    def play(self, seat: int, card: str, *says: str) -> MaoState:
        return self.submit(PlayCard(seat, self.position(seat, card), C(card), says))

    def draw(self, seat: int, *says: str) -> MaoState:
        return self.submit(Draw(seat, says))

    def say(self, seat: int, *says: str) -> MaoState:
        return self.submit(Say(seat, says))

    def call(self, seat: int, target: int, phrase: str) -> MaoState:
        return self.submit(Call(seat, target, phrase))

    def tick(self) -> MaoState:
        timer = next(r for r in GAME.pending(self.state) if r.KIND == "timer")
        return self.submit(TimerExpired(timer.purpose))

    def add_rule(self, seat: int, rule: Rule, salt: bytes = bytes(range(32))) -> int:
        self.submit(AddRule(seat, commitment(rule, salt)))
        slot = len(self.state.rules) - 1
        self.secrets[slot] = (rule, salt)
        return slot

    def judge(self) -> MaoState:
        """Every author's peer submits its due verdicts (M28)."""
        progress = True
        while progress:
            progress = False
            for slot, (rule, _salt) in self.secrets.items():
                verdict = author_verdict(self.state, slot, rule)
                if verdict is not None:
                    self.submit(verdict)
                    progress = True
        return self.state

    def false_verdict(self, slot: int, *effects: Any) -> MaoState:
        ctx = due_context(self.state, slot)
        assert ctx is not None
        return self.submit(
            RuleVerdict(self.state.rules[slot].author, slot, ctx.seq, tuple(effects))
        )

    def reveal(self, slot: int) -> MaoState:
        rule, salt = self.secrets[slot]
        return self.submit(RevealRule(self.state.rules[slot].author, slot, salt.hex(), rule))

    def vote_all(self, action: str, slot: int = -1, yes: int | None = None) -> MaoState:
        yes = self.seats if yes is None else yes
        self.submit(Propose(0, action, slot))
        for seat in range(1, self.seats):
            if self.state.proposal is None:
                break
            self.submit(Vote(seat, seat < yes))
        return self.state

    def win(self, seat: int, first: str, second: str, *extra: str) -> None:
        """``seat`` holding exactly ``first`` and ``second`` goes out (M14, M15)."""
        self.play(seat, first, "last card", *extra)


def test_script_deals_the_chosen_cards() -> None:
    s = Script([["A♠", "2♥"], ["3♦", "4♣"]], top="5♥", draws=["6♠"],
               config=MaoConfig(hand_size=2))  # fmt: skip
    assert s.hand(0) == ["A♠", "2♥"] and s.hand(1) == ["3♦", "4♣"]
    assert str(s.state.top) == "5♥" and s.state.phase == "play"
    assert s.table.known[0] == {
        p: C(c) for p, c in zip(s.state.hands[0], ["A♠", "2♥"], strict=True)
    }

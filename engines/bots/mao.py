"""Mao bots (issue 4): a legal-moves bot and a sensible bot.

Both bots keep the duties of a rule author (M27–M28): when they win a round
they commit to a fair secret rule (validated with ``mao_rules.validate``
against their own other rules), their "peer" judges every event for it with
``mao.author_verdict``, and they reveal it when it is dropped or the game
ends. Both vote for the end of the game once ``rounds`` rounds are done
(M31), and propose it (whichever bot acts first: seat 0 may be a person).

* :class:`LegalBot` plays a random valid card (M5) or draws, and says the
  phrases the base rules require (M9–M16) — nothing more. It never learns.
* :class:`SensibleBot` also keeps 7s and Jacks for when they help, names the
  suit it holds most after a Jack, calls "failure to say X" on a seat that
  still owes X after its own event (a penalty it is sure of, M17), and learns
  secret rules from the penalties verdicts give (a small hypothesis tracker:
  for each rule phrase, the simplest predicate over the played card and the
  card below that fits every penalised play and the fewest unpunished ones),
  then avoids the cards it believes forbidden and says the phrases it
  believes required.

Bots are deterministic given their seed (``random.Random``). The salt of a
bot's rule commitment comes from ``salt_source`` when one is given — p2p
passes ``secrets.token_bytes`` so that nobody who guesses a bot's seed can
test rules against its commitment — and from the seeded generator otherwise
(engine-only tests and benches).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import msgpack

from engines.cards import Card
from engines.core import EngineError, Event, from_data, register_bots, to_data
from engines.mao import MaoState, author_verdict, effective, is_valid_play, judged_of
from engines.mao_events import AddRule, Call, Draw, PlayCard, Propose, RevealRule, Say, Vote
from engines.mao_rules import CATALOGUE, JudgeContext, Rule, RuleError, commitment, validate
from engines.phrases import Phrase, nice_day, normalize, spade_name, suit_name, thank_you

_RULES = tuple(CATALOGUE.values())


@lru_cache(maxsize=4096)
def _fits(rule: Rule, others: tuple[Rule, ...]) -> bool:
    try:
        validate(rule, others)
    except RuleError:
        return False
    return True


class _Author:
    """What every Mao bot does besides playing: rules, verdicts, votes."""

    def __init__(
        self, seed: int, rounds: int = 5, salt_source: Callable[[int], bytes] | None = None
    ):
        self.rng = random.Random(f"mao-bot/{seed}")
        self.rounds = rounds
        self._ended_asked = -1  # the round in which this bot last proposed the end
        self.salt_source = salt_source or self.rng.randbytes
        self.written: list[tuple[Rule, bytes, str]] = []  # rule, salt, commitment

    # -- what must survive a crash ----------------------------------------------
    SECRETS_VERSION = 1

    def export_secrets(self) -> bytes:
        """The rules this bot wrote, with their salts: what it must still
        know after a crash to judge and reveal them (M28, M30). The session
        stores these bytes, fsynced, before it signs the commitment."""
        written = [[to_data(rule), salt, commit] for rule, salt, commit in self.written]
        return msgpack.packb({"v": self.SECRETS_VERSION, "written": written}, use_bin_type=True)

    def import_secrets(self, data: bytes) -> None:
        """Take back what :meth:`export_secrets` gave (raises ValueError)."""
        try:
            obj = msgpack.unpackb(data, raw=False)
            if obj.get("v") != self.SECRETS_VERSION:
                raise ValueError(f"unknown layout {obj.get('v')!r}")
            written = []
            for rule_data, salt, commit in obj["written"]:
                rule = from_data(Rule, rule_data)
                if commitment(rule, salt) != commit:
                    raise ValueError("a saved rule does not match its commitment")
                written.append((rule, salt, commit))
        except (TypeError, KeyError, AttributeError, EngineError, msgpack.UnpackException) as exc:
            raise ValueError(f"saved Mao rules are damaged: {exc}") from exc
        self.written = written
        self._mine_cache = None

    # -- duties ---------------------------------------------------------------
    def _mine(self, state: MaoState, seat: int) -> dict[int, tuple[Rule, bytes]]:
        """My rules by slot (slots never move, so this is cached per rule count)."""
        cached = getattr(self, "_mine_cache", None)
        if cached is not None and cached[0] == (len(state.rules), len(self.written)):
            return cached[1]
        by_commit = {c: (r, s) for r, s, c in self.written}
        mine = {
            i: by_commit[r.commitment]
            for i, r in enumerate(state.rules)
            if r.author == seat and r.commitment in by_commit
        }
        self._mine_cache = ((len(state.rules), len(self.written)), mine)
        return mine

    def author_owes(self, state: MaoState, seat: int) -> Event | None:
        """What this seat owes as the author of its rules now: a verdict on
        the next judged event (M28), else a reveal that is due (M30)."""
        mine = self._mine(state, seat) if self.written else {}
        for j in state.judgements:
            if j.slot in mine:
                return author_verdict(state, j.slot, mine[j.slot][0])
        for slot, (rule, salt) in mine.items():
            r = state.rules[slot]
            if r.status == "dropped" or (state.phase == "ending" and r.status == "active"):
                return RevealRule(seat, slot, salt.hex(), rule)
        return None

    def duties(self, state: MaoState, seat: int) -> Event | None:
        if state.phase == "over":
            return None
        owed = self.author_owes(state, seat)
        if owed is not None:
            return owed
        if state.phase == "ending":
            return None
        if state.poo >= 0 and state.poo != seat:
            return Say(seat, ("point taken",))  # M35: back to the game
        cfg = state.config
        if cfg.continuous and state.out[seat] and state.phase == "play" and seat != cfg.dictator:
            # M36: a winner deals themself back in, with a new rule when owed one
            new_rule = ("introducing a new rule",) if state.credits[seat] else ()
            return Say(seat, ("rejoining the game", *new_rule))
        if state.awaiting_rule == seat or state.credits[seat] > 0:
            return self.write_rule(state, seat)
        p = state.proposal
        stuck = state.phase == "play" and (
            (not state.draw and len(state.pile) <= 2)
            or state.flow.turn_no > self.LONG_ROUND * (state.seats - sum(state.out))
        )
        if p is not None and seat not in p.yes + p.no:
            if p.action == "end":
                return Vote(seat, sum(state.wins) >= self.rounds)
            # M30: drop a rule only when the game is stuck or the round never ends
            return Vote(seat, stuck)
        if p is None and sum(state.wins) >= self.rounds and self._ended_asked != state.round:
            self._ended_asked = state.round  # once a round: a person may say no (M31)
            return Propose(seat, "end")  # any bot: seat 0 may be a person
        if p is None and stuck and state.turn == seat:
            return self._propose_drop(state, seat)
        return None

    LONG_ROUND = 30
    """Turns per player after which a round counts as broken (M30)."""

    def _propose_drop(self, state: MaoState, seat: int) -> Event | None:
        """M30: nothing left to draw, or a round that never ends: vote out the
        rule that has done the most lately."""
        if not hasattr(self, "proposed"):
            self.proposed: set[tuple[int, int]] = set()
        counts = []
        for slot, r in enumerate(state.rules):
            if r.status == "active" and (state.round, slot) not in self.proposed:
                recent = judged_of(r)[-200:]
                counts.append((sum(len(j.effects) for j in recent), slot))
        if not counts:
            return None
        _hits, slot = max(counts)
        self.proposed.add((state.round, slot))
        return Propose(seat, "drop", slot)

    def active_rules(self, state: MaoState, seat: int) -> list[Rule]:
        """My rules still in force (a dropped rule binds nobody, M30)."""
        mine = self._mine(state, seat) if self.written else {}
        return [rule for slot, (rule, _s) in mine.items() if state.rules[slot].status == "active"]

    def write_rule(self, state: MaoState, seat: int) -> AddRule:
        """M27: a fair rule from the catalogue that fits with my other rules."""
        mine = self._mine(state, seat)
        others = tuple(sorted((r for slot, (r, _s) in mine.items()
                               if state.rules[slot].status == "active"), key=str))  # fmt: skip
        order = list(range(len(_RULES)))
        self.rng.shuffle(order)
        for i in order:
            rule = _RULES[i]
            if rule in others or not _fits(rule, others):
                continue
            salt = self.salt_source(32)
            commit = commitment(rule, salt)
            self.written.append((rule, salt, commit))
            return AddRule(seat, commit)
        return AddRule(seat, "")

    # -- playing ----------------------------------------------------------------
    def draw_says(self, state: MaoState, seat: int) -> list[str]:
        """Secret phrases to say with a draw (only what the bot knows)."""
        return []

    refused: set[tuple[int, int]]

    def _note_refusals(self, state: MaoState, seat: int) -> None:
        """A card sent back this turn (bad card, forbidden) is not tried again."""
        if not hasattr(self, "refused"):
            self.refused = set()
        u = state.undo
        if u is not None and u.retracted and u.seat == seat:
            self.refused.add((u.flow.turn_no, u.position))
        self.refused = {k for k in self.refused if k[0] >= state.flow.turn_no}

    @staticmethod
    def faces(state: MaoState, seat: int, known: dict[int, Card]) -> list[tuple[int, Card]]:
        out = []
        for p in state.hands[seat]:
            face = known.get(p) or state.shown_face(p)
            if face is not None:
                out.append((p, face))
        return out

    @staticmethod
    def phrases_for(state: MaoState, seat: int, card: Card, suit_choice: int) -> list[str]:
        """What the base rules will require for playing ``card`` now (M9–M16)."""
        if state.config.mini:
            return []
        rank, suit = effective(card)
        says: list[str] = []
        if rank == 7:
            says.append(str(nice_day(state.flow.chain + 1)))
        if card.is_joker or (rank, suit) == (9, 2):
            says.append(str(Phrase("badger")))
        elif suit == 0:
            says.append(str(spade_name(rank)))
        if rank == 11:
            says.append(str(suit_name(suit_choice)))
        left = len(state.hands[seat]) - 1
        if left == 1:
            says.append(str(Phrase("last_card")))
        elif left == 0 and state.last_card[seat]:
            says.append(str(Phrase("mao")))
        return says

    def turn(
        self,
        state: MaoState,
        seat: int,
        known: dict[int, Card],
        choose: Callable[[list[tuple[int, Card]]], tuple[int, Card] | None],
        extra: Callable[[Card], list[str]],
    ) -> Event | None:
        if state.phase != "play" or state.judgements or state.awaiting_rule >= 0:
            return None
        if state.poo >= 0 or state.turn != seat or state.out[seat]:
            return None
        if state.requests:
            return None  # wait until our hand's faces are known
        hand = self.faces(state, seat, known)
        self._note_refusals(state, seat)
        valid = [
            (p, c)
            for p, c in hand
            if is_valid_play(state, c) and (state.flow.turn_no, p) not in self.refused
        ]
        pick = choose(valid) if valid else None
        if pick is None:
            chain = state.flow.chain
            says = [str(thank_you(chain))] if chain else []
            return Draw(seat, tuple(says + self.draw_says(state, seat)))
        position, card = pick
        suits = [effective(c)[1] for _p, c in hand if _p != position]
        suit_choice = max(range(4), key=lambda s: (suits.count(s), -s)) if suits else 0
        says = self.phrases_for(state, seat, card, suit_choice)
        more = extra(card)
        if more:  # secret phrases before "Mao", which is said last (M15)
            tail = says[-1:] if says and says[-1] == "Mao" else []
            says = [s for s in says if s != "Mao"] + more + tail
        return PlayCard(seat, position, card, tuple(says))


class LegalBot(_Author):
    """Plays a random valid card, or draws; says what the base rules require."""

    def act(self, game: Any, state: MaoState, seat: int, known: dict[int, Card]) -> Event | None:
        duty = self.duties(state, seat)
        if duty is not None:
            return duty
        owed = state.owes(seat)
        if owed and state.phase == "play":
            return Say(seat, tuple(str(p) for p in owed))
        return self.turn(state, seat, known, self._choose, lambda card: [])

    def _choose(self, valid: list[tuple[int, Card]]) -> tuple[int, Card] | None:
        return self.rng.choice(valid)


# -- learning secret rules ---------------------------------------------------------


def _red(card: Card) -> bool:
    return effective(card)[1] in (1, 2)


def _top(ctx: JudgeContext, index: int) -> Any:
    return effective(ctx.pile[0])[index] if ctx.pile else None


_FEATURES: tuple[tuple[str, Callable[[JudgeContext], Any]], ...] = (
    ("same_color", lambda c: bool(c.pile) and _red(c.card) == _red(c.pile[0])),
    ("same_rank", lambda c: bool(c.pile) and effective(c.card)[0] == _top(c, 0)),
    ("rank", lambda c: effective(c.card)[0]),
    ("suit", lambda c: effective(c.card)[1]),
    ("top_rank", lambda c: _top(c, 0)),
    ("top_suit", lambda c: _top(c, 1)),
    ("color", lambda c: _red(c.card)),
    ("hand", lambda c: c.hand),
)
_FEATURE = dict(_FEATURES)


class Hypotheses:
    """For each secret-rule penalty phrase: the plays it punished and spared,
    and the simplest feature test (feature == value) that explains them."""

    LIMIT = 40

    def __init__(self) -> None:
        self.hit: dict[tuple[int, str], list[JudgeContext]] = {}
        self.spared: dict[int, list[JudgeContext]] = {}
        self.returned: set[tuple[int, str]] = set()
        self.seen: dict[int, int] = {}
        self.best: dict[tuple[int, str], tuple[str, Any] | None] = {}
        self.draw_phrases: dict[str, int] = {}  # phrase -> rule slot
        self.active: set[int] = set()

    def update(self, state: MaoState) -> None:
        self.active = {i for i, r in enumerate(state.rules) if r.status == "active"}
        for slot, rule in enumerate(state.rules):
            start = self.seen.get(slot, 0)
            count = sum(len(chunk) for chunk in rule.record)
            if start == count:
                continue
            self.seen[slot] = count
            for judged in judged_of(rule)[start:]:
                ctx = judged.ctx
                if ctx.trigger == "draw":
                    for e in judged.effects:
                        if e.do == "penalty" and normalize(e.phrase).startswith("failuretosay"):
                            self.draw_phrases[e.phrase.split(" ", 3)[-1]] = slot
                if ctx.trigger != "play" or ctx.card is None:
                    continue
                penalties = [e for e in judged.effects if e.do == "penalty"]
                if not penalties:
                    self._keep(self.spared.setdefault(slot, []), ctx)
                for e in penalties:
                    key = (slot, e.phrase)
                    self._keep(self.hit.setdefault(key, []), ctx)
                    if any(x.do == "return" for x in judged.effects):
                        self.returned.add(key)
                    self.best.pop(key, None)

    def _keep(self, items: list[JudgeContext], ctx: JudgeContext) -> None:
        items.append(ctx)
        del items[: -self.LIMIT]

    def _explain(self, key: tuple[int, str]) -> tuple[str, Any] | None:
        if key in self.best:
            return self.best[key]
        hits = self.hit[key]
        spared = self.spared.get(key[0], [])
        best: tuple[str, Any] | None = None
        best_score = None
        for name, feature in _FEATURES:
            values = {feature(c) for c in hits}
            if len(values) != 1:
                continue
            (value,) = values
            false_alarms = sum(1 for c in spared if feature(c) == value)
            if best_score is None or false_alarms < best_score:
                best, best_score = (name, value), false_alarms
        self.best[key] = best
        return best

    def predicts(self, ctx: JudgeContext) -> tuple[bool, list[str]]:
        """(avoid this play?, phrases to say with it), from rules still active."""
        avoid, say = False, []
        for key in self.hit:
            if key[0] not in self.active:
                continue
            test = self._explain(key)
            if test is None:
                continue
            name, value = test
            feature = _FEATURE[name]
            if feature(ctx) != value:
                continue
            phrase = key[1]
            if normalize(phrase).startswith("failuretosay"):
                words = phrase.split(" ", 3)
                if len(words) == 4:
                    say.append(words[3])
            else:
                avoid = True
        return avoid, say


class SensibleBot(_Author):
    """Plays to win, says its phrases, calls what it is sure of, learns rules."""

    def __init__(
        self, seed: int, rounds: int = 5, salt_source: Callable[[int], bytes] | None = None
    ):
        super().__init__(seed, rounds, salt_source)
        self.learned = Hypotheses()

    def act(self, game: Any, state: MaoState, seat: int, known: dict[int, Card]) -> Event | None:
        duty = self.duties(state, seat)
        if duty is not None:
            return duty
        if state.phase != "play":
            return None
        owed = state.owes(seat)
        if owed:
            return Say(seat, tuple(str(p) for p in owed))
        call = self._sure_call(state, seat)
        if call is not None:
            return call
        if state.turn != seat:
            return None
        self.learned.update(state)
        mine = self.active_rules(state, seat)
        return self.turn(
            state,
            seat,
            known,
            lambda valid: self._choose(state, seat, valid, mine),
            lambda card: self._extra(state, seat, card, mine),
        )

    def draw_says(self, state: MaoState, seat: int) -> list[str]:
        from engines.mao_rules import applies

        ctx = JudgeContext(0, "draw", seat, hand=len(state.hands[seat]) + 1)
        mine = [
            e.phrase
            for rule in self.active_rules(state, seat)
            if applies(rule, ctx)
            for e in rule.effects
            if e.do == "require"
        ]
        self.learned.update(state)
        active = self.learned.active
        learned = {p for p, slot in self.learned.draw_phrases.items() if slot in active}
        return sorted(set(mine) | learned)[:4]

    def _sure_call(self, state: MaoState, seat: int) -> Event | None:
        """M24: a seat that still owes a phrase after acting is sure to be penalised."""
        if state.config.dictator >= 0 and seat != state.config.dictator:
            return None
        for o in state.owed:
            if o.seat != seat and not o.continued and o.seat != state.turn:
                return Call(seat, o.seat, f"failure to say {Phrase.from_key(o.phrase)}")
        return None

    def _ctx(self, state: MaoState, seat: int, card: Card) -> JudgeContext:
        pile = tuple(p.card for p in reversed(state.pile[-5:]))
        return JudgeContext(0, "play", seat, card, pile, 0 if state.flow.direction == 1 else 1,
                            len(state.hands[seat]) - 1, (), state.flow.chain)  # fmt: skip

    def _own_rules(self, rules: list[Rule], ctx: JudgeContext) -> tuple[bool, list[str]]:
        from engines.mao_rules import applies

        avoid, say = False, []
        for rule in rules:
            if applies(rule, ctx):
                for e in rule.effects:
                    if e.do == "forbid":
                        avoid = True
                    elif e.do == "require":
                        say.append(e.phrase)
        return avoid, say

    def _choose(
        self, state: MaoState, seat: int, valid: list[tuple[int, Card]], mine: list[Rule]
    ) -> tuple[int, Card] | None:
        scored = []
        doubtful = []
        for p, c in valid:
            ctx = self._ctx(state, seat, c)
            avoid_mine, _ = self._own_rules(mine, ctx)
            if avoid_mine:
                continue
            rank, _suit = effective(c)
            # keep 7s and jacks for answering a 7 chain or changing suit; shed the rest
            score = (rank == 7 and not state.flow.chain, rank == 11, self.rng.random())
            if self.learned.predicts(ctx)[0]:
                doubtful.append((score, p, c))
            else:
                scored.append((score, p, c))
        if not scored and doubtful and self.rng.random() < 0.5:
            scored = doubtful  # a guess can be wrong: sometimes test it rather than draw
        if not scored:
            return None
        _, p, c = min(scored)
        return p, c

    def _extra(self, state: MaoState, seat: int, card: Card, mine: list[Rule]) -> list[str]:
        ctx = self._ctx(state, seat, card)
        _, say_mine = self._own_rules(mine, ctx)
        _, say_learned = self.learned.predicts(ctx)
        out: list[str] = []
        for s in say_mine + say_learned:
            if s not in out:
                out.append(s)
        return out[:4]


def sensible_bots(
    seats: int, seed: int, salt_source: Callable[[int], bytes] | None = None
) -> list[SensibleBot]:
    """One SensibleBot per seat, each seeded from ``seed`` and its seat."""
    return [SensibleBot(seed * 1000 + s, salt_source=salt_source) for s in range(seats)]


register_bots("mao", sensible_bots)  # the game finds its bots here (engines.core)

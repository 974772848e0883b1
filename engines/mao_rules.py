"""Mao secret rules (GAMES.md M27–M30): a declarative rule language, its
canonical encoding for commitments, validation, and the author's judgement.

Theory of operation
-------------------
A secret rule is *data*, never code: a :class:`Rule` is a trigger, a list of
conditions that must all hold, a list of effects, and a penalty phrase. There
is nothing to evaluate but this module's fixed interpretation, so a rule from
the wire can never run code.

* **Trigger** — what kind of event the rule looks at: ``play`` (a card was
  played successfully), ``draw`` (a player drew instead of playing) or
  ``say`` (somebody said something on their own).
* **Conditions** (:class:`Cond`, all must hold; ``negate`` flips one):
  ``rank``/``suit``/``color``/``parity`` of the played card, ``top_rank``/
  ``top_suit``/``top_color`` of the card it was played on, ``same_rank``/
  ``same_suit``/``same_color`` between the two, ``rank_step`` (played rank
  minus the rank below, mod 13), ``hand`` (the actor's hand size after the
  event), ``direction`` (0 clockwise, 1 counter-clockwise), ``chain`` (7s in
  the running 7 chain), ``suit_run`` (the last *k* cards on the pile share a
  suit) and ``said`` (a phrase was said in the event). A joker is the 9♦ in
  every respect (M7), so conditions see it as 9♦.
* **Effects** (:class:`Effect`): ``forbid`` (the play is a violation: the
  card goes back and the penalty phrase is given, like a bad card),
  ``penalize`` (penalty phrase, the event stands), ``require`` (the phrase
  must be said in the same event, else "failure to say X" or the rule's own
  phrase), ``skip`` (the next player misses their next *n* turns),
  ``reverse``, ``again`` (the same player plays again), ``draw_next`` /
  ``draw_self`` (*n* cards, not a penalty).

The rule language has no way to name a seat, so every rule is the same for
everyone (M27 "fair to all players"). :func:`validate` refuses, with a reason,
rules that can never fire, contradict the base rules (penalising a phrase the
base rules require, requiring "Mao", penalising drawing, which M4 always
allows), or break the game (leave some top card with no playable card, alone
or together with the author's other rules).

**Commitment** (M27, DESIGN "Engines"): the author's peer draws a 32-byte
salt with ``secrets`` and publishes ``commitment(rule, salt)`` = SHA-256 of a
domain tag, the salt and :func:`canonical` (msgpack of the rule's plain data,
keys in field order). The engine holds only the commitment until the rule is
revealed.

**Judgement** (M28): :func:`judge` maps a rule and a :class:`JudgeContext`
(the public facts about one event, built by the engine) to the author's
verdict: a tuple of :class:`VerdictEffect` (possibly empty). The author's
peer runs it after every judged event and submits the verdict; the engine
applies verdicts without knowing the rule, keeps each verdict with its
context, and when the rule is revealed runs :func:`judge` again over every
kept context: a verdict that differs is attributed to its author.
A penalty call by another player with a phrase no base rule knows is judged
too (M28): the author upholds it (``uphold``) when the phrase is this rule's
and the target was penalised under it in the current penalty window.

With the no-talking variant (M37) and secret rules in force, the engine
cannot tell talk from a secret rule's words, so a "talking" call is judged by
the authors: the context's ``said`` holds what the target said in the window
that the base rules neither require nor allow, and each author *vouches*
(``vouch``, with the words) for the words its rule requires or allows
(:func:`allows`). The call stands unless every one of those words is vouched
for.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import ClassVar

import msgpack

from engines.cards import Card, Suit
from engines.core import to_data
from engines.phrases import (
    MAX_UTTERANCE,
    PENALTY_IDS,
    Phrase,
    custom,
    fail_say,
    normalize,
    parse,
)

TRIGGERS = ("play", "draw", "say")
CARD_TESTS = frozenset(
    {"rank", "suit", "color", "parity", "top_rank", "top_suit", "top_color", "same_rank",
     "same_suit", "same_color", "rank_step", "suit_run"}
)  # fmt: skip
CONTEXT_TESTS = frozenset({"hand", "direction", "chain", "said"})
VALUE_RANGES: dict[str, tuple[int, int]] = {
    "rank": (1, 13), "top_rank": (1, 13), "suit": (0, 3), "top_suit": (0, 3), "color": (0, 1),
    "top_color": (0, 1), "parity": (0, 1), "rank_step": (0, 12), "hand": (0, 40),
    "direction": (0, 1), "chain": (0, 20), "suit_run": (2, 5),
}  # fmt: skip
EFFECTS = ("forbid", "penalize", "require", "skip", "reverse", "again", "draw_next", "draw_self")
COUNTED = {"skip": (1, 3), "draw_next": (1, 3), "draw_self": (1, 3)}
MAX_CONDITIONS = 4
MAX_EFFECTS = 3
COMMIT_TAG = b"nodealer/mao-rule/v1\x00"
SALT_BYTES = 32
HISTORY = 5
"""Cards of the discard pile a judgement context keeps (top first)."""

# Phrases the base rules require or use: a secret rule may not penalise them.
_BASE_SAID = ("nice_day", "thank_you", "badger", "last_card", "mao", "spade", "suit",
              "point_of_order", "poo_quoted", "poo_over", "poo_end", "point_taken",
              "disorder", "pick_up", "rejoin", "new_rule")  # fmt: skip


class RuleError(ValueError):
    """A rule that is malformed, contradictory or game-breaking (with the reason)."""


_SUIT_WORDS = ("♠", "♥", "♦", "♣")
_COLOR_WORDS = ("black", "red")


@dataclass(frozen=True, slots=True)
class Cond:
    """One condition: ``test`` over ``values`` (or ``phrase`` for ``said``)."""

    test: str
    values: tuple[int, ...] = ()
    phrase: str = ""
    negate: bool = False

    def __post_init__(self) -> None:
        if self.test not in CARD_TESTS | CONTEXT_TESTS:
            raise RuleError(f"unknown condition {self.test!r}")
        if self.test == "said":
            if self.values or not normalize(self.phrase) or len(self.phrase) > MAX_UTTERANCE:
                raise RuleError("'said' takes a phrase and no values")
        elif self.test in ("same_rank", "same_suit", "same_color"):
            if self.values or self.phrase:
                raise RuleError(f"{self.test!r} takes no values")
        else:
            lo, hi = VALUE_RANGES[self.test]
            if not self.values or self.phrase:
                raise RuleError(f"{self.test!r} needs values in {lo}..{hi}")
            if len(set(self.values)) != len(self.values) or list(self.values) != sorted(
                self.values
            ):
                raise RuleError(f"{self.test!r} values must be sorted and distinct")
            if any(not lo <= v <= hi for v in self.values):
                raise RuleError(f"{self.test!r} values must be in {lo}..{hi}")
            if self.test == "suit_run" and len(self.values) != 1:
                raise RuleError("'suit_run' takes one length")

    def __str__(self) -> str:
        neg = "not " if self.negate else ""
        t, v = self.test, self.values
        if t in ("rank", "top_rank"):
            what = "the card" if t == "rank" else "the card below"
            names = "/".join(_rank_text(r) for r in v)
            return f"{what} is {neg}{names}"
        if t in ("suit", "top_suit"):
            what = "the card" if t == "suit" else "the card below"
            return f"{what} is {neg}{'/'.join(_SUIT_WORDS[s] for s in v)}"
        if t in ("color", "top_color"):
            what = "the card" if t == "color" else "the card below"
            return f"{what} is {neg}{'/'.join(_COLOR_WORDS[c] for c in v)}"
        if t == "parity":
            return f"the rank is {neg}{'/'.join(('even', 'odd')[p] for p in v)}"
        if t.startswith("same_"):
            return f"it has {neg}the same {t[5:]} as the card below"
        if t == "rank_step":
            return f"its rank is {neg}{'/'.join(f'+{s}' for s in v)} from the card below"
        if t == "suit_run":
            return f"{neg}the last {v[0]} cards share a suit"
        if t == "hand":
            return f"the player {'does not hold' if neg else 'holds'} {'/'.join(map(str, v))} cards"
        if t == "direction":
            return f"play {'is not' if neg else 'is'} {('clockwise', 'counter-clockwise')[v[0]]}"
        if t == "chain":
            return f"the 7 chain is {neg}{'/'.join(map(str, v))} long"
        return f"{'nobody says' if neg else 'someone says'} “{self.phrase}”"


def _rank_text(rank: int) -> str:
    return {1: "A", 11: "J", 12: "Q", 13: "K"}.get(rank, str(rank))


@dataclass(frozen=True, slots=True)
class Effect:
    """One effect: ``do`` with a count ``n`` or a ``phrase`` (``require``)."""

    do: str
    n: int = 0
    phrase: str = ""

    def __post_init__(self) -> None:
        if self.do not in EFFECTS:
            raise RuleError(f"unknown effect {self.do!r}")
        if self.do in COUNTED:
            lo, hi = COUNTED[self.do]
            if not lo <= self.n <= hi:
                raise RuleError(f"{self.do!r} needs a count in {lo}..{hi}")
        elif self.n:
            raise RuleError(f"{self.do!r} takes no count")
        if self.do == "require":
            if not normalize(self.phrase) or len(self.phrase) > MAX_UTTERANCE:
                raise RuleError("'require' needs the phrase to say")
        elif self.phrase:
            raise RuleError(f"{self.do!r} takes no phrase")

    def __str__(self) -> str:
        return {
            "forbid": "the card is forbidden",
            "penalize": "that is penalised",
            "require": f"the player must say “{self.phrase}”",
            "skip": f"the next player misses {self.n} turn{'s' if self.n > 1 else ''}",
            "reverse": "play reverses",
            "again": "the same player plays again",
            "draw_next": f"the next player draws {self.n}",
            "draw_self": f"the player draws {self.n}",
        }[self.do]


@dataclass(frozen=True, slots=True)
class Rule:
    """A secret rule. ``phrase`` is the penalty phrase (needed by ``forbid``
    and ``penalize``; ``require`` falls back to "failure to say X")."""

    trigger: str
    conditions: tuple[Cond, ...]
    effects: tuple[Effect, ...]
    phrase: str = ""

    def __post_init__(self) -> None:
        if self.trigger not in TRIGGERS:
            raise RuleError(f"trigger must be one of {', '.join(TRIGGERS)}")
        if not 1 <= len(self.effects) <= MAX_EFFECTS:
            raise RuleError(f"a rule has 1..{MAX_EFFECTS} effects")
        if len(self.conditions) > MAX_CONDITIONS:
            raise RuleError(f"a rule has at most {MAX_CONDITIONS} conditions")
        if len(self.phrase) > MAX_UTTERANCE:
            raise RuleError("penalty phrase too long")

    def penalty_phrase(self, effect: Effect) -> Phrase:
        """The phrase a penalty under ``effect`` is given with."""
        if self.phrase.strip():
            return custom(self.phrase)
        if effect.do == "require":
            found = parse(effect.phrase)
            return fail_say(found if found is not None else custom(effect.phrase))
        raise RuleError("this rule needs a penalty phrase")

    @property
    def penalty_phrases(self) -> tuple[Phrase, ...]:
        out = []
        for e in self.effects:
            if e.do in ("forbid", "penalize", "require"):
                out.append(self.penalty_phrase(e))
        return tuple(out)

    def __str__(self) -> str:
        when = {"play": "When a card is played", "draw": "When a player draws",
                "say": "When someone speaks"}[self.trigger]  # fmt: skip
        conds = " and ".join(str(c) for c in self.conditions)
        then = "; ".join(str(e) for e in self.effects)
        tail = f" (penalty: “{self.phrase}”)" if self.phrase else ""
        return f"{when}{' and ' + conds if conds else ''}: {then}{tail}"

    def to_data(self) -> dict:
        return to_data(self)


# -- commitment ----------------------------------------------------------------


def canonical(rule: Rule) -> bytes:
    """The canonical bytes of a rule: msgpack of its plain data (keys in field order)."""
    return msgpack.packb(to_data(rule), use_bin_type=True)


def commitment(rule: Rule, salt: bytes) -> str:
    """Hex SHA-256 over the domain tag, the salt and the canonical rule (M27)."""
    if not isinstance(salt, bytes) or len(salt) != SALT_BYTES:
        raise RuleError(f"the salt is {SALT_BYTES} bytes")
    return hashlib.sha256(COMMIT_TAG + salt + canonical(rule)).hexdigest()


# -- judgement -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JudgeContext:
    """The public facts about one judged event, as the engine saw them.

    ``card``/``pile`` are *effective* cards (a joker is 9♦). ``pile`` is the
    discard pile before the event, top first, at most ``HISTORY`` cards.
    For a penalty call (``trigger == "call"``) ``call_phrase`` and
    ``call_target`` say what was called; ``violators`` (filled when the
    verdict is due) are the seats penalised under this rule in the window;
    for a "talking" call (M37) ``said`` is the target's talk in the window."""

    seq: int
    trigger: str
    seat: int
    card: Card | None = None
    pile: tuple[Card, ...] = ()
    direction: int = 0
    hand: int = 0
    said: tuple[str, ...] = ()
    chain: int = 0
    next_seat: int = 0
    call_phrase: str = ""
    call_target: int = -1
    violators: tuple[int, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class VerdictEffect:
    """One part of a verdict: ``penalty`` (target, phrase, ``n`` cards),
    ``return`` (the played card goes back), ``skip`` (target misses ``n``
    turns), ``reverse``, ``again``, ``draw`` (target draws ``n``),
    ``uphold`` (a call was right), ``vouch`` (M37: the rule requires or
    allows the words ``phrase`` that ``target`` said)."""

    KINDS: ClassVar[tuple[str, ...]] = (
        "penalty", "return", "skip", "reverse", "again", "draw", "uphold", "vouch"
    )  # fmt: skip
    WORDED: ClassVar[frozenset[str]] = frozenset({"penalty", "vouch"})
    do: str
    target: int = -1
    n: int = 0
    phrase: str = ""

    def __post_init__(self) -> None:
        if self.do not in self.KINDS:
            raise ValueError(f"unknown verdict effect {self.do!r}")
        if not -1 <= self.target <= 64 or not 0 <= self.n <= 3:
            raise ValueError("verdict effect target or count out of range")
        if (self.do in self.WORDED) != bool(self.phrase):
            raise ValueError("a penalty or a vouch (and nothing else) carries a phrase")
        if len(self.phrase) > MAX_UTTERANCE:
            raise ValueError("verdict phrase too long")

    def __str__(self) -> str:
        if self.do == "penalty":
            return f"penalty “{self.phrase}” to seat {self.target}"
        if self.do in ("skip", "draw"):
            return f"{self.do} {self.n} for seat {self.target}"
        if self.do == "vouch":
            return f"vouch for “{self.phrase}” said by seat {self.target}"
        return self.do if self.target < 0 else f"{self.do} seat {self.target}"


_EFFECTIVE = tuple(
    (9, int(Suit.DIAMONDS), 1) if i >= 52 else (i % 13 + 1, i // 13, int(i // 13 in (1, 2)))
    for i in range(54)
)


def _effective(card: Card) -> tuple[int, int, int]:
    """(rank, suit, color) of a card for rules: a joker is 9♦ (M7)."""
    return _EFFECTIVE[card.index % 54]


def _holds(cond: Cond, ctx: JudgeContext) -> bool:
    t = cond.test
    result: bool
    if t == "said":
        result = any(normalize(u) == normalize(cond.phrase) for u in ctx.said)
    elif t == "hand":
        result = ctx.hand in cond.values
    elif t == "direction":
        result = ctx.direction in cond.values
    elif t == "chain":
        result = ctx.chain in cond.values
    else:
        if ctx.card is None:
            return False
        rank, suit, color = _effective(ctx.card)
        top = _effective(ctx.pile[0]) if ctx.pile else None
        if t == "rank":
            result = rank in cond.values
        elif t == "suit":
            result = suit in cond.values
        elif t == "color":
            result = color in cond.values
        elif t == "parity":
            result = rank % 2 in cond.values
        elif t == "suit_run":
            k = cond.values[0]
            below = [_effective(c)[1] for c in ctx.pile[: k - 1]]
            result = len(below) == k - 1 and all(s == suit for s in below)
        elif top is None:
            return False
        elif t == "top_rank":
            result = top[0] in cond.values
        elif t == "top_suit":
            result = top[1] in cond.values
        elif t == "top_color":
            result = top[2] in cond.values
        elif t == "same_rank":
            result = rank == top[0]
        elif t == "same_suit":
            result = suit == top[1]
        elif t == "same_color":
            result = color == top[2]
        else:  # rank_step
            result = (rank - top[0]) % 13 in cond.values
    return result != cond.negate


def applies(rule: Rule, ctx: JudgeContext) -> bool:
    """Whether the rule's trigger and every condition hold for this event."""
    return ctx.trigger == rule.trigger and all(_holds(c, ctx) for c in rule.conditions)


def allows(rule: Rule, words: str) -> bool:
    """M37: whether ``rule`` requires or allows saying ``words``: they are a
    phrase the rule requires, or one a condition listens for (saying it, or
    not saying it, changes what the rule does) — unless the rule is about
    speech and penalises exactly those words."""
    n = normalize(words)
    if not n:
        return False
    if any(e.do == "require" and normalize(e.phrase) == n for e in rule.effects):
        return True
    listened = any(c.test == "said" and normalize(c.phrase) == n for c in rule.conditions)
    forbids_words = rule.trigger == "say" and any(e.do == "penalize" for e in rule.effects)
    return listened and not forbids_words


def _is_talking_call(phrase: str) -> bool:
    found = parse(phrase)
    return found is not None and found.id == "talking"


def judge(rule: Rule, ctx: JudgeContext) -> tuple[VerdictEffect, ...]:
    """The author's verdict on one event (M28): what the engine must do."""
    if ctx.trigger == "call" and _is_talking_call(ctx.call_phrase):
        return tuple(
            VerdictEffect("vouch", ctx.call_target, phrase=words)
            for words in ctx.said
            if allows(rule, words)
        )
    if ctx.trigger == "call":
        said = normalize(ctx.call_phrase)
        mine = any(normalize(str(p)) == said for p in rule.penalty_phrases)
        if mine and ctx.call_target in ctx.violators:
            return (VerdictEffect("uphold", ctx.seat),)
        return ()
    if not applies(rule, ctx):
        return ()
    out: list[VerdictEffect] = []
    for e in rule.effects:
        if e.do == "forbid":
            out.append(VerdictEffect("return", ctx.seat))
            out.append(VerdictEffect("penalty", ctx.seat, 1, str(rule.penalty_phrase(e))))
        elif e.do == "penalize":
            out.append(VerdictEffect("penalty", ctx.seat, 1, str(rule.penalty_phrase(e))))
        elif e.do == "require":
            if not any(normalize(u) == normalize(e.phrase) for u in ctx.said):
                out.append(VerdictEffect("penalty", ctx.seat, 1, str(rule.penalty_phrase(e))))
        elif e.do == "skip":
            out.append(VerdictEffect("skip", ctx.next_seat, e.n))
        elif e.do in ("reverse", "again"):
            out.append(VerdictEffect(e.do))
        elif e.do == "draw_next":
            out.append(VerdictEffect("draw", ctx.next_seat, e.n))
        else:  # draw_self
            out.append(VerdictEffect("draw", ctx.seat, e.n))
    return tuple(out)


# -- validation ----------------------------------------------------------------

_ALL_FACES = tuple(Card(i) for i in range(54))
_SAMPLE_HANDS = (0, 1, 2, 3, 5, 8)


def _said_phrases(rule: Rule) -> list[str]:
    return [c.phrase for c in rule.conditions if c.test == "said"]


def _forbids(rule: Rule, ctx: JudgeContext) -> bool:
    return any(e.do == "forbid" for e in rule.effects) and applies(rule, ctx)


def _check_shape(rule: Rule) -> None:
    dos = [e.do for e in rule.effects]
    if len(set(dos)) != len(dos) and not all(d == "require" for d in dos):
        raise RuleError("an effect appears twice")
    tests = [c.test for c in rule.conditions]
    if len(set(tests)) != len(tests):
        raise RuleError("a condition test appears twice; list several values in one instead")
    if rule.trigger != "play" and any(t in CARD_TESTS for t in tests):
        raise RuleError(f"card conditions only apply to plays, not to '{rule.trigger}'")
    if "forbid" in dos:
        if rule.trigger != "play":
            raise RuleError("only a play can be forbidden (drawing is always allowed, M4)")
        if len(dos) > 1:
            raise RuleError("a forbidden play has no other effect: the card goes back")
    if rule.trigger == "draw" and ("penalize" in dos or "again" in dos):
        raise RuleError("drawing is always allowed (M4): it cannot be penalised or repeated")
    if ("forbid" in dos or "penalize" in dos) and not rule.phrase.strip():
        raise RuleError("a rule that penalises needs a penalty phrase (M27)")
    if "reverse" in dos and "again" in dos:
        raise RuleError("'reverse' and 'again' together: the same player plays either way")
    for phrase in [*(e.phrase for e in rule.effects), *_said_phrases(rule)]:
        found = parse(phrase)
        if found is not None and found.id in PENALTY_IDS:
            raise RuleError(f"“{phrase}” is a base penalty phrase")
    for phrase in [rule.phrase, *(e.phrase for e in rule.effects), *_said_phrases(rule)]:
        if "mao" in normalize(phrase) or "毛" in normalize(phrase):
            raise RuleError("a secret rule may not involve saying “Mao” (M25)")
    if rule.phrase.strip():
        found = parse(rule.phrase)
        if found is not None and found.id in PENALTY_IDS:
            raise RuleError(f"“{rule.phrase}” is already a base penalty phrase; choose another")
    for e in rule.effects:
        if e.do == "require" and rule.trigger == "say":
            raise RuleError("a rule triggered by speech cannot require more speech")
    if rule.trigger == "say":
        said = [c for c in rule.conditions if c.test == "said" and not c.negate]
        if not said:
            raise RuleError("a rule on speech needs the phrase it is about ('said')")
        base = parse(said[0].phrase)
        if "penalize" in dos and base is not None and base.id in _BASE_SAID:
            raise RuleError(f"the base rules require “{said[0].phrase}”; it cannot be penalised")


def _contexts(rule: Rule):
    """A sample of event contexts covering every top card and context value
    the rule's conditions can distinguish."""
    said_sets: list[tuple[str, ...]] = [()]
    for p in _said_phrases(rule):
        said_sets.append((p,))
    if any(e.do == "require" for e in rule.effects):
        said_sets.append(tuple(e.phrase for e in rule.effects if e.do == "require"))
    chains = sorted({0, *(v for c in rule.conditions if c.test == "chain" for v in c.values)})
    hand_values = {v for c in rule.conditions if c.test == "hand" for v in c.values}
    hands = sorted({*_SAMPLE_HANDS, *hand_values}) if hand_values else [3]
    dirs = (0, 1) if any(c.test == "direction" for c in rule.conditions) else (0,)
    return said_sets, chains, hands, dirs


def _fires_somewhere(rule: Rule) -> bool:
    said_sets, chains, hands, dirs = _contexts(rule)
    cards: tuple[Card | None, ...] = _ALL_FACES if rule.trigger == "play" else (None,)
    tops = _ALL_FACES if rule.trigger == "play" else (Card(0),)
    for said in said_sets:
        for chain in chains:
            for hand in hands:
                for d in dirs:
                    for top in tops:
                        for card in cards:
                            ctx = JudgeContext(0, rule.trigger, 0, card, (top, top, top, top),
                                               d, hand, said, chain)  # fmt: skip
                            if applies(rule, ctx):
                                return True
    return False


def _base_valid(card: Card, top: Card) -> bool:
    r, s, _ = _effective(card)
    tr, ts, _ = _effective(top)
    return r == tr or s == ts


def _blocked_top(rules: list[Rule]) -> tuple[Card, int, int] | None:
    """A (top card, hand, direction) on which the forbid rules leave no base-valid
    card playable whatever the player says, or None."""
    forbidding = [r for r in rules if any(e.do == "forbid" for e in r.effects)]
    if not forbidding:
        return None
    hands = set()
    dirs = set()
    said_options: list[tuple[str, ...]] = [()]
    for r in forbidding:
        _s, _c, h, d = _contexts(r)
        hands.update(h)
        dirs.update(d)
        said_options.extend((p,) for p in _said_phrases(r))
    all_said = tuple(p for opt in said_options for p in opt)
    said_options.append(all_said)
    for top in _ALL_FACES:
        for hand in sorted(hands):
            for d in sorted(dirs):
                ok = False
                for card in _ALL_FACES:
                    if card == top or not _base_valid(card, top):
                        continue
                    for said in said_options:
                        ctx = JudgeContext(0, "play", 0, card, (top,) * HISTORY, d, hand, said)
                        if not any(_forbids(r, ctx) for r in forbidding):
                            ok = True
                            break
                    if ok:
                        break
                if not ok:
                    return top, hand, d
    return None


def validate(rule: Rule, others: tuple[Rule, ...] = ()) -> Rule:
    """Return ``rule`` if it is well-formed, can fire, agrees with the base rules
    and, with the author's ``others``, leaves the game playable; else RuleError."""
    if not isinstance(rule, Rule):
        raise RuleError("not a rule")
    _check_shape(rule)
    if not _fires_somewhere(rule):
        raise RuleError("its conditions contradict each other: it can never apply")
    required = {
        normalize(e.phrase) for r in (rule, *others) for e in r.effects if e.do == "require"
    }
    for r in (rule, *others):
        if r.trigger == "say" and any(e.do == "penalize" for e in r.effects):
            for c in r.conditions:
                if c.test == "said" and not c.negate and normalize(c.phrase) in required:
                    raise RuleError(f"one rule requires “{c.phrase}” and another penalises it")
    blocked = _blocked_top([*others, rule])
    if blocked is not None:
        top, hand, d = blocked
        with_others = " together with your other rules" if others else ""
        raise RuleError(
            f"game-breaking{with_others}: on {top} no card could ever be played "
            f"(hand {hand}, {'clockwise' if d == 0 else 'counter-clockwise'})"
        )
    return rule


# -- the seed's examples and a catalogue of fair rules --------------------------

M29_EXAMPLES: dict[str, Rule] = {
    "two skips twice": Rule("play", (Cond("rank", (2,)),), (Effect("skip", 2),)),
    "red on black": Rule(
        "play", (Cond("same_color", negate=True),), (Effect("forbid"),), "colour clash"
    ),
    "two fat ladies": Rule(
        "play",
        (Cond("rank", (8,)), Cond("top_rank", (8,))),
        (Effect("require", phrase="two fat ladies"),),
    ),
}
"""GAMES.md M29, written in the rule language."""

CATALOGUE: dict[str, Rule] = {
    **M29_EXAMPLES,
    "hearts love": Rule("play", (Cond("suit", (1,)),), (Effect("require", phrase="I love you"),)),
    "queen reverses": Rule("play", (Cond("rank", (12,)),), (Effect("reverse"),)),
    "king again": Rule("play", (Cond("rank", (13,)),), (Effect("again"),)),
    "royal on royal": Rule(
        "play",
        (Cond("rank", (11, 12, 13)), Cond("top_rank", (11, 12, 13))),
        (Effect("forbid"),),
        "no crowds",
    ),
    "three gives one": Rule("play", (Cond("rank", (3,)),), (Effect("draw_next", 1),)),
    "thank the deck": Rule("draw", (), (Effect("require", phrase="thank the deck"),)),
    "two left": Rule("play", (Cond("hand", (2,)),), (Effect("require", phrase="two to go"),)),
    "step up": Rule("play", (Cond("rank_step", (1,)),), (Effect("require", phrase="going up"),)),
    "no clubs backwards": Rule(
        "play",
        (Cond("direction", (1,)), Cond("suit", (3,)), Cond("same_suit", negate=True)),
        (Effect("forbid"),),
        "wrong way club",
    ),
    "no hello": Rule("say", (Cond("said", phrase="hello"),), (Effect("penalize"),), "no greetings"),
    "even on even": Rule(
        "play",
        (Cond("parity", (0,)), Cond("same_suit"), Cond("top_rank", (2, 4, 6, 8, 10, 12))),
        (Effect("require", phrase="even stevens"),),
    ),
    "suit run": Rule("play", (Cond("suit_run", (3,)),), (Effect("draw_self", 1),)),
    "long chain": Rule("play", (Cond("chain", (3,)),), (Effect("skip", 1),)),
    "snap": Rule("play", (Cond("same_rank"),), (Effect("require", phrase="snap"),)),
    "ten on red": Rule(
        "play", (Cond("rank", (10,)), Cond("top_color", (1,))), (Effect("skip", 1),)
    ),
    "dig deeper": Rule(
        "play",
        (Cond("suit", (0,)), Cond("top_suit", (0,))),
        (Effect("require", phrase="dig deeper"),),
    ),
    "black six": Rule("play", (Cond("rank", (6,)), Cond("color", (0,))), (Effect("draw_next", 2),)),
}
"""The three M29 examples and more distinct kinds of rule (every condition
test and effect appears at least once)."""

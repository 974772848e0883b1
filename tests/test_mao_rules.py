"""The secret-rule language: validation, commitment, judgement (M27–M30)."""

import pytest

from engines.cards import Card
from engines.core import from_data, to_data
from engines.mao_rules import (
    CARD_TESTS,
    CATALOGUE,
    CONTEXT_TESTS,
    EFFECTS,
    M29_EXAMPLES,
    Cond,
    Effect,
    JudgeContext,
    Rule,
    RuleError,
    VerdictEffect,
    canonical,
    commitment,
    judge,
    validate,
)

C = Card.parse
SALT = bytes(range(32))


def play(card: str, top: str, *, said=(), hand=3, direction=0, chain=0, pile=()) -> JudgeContext:
    cards = (C(top), *(C(p) for p in pile))
    return JudgeContext(7, "play", 1, C(card), cards, direction, hand, tuple(said), chain, 2)


def test_catalogue_covers_every_condition_and_effect() -> None:
    tests = {c.test for r in CATALOGUE.values() for c in r.conditions}
    effects = {e.do for r in CATALOGUE.values() for e in r.effects}
    assert tests == CARD_TESTS | CONTEXT_TESTS
    assert effects == set(EFFECTS)
    assert len(CATALOGUE) - len(M29_EXAMPLES) >= 10
    for rule in CATALOGUE.values():
        assert validate(rule) is rule
        assert str(rule).startswith("When ")


def test_m29_two_skips_the_next_player_twice() -> None:
    rule = M29_EXAMPLES["two skips twice"]
    assert judge(rule, play("2♥", "2♣")) == (VerdictEffect("skip", 2, 2),)
    assert judge(rule, play("3♥", "3♣")) == ()


def test_m29_red_may_not_go_on_black() -> None:
    rule = M29_EXAMPLES["red on black"]
    assert judge(rule, play("5♥", "5♠")) == (
        VerdictEffect("return", 1),
        VerdictEffect("penalty", 1, 1, "colour clash"),
    )
    assert judge(rule, play("5♣", "5♥")) != ()
    assert judge(rule, play("6♥", "5♥")) == ()
    assert judge(rule, play("RJ", "9♠")) != ()  # M7: the joker is red, it is the 9♦


def test_m29_eight_on_eight_says_two_fat_ladies() -> None:
    rule = M29_EXAMPLES["two fat ladies"]
    assert judge(rule, play("8♥", "8♠")) == (
        VerdictEffect("penalty", 1, 1, "failure to say two fat ladies"),
    )
    assert judge(rule, play("8♥", "8♠", said=["Two fat ladies!"])) == ()
    assert judge(rule, play("8♥", "3♥")) == ()


def test_more_kinds_of_rule_are_judged() -> None:
    cat = CATALOGUE
    assert judge(cat["queen reverses"], play("Q♥", "2♥")) == (VerdictEffect("reverse"),)
    assert judge(cat["king again"], play("K♥", "2♥")) == (VerdictEffect("again"),)
    assert judge(cat["three gives one"], play("3♥", "2♥")) == (VerdictEffect("draw", 2, 1),)
    assert judge(cat["black six"], play("6♠", "6♥")) == (VerdictEffect("draw", 2, 2),)
    assert judge(cat["black six"], play("6♦", "6♥")) == ()
    assert judge(cat["two left"], play("4♥", "2♥", hand=2))[0].phrase == "failure to say two to go"
    assert judge(cat["two left"], play("4♥", "2♥", hand=3)) == ()
    assert judge(cat["step up"], play("4♥", "3♣")) != ()
    assert judge(cat["step up"], play("A♥", "K♥")) != ()  # wraps round
    assert judge(cat["no clubs backwards"], play("3♣", "3♥", direction=1)) != ()
    assert judge(cat["no clubs backwards"], play("3♣", "3♥", direction=0)) == ()
    assert judge(cat["suit run"], play("3♣", "4♣", pile=["9♣"])) == (VerdictEffect("draw", 1, 1),)
    assert judge(cat["suit run"], play("3♣", "4♣", pile=["9♦"])) == ()
    assert judge(cat["long chain"], play("7♣", "7♦", chain=3)) == (VerdictEffect("skip", 2, 1),)
    assert judge(cat["royal on royal"], play("K♣", "Q♣"))[1].phrase == "no crowds"
    assert judge(cat["even on even"], play("4♣", "6♣")) != ()
    assert judge(cat["hearts love"], play("4♥", "6♥", said=["i love you"])) == ()
    draw = JudgeContext(3, "draw", 0, hand=6, next_seat=1)
    assert judge(cat["thank the deck"], draw)[0].phrase == "failure to say thank the deck"
    hello = JudgeContext(4, "say", 2, said=("Hello!",))
    assert judge(cat["no hello"], hello) == (VerdictEffect("penalty", 2, 1, "no greetings"),)


def test_rules_compose_in_one_verdict() -> None:
    rule = Rule("play", (Cond("rank", (5,)),), (Effect("skip", 1), Effect("draw_self", 2)))
    assert judge(validate(rule), play("5♥", "5♣")) == (
        VerdictEffect("skip", 2, 1),
        VerdictEffect("draw", 1, 2),
    )


def test_a_call_is_upheld_only_for_the_rules_phrase_and_a_penalised_seat() -> None:
    rule = M29_EXAMPLES["red on black"]
    call = JudgeContext(9, "call", 0, call_phrase="Colour  clash!", call_target=1, violators=(1,))
    assert judge(rule, call) == (VerdictEffect("uphold", 0),)
    wrong_seat = JudgeContext(9, "call", 0, call_phrase="colour clash", call_target=2,
                              violators=(1,))  # fmt: skip
    assert judge(rule, wrong_seat) == ()
    wrong_phrase = JudgeContext(9, "call", 0, call_phrase="red alert", call_target=1,
                                violators=(1,))  # fmt: skip
    assert judge(rule, wrong_phrase) == ()


@pytest.mark.parametrize(
    ("rule", "reason"),
    [
        (Rule("play", (Cond("rank", (2,)), Cond("suit", (1,)), Cond("top_rank", (5,)),
                       Cond("same_rank")), (Effect("skip", 1),)), "never apply"),
        (Rule("play", (), (Effect("forbid"),), "nope"), "game-breaking"),
        (Rule("play", (Cond("suit", (0, 1, 2, 3)),), (Effect("forbid"),), "x"), "game-breaking"),
        (Rule("draw", (), (Effect("penalize"),), "greedy"), "always allowed"),
        (Rule("say", (Cond("said", phrase="last card"),), (Effect("penalize"),), "x"), "require"),
        (Rule("play", (Cond("rank", (5,)),), (Effect("require", phrase="Mao"),)), "Mao"),
        (Rule("play", (Cond("rank", (5,)),), (Effect("forbid"),)), "penalty phrase"),
        (Rule("play", (Cond("rank", (5,)),), (Effect("forbid"), Effect("skip", 1)), "x"), "back"),
        (Rule("draw", (Cond("rank", (5,)),), (Effect("skip", 1),)), "only apply to plays"),
        (Rule("play", (Cond("rank", (5,)),), (Effect("penalize"),), "bad card"), "base penalty"),
        (Rule("play", (Cond("rank", (5,)),), (Effect("reverse"), Effect("again"))), "together"),
        (Rule("say", (), (Effect("penalize"),), "shh"), "needs the phrase"),
    ],
)  # fmt: skip
def test_contradictory_or_game_breaking_rules_are_refused(rule: Rule, reason: str) -> None:
    with pytest.raises(RuleError, match=reason):
        validate(rule)


def test_rules_that_break_the_game_together_are_refused() -> None:
    no_red = Rule("play", (Cond("color", (1,)), Cond("same_suit", negate=True)),
                  (Effect("forbid"),), "no red")  # fmt: skip
    no_black = Rule("play", (Cond("color", (0,)), Cond("same_suit", negate=True)),
                    (Effect("forbid"),), "no black")  # fmt: skip
    validate(no_red)
    validate(no_black)
    only_same = Rule("play", (Cond("same_suit", negate=True),), (Effect("forbid"),), "suit")
    validate(only_same)
    no_same_suit = Rule("play", (Cond("same_suit"),), (Effect("forbid"),), "same")
    with pytest.raises(RuleError, match="together"):
        validate(no_same_suit, (only_same,))
    speak = Rule("play", (Cond("rank", (4,)),), (Effect("require", phrase="four"),))
    hush = Rule("say", (Cond("said", phrase="four"),), (Effect("penalize"),), "hush")
    with pytest.raises(RuleError, match="requires"):
        validate(hush, (speak,))


def test_malformed_pieces_are_refused() -> None:
    for make in (
        lambda: Cond("nosuch", (1,)),
        lambda: Cond("rank", (14,)),
        lambda: Cond("rank", (3, 2)),
        lambda: Cond("rank", ()),
        lambda: Cond("same_suit", (1,)),
        lambda: Cond("said"),
        lambda: Effect("skip", 9),
        lambda: Effect("reverse", 1),
        lambda: Effect("require"),
        lambda: Rule("nosuch", (), (Effect("reverse"),)),
        lambda: Rule("play", (), ()),
        lambda: VerdictEffect("explode"),
        lambda: VerdictEffect("penalty", 1, 1, ""),
    ):
        with pytest.raises(ValueError):
            make()


def test_commitment_is_canonical_and_binds_salt_and_rule() -> None:
    rule = M29_EXAMPLES["two fat ladies"]
    copy = from_data(Rule, to_data(rule))
    assert copy == rule and canonical(copy) == canonical(rule)
    c = commitment(rule, SALT)
    assert len(c) == 64 and c == commitment(copy, SALT)
    assert commitment(rule, bytes(32)) != c
    assert commitment(M29_EXAMPLES["red on black"], SALT) != c
    with pytest.raises(RuleError):
        commitment(rule, b"short")


def test_rule_data_decodes_strictly() -> None:
    data = to_data(M29_EXAMPLES["red on black"])
    data["conditions"][0]["test"] = "exec"
    with pytest.raises(ValueError):
        from_data(Rule, data)

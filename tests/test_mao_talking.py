"""M37 (no talking) as the seed says it: players may not speak unless the
game requires or allows it. With no secret rule in force the engine knows
every phrase that may be said, so any other text is "talking", with a play,
a draw or on its own. With secret rules in force only their authors know
which words are allowed: a "talking" / "说话" call stands unless an author
vouches (its verdict) that its rule requires or allows those words."""

from __future__ import annotations

import pytest

from engines.cards import Card
from engines.core import IllegalMove
from engines.mao import GAME
from engines.mao_events import MaoConfig, PlayCard
from engines.mao_rules import M29_EXAMPLES, Cond, Effect, Rule, VerdictEffect, allows, judge
from tests.test_mao_script import Script

C = Card.parse


def _quiet(hands: list[list[str]], top: str, draws=()) -> Script:
    return Script(hands, top, list(draws), MaoConfig(hand_size=len(hands[0]), no_talking=True))


def _with_rule(rule: Rule, hands: list[list[str]], top: str) -> tuple[Script, int]:
    """No talking; seat 0 wins round 0 and writes ``rule``; round 1 deals
    ``hands`` (two cards each; seat 1 starts)."""
    s = _quiet([["5♣", "K♣"], ["4♣", "Q♥"], ["6♣", "8♥"]], "2♣")
    s.play(0, "5♣", "last card")
    s.play(1, "4♣", "last card")
    s.play(2, "6♣", "last card")
    s.table.submit(PlayCard(0, s.position(0, "K♣"), C("K♣"), ("Mao",)))
    s.deal(hands, top)
    assert s.notes() == []  # the phrases the base rules required are not talk
    return s, s.add_rule(0, rule)


# -- no secret rule in force: the engine knows every allowed phrase -----------------


def test_M37_free_text_with_a_play_or_a_draw_is_talking() -> None:
    s = _quiet([["5♣", "K♣", "2♣"], ["4♣", "Q♣", "3♣"]], "10♣", ["9♥"])
    s.play(0, "5♣", "mysterious words")
    assert s.notes() == [(0, "talking")]
    s.draw(1, "hello")
    assert s.notes() == [(0, "talking"), (1, "talking")]


def test_M37_phrases_the_base_rules_require_or_allow_are_not_talking() -> None:
    s = _quiet([["J♣", "K♣", "Q♠"], ["4♣", "Q♥", "3♥"]], "10♣")
    s.play(0, "J♣")
    s.say(1, "红心")  # naming the suit after a J (M11): allowed to anyone
    s.play(1, "Q♥")
    s.say(1, "point of order")
    s.say(0, "nice weather")  # during a point of order talk is not judged
    s.say(0, "point taken")
    s.play(0, "Q♠", "queen of spades")  # required (M12)
    assert s.notes() == []
    s.say(1, "last card")  # a base phrase nobody owes is talk
    assert s.notes() == [(1, "talking")]


def test_M37_a_correct_talking_call_stands_and_a_wrong_one_is_a_bad_call() -> None:
    s = _quiet([["5♣", "K♣", "2♣"], ["4♣", "Q♣", "3♣"]], "10♣")
    s.play(0, "5♣", "what a hand")
    s.call(1, 0, "说话")  # right: the violation is already penalised (M18), no bad call
    assert s.notes() == [(0, "talking")]
    s.call(0, 1, "talking")  # seat 1 said nothing
    assert s.notes() == [(0, "talking"), (0, "bad call")]  # on the caller (M20)


# -- secret rules in force: the authors vouch for their rules' words ---------------------


def test_M37_the_rule_language_says_which_words_a_rule_allows() -> None:
    assert allows(M29_EXAMPLES["two fat ladies"], "Two fat ladies!")
    assert not allows(M29_EXAMPLES["two fat ladies"], "nice weather")
    unless_sorry = (Cond("same_color", negate=True), Cond("said", phrase="sorry", negate=True))
    sorry = Rule("play", unless_sorry, (Effect("forbid"),), "colour clash")
    assert allows(sorry, "sorry")  # saying it lets the card stand: allowed
    assert not allows(Rule("say", (Cond("said", phrase="hello"),), (Effect("penalize"),),
                           "no greetings"), "hello")  # fmt: skip


def test_M37_with_a_rule_in_force_talk_is_not_penalised_until_called() -> None:
    s, _slot = _with_rule(M29_EXAMPLES["two fat ladies"],
                          [["8♦", "K♣"], ["8♥", "2♠"], ["3♦", "4♥"]], "8♣")  # fmt: skip
    s.play(1, "8♥", "two fat ladies", "last card")
    s.judge()
    s.say(2, "nice weather")
    s.judge()
    assert s.notes() == []  # the engine cannot know these are not a rule's words
    assert [w for _seat, w in s.state.talk] == ["two fat ladies", "nice weather"]


def test_M37_a_talking_call_on_a_rules_words_is_a_bad_call_when_its_author_vouches() -> None:
    s, slot = _with_rule(M29_EXAMPLES["two fat ladies"],
                         [["8♦", "K♣"], ["8♥", "2♠"], ["3♦", "4♥"]], "8♣")  # fmt: skip
    s.play(1, "8♥", "two fat ladies", "last card")
    s.judge()
    s.call(2, 1, "说话")
    with pytest.raises(IllegalMove):  # the authors judge the call before play goes on
        s.play(0, "8♦", "two fat ladies", "last card")
    s.judge()
    assert s.notes() == [(2, "bad call")]
    vouch = s.state.rules[slot].record[-1][-1].effects
    assert vouch == (VerdictEffect("vouch", 1, phrase="two fat ladies"),)
    s.vote_all("end")
    s.reveal(slot)
    assert GAME.outcome(s.state).cheaters == ()  # the vouch re-checks


def test_M37_a_talking_call_stands_when_no_author_vouches_for_every_word() -> None:
    s, slot = _with_rule(M29_EXAMPLES["two fat ladies"],
                         [["8♦", "K♣"], ["8♥", "2♠"], ["3♦", "4♥"]], "8♣")  # fmt: skip
    s.play(1, "8♥", "two fat ladies", "lovely weather", "last card")
    s.judge()
    s.call(2, 1, "talking")
    s.judge()  # the author vouches for one of the two: the other is talk
    assert s.notes() == [(1, "talking")]
    assert s.all_notes()[-1].by == 2
    s.call(0, 1, "talking")  # one penalty per violation (M18): no effect, no bad call
    s.judge()
    assert s.notes() == [(1, "talking")]
    s.play(0, "8♦", "two fat ladies", "last card")  # (the 8 reversed play)
    s.judge()  # the window closed: seat 1's talk cannot be called any more (M19)
    s.judge()
    s.call(0, 1, "talking")
    assert s.notes()[-1] == (0, "bad call")
    s.vote_all("end")
    s.reveal(slot)
    assert GAME.outcome(s.state).cheaters == ()


def test_M37_a_false_vouch_is_caught_when_the_rule_is_revealed() -> None:
    s, slot = _with_rule(M29_EXAMPLES["two fat ladies"],
                         [["8♦", "K♣"], ["8♥", "2♠"], ["3♦", "4♥"]], "8♣")  # fmt: skip
    s.play(1, "8♥", "abracadabra", "last card")
    s.judge()
    s.call(2, 1, "talking")
    call = s.state.seq - 1
    with pytest.raises(IllegalMove):  # a vouch only for words the call is about
        s.false_verdict(slot, VerdictEffect("vouch", 1, phrase="hello"))
    s.false_verdict(slot, VerdictEffect("vouch", 1, phrase="abracadabra"))
    # the table believes the author until the reveal: the caller pays
    assert s.notes() == [(1, "failure to say two fat ladies"), (2, "bad call")]
    s.vote_all("end")
    s.reveal(slot)
    assert GAME.outcome(s.state).cheaters == (0,)
    assert s.state.rules[slot].faults == (f"wrong verdict on event {call}",)


def test_M37_with_every_rule_dropped_kept_talk_is_penalised_on_a_call() -> None:
    s, slot = _with_rule(M29_EXAMPLES["two fat ladies"],
                         [["8♦", "K♣"], ["8♥", "2♠"], ["3♦", "4♥"]], "8♣")  # fmt: skip
    s.play(1, "8♥", "two fat ladies", "last card")
    s.judge()
    s.vote_all("drop", slot)
    assert s.state.rules[slot].status == "dropped"
    s.call(2, 1, "talking")  # no rule in force any more: words no rule vouches for
    assert s.notes() == [(1, "talking")]
    ctx = s.state.rules[slot].record[-1][-1].ctx
    assert judge(M29_EXAMPLES["two fat ladies"], ctx) == ()

"""Mao engine: one test per rule of GAMES.md M1–M40, named after it, plus the
secret-rule judgement in scripted games."""

from __future__ import annotations

import pytest

from engines.cards import Card
from engines.core import IllegalMove, MalformedEvent, Reshuffle, TimerExpired, game
from engines.mao import GAME, turn_of
from engines.mao_events import AddRule, Call, Draw, MaoConfig, PlayCard, RevealRule, RuleVerdict
from engines.mao_rules import M29_EXAMPLES, Cond, Effect, Rule, VerdictEffect
from tests.test_mao_script import Script

C = Card.parse
HS2 = MaoConfig(hand_size=2)
HS3 = MaoConfig(hand_size=3)


def three(hands: list[list[str]], top: str, draws=(), **cfg) -> Script:
    config = MaoConfig(hand_size=len(hands[0]), **cfg)
    return Script(hands, top, list(draws), config)


# -- setup and turns ------------------------------------------------------------------


def test_M1_one_deck_or_two_with_distinct_identical_cards() -> None:
    assert len(GAME.deck(MaoConfig())) == 54
    assert MaoConfig.for_seats(5).decks == 1 and MaoConfig.for_seats(6).decks == 2
    assert len(GAME.deck(MaoConfig.for_seats(8))) == 108
    s = Script([["9♦", "4♣"], ["9♦#1", "5♣"]], "9♠", config=MaoConfig(hand_size=2, decks=2))
    s.play(0, "9♦", "that's the badger")
    s.play(1, "9♦#1", "that's the badger")
    assert [str(p.card) for p in s.state.pile] == ["9♠", "9♦", "9♦#1"]
    with pytest.raises(IllegalMove):
        GAME.new(MaoConfig(hand_size=10), 6)  # 60 cards do not fit one deck


def test_M2_five_cards_each_rest_draw_pile_top_turned_up() -> None:
    state = GAME.new(MaoConfig(), 4)
    deals = [r for r in GAME.pending(state) if r.KIND == "deal"]
    assert [(d.seat, len(d.positions)) for d in deals] == [(s, 5) for s in range(4)]
    reveal = [r for r in GAME.pending(state) if r.KIND == "reveal"]
    assert len(reveal) == 1 and reveal[0].purpose == "start"
    assert len(state.draw) == 54 - 20 - 1 and state.phase == "deal"
    with pytest.raises(IllegalMove):  # no play before the top card is turned up
        GAME.apply(state, Draw(0))


def test_M3_opening_words_are_shown_to_everyone() -> None:
    opening = "We play London Mao; the joker is the nine of diamonds."
    s = Script([["2♥"], ["3♥"]], "4♥", config=MaoConfig(hand_size=1, opening=opening))
    assert GAME.view(s.state, 1, {})["opening"] == opening


def test_M4_play_or_draw_even_with_a_valid_card() -> None:
    s = three([["5♥", "K♣", "2♣"], ["6♥", "Q♣", "3♣"]], "4♥", ["J♦"])
    s.draw(0)
    assert s.hand(0) == ["5♥", "K♣", "2♣", "J♦"] and turn_of(s.state) == 1
    s.play(1, "6♥")
    assert str(s.state.top) == "6♥" and turn_of(s.state) == 0


def test_M5_valid_card_is_same_rank_or_suit() -> None:
    s = three([["4♣", "K♣", "2♣"], ["6♥", "Q♣", "3♣"]], "4♥")
    s.play(0, "4♣")  # same rank
    s.play(1, "Q♣")  # same suit
    assert str(s.state.top) == "Q♣" and s.notes() == []


def test_M6_play_goes_clockwise_by_seat() -> None:
    s = three([["2♥", "K♣"], ["3♥", "Q♣"], ["4♥", "J♣"]], "5♥")
    order = []
    for seat, card in ((0, "2♥"), (1, "3♥"), (2, "4♥")):
        order.append(turn_of(s.state))
        s.play(seat, card)
    assert order == [0, 1, 2] and turn_of(s.state) == 0


def test_M7_joker_is_the_nine_of_diamonds() -> None:
    s = three([["RJ", "2♦", "Q♣"], ["BJ", "9♣", "K♣"]], "5♦")
    s.play(0, "RJ", "that's the badger")  # on any diamond
    s.play(1, "9♣")  # a 9 goes on it
    s.play(0, "Q♣")
    s = three([["9♠", "2♦", "Q♣"], ["BJ", "9♣", "K♣"]], "5♠")
    s.play(0, "9♠", "nine of spades")
    s.play(1, "BJ")  # on any 9; the badger not said
    s.play(0, "2♦")  # the next turn closes the window
    assert (1, "failure to say that's the badger") in s.notes()


def test_M8_ace_skips_the_next_player() -> None:
    s = three([["A♥", "K♣"], ["3♥", "Q♣"], ["4♥", "J♣"]], "5♥")
    s.play(0, "A♥")
    assert turn_of(s.state) == 2


def test_M9_seven_chain_phrases_and_draws_from_the_discard_pile() -> None:
    s = three([["7♥", "K♣", "5♠"], ["7♣", "Q♣", "3♠"], ["4♥", "J♦", "6♦"]], "5♥")
    s.play(0, "7♥", "have a nice day")
    s.play(1, "7♣", "have a very nice day")
    assert s.state.flow.chain == 2
    s.play(2, "4♥")  # not a 7: a bad card
    assert s.notes() == [(2, "bad card")]
    s.draw(2, "thank you very much")
    assert len(s.state.hands[2]) == 3 + 1 + 2  # the bad card's penalty, then the chain
    assert {"5♥", "7♥"} <= set(s.hand(2))  # from under the top, oldest first
    assert str(s.state.top) == "7♣" and s.state.flow.chain == 0 and turn_of(s.state) == 0
    # the usual reading as a table switch: from the draw pile
    s = three([["7♥", "K♣"], ["2♣", "Q♣"]], "5♥", ["8♠", "9♠"], seven_draw="draw")
    s.play(0, "7♥", "have a nice day", "last card")
    s.draw(1, "thank you")
    assert s.hand(1) == ["2♣", "Q♣", "8♠"] and s.notes() == []


def test_M10_eight_reverses_direction() -> None:
    s = three([["8♥", "K♣"], ["3♥", "Q♣"], ["4♥", "J♣"]], "5♥")
    s.play(0, "8♥")
    assert turn_of(s.state) == 2
    s.play(2, "4♥")
    assert turn_of(s.state) == 1


def test_M11_jack_first_named_suit_sets_the_suit() -> None:
    s = three([["J♥", "K♣", "3♣"], ["3♥", "Q♣", "J♠"], ["4♥", "2♠", "9♣"]], "5♥")
    s.play(0, "J♥")
    s.say(2, "clubs")  # any player, first naming wins
    s.say(1, "spades")
    assert s.state.flow.suit == 3
    s.play(1, "3♥")  # not a club: bad card
    assert (1, "bad card") in s.notes()
    s.play(1, "Q♣")
    assert s.state.flow.suit == -1
    s = three([["J♥", "K♣"], ["J♠", "Q♦"]], "5♥")
    s.play(0, "J♥", "diamonds", "last card")
    s.play(1, "J♠", "jack of spades")  # another J is always allowed
    assert s.notes() == []


def test_M12_spades_must_be_named() -> None:
    s = three([["3♠", "K♠", "2♣"], ["4♠", "Q♣", "3♣"]], "5♠")
    s.play(0, "3♠", "three of spades")
    s.play(1, "4♠")
    s.play(0, "K♠", "king of spades")  # the next turn starts: the window closes
    assert s.notes() == [(1, "failure to say four of spades")]


def test_M13_nine_of_diamonds_says_the_badger() -> None:
    s = three([["9♦", "K♦", "2♣"], ["4♦", "Q♣", "3♣"]], "5♦")
    s.play(0, "9♦", "That's the badger!")
    s.play(1, "4♦")
    s.play(0, "K♦")
    assert s.notes() == []


def test_M14_last_card_must_be_said() -> None:
    s = three([["5♣", "K♣"], ["4♣", "Q♣"]], "2♣")
    s.play(0, "5♣")
    s.play(1, "4♣", "last card")
    assert s.notes() == [(0, "failure to say last card")]
    assert s.state.last_card[1]


def test_M15_mao_said_last_wins_the_round() -> None:
    s = three([["5♣", "K♣"], ["4♣", "Q♥"]], "2♣")
    s.play(0, "5♣", "last card")
    s.play(1, "4♣", "last card")
    s.play(0, "K♣", "Mao")
    assert s.state.wins == (1, 0) and s.state.round == 1 and s.state.awaiting_rule == 0


def test_M16_several_phrases_any_order_mao_last() -> None:
    s = three([["5♠", "7♠"], ["4♠", "Q♥"]], "2♠")
    s.play(0, "5♠", "last card", "five of spades")
    s.play(1, "4♠", "last card", "four of spades")
    s.play(0, "7♠", "seven of spades", "have a nice day", "Mao")
    assert s.state.wins == (1, 0)
    s = three([["5♠", "7♠"], ["4♠", "Q♥"]], "2♠")
    s.play(0, "5♠", "five of spades", "last card")
    s.play(1, "4♠", "four of spades", "last card")
    s.play(0, "7♠", "have a nice day", "Mao", "seven of spades")  # Mao not last
    assert s.state.wins == (0, 0)
    assert (0, "taking the name of the Chairman in vain") in s.notes()


# -- penalties ---------------------------------------------------------------------------


def test_M17_penalty_is_phrase_plus_a_card_and_self_penalty_is_allowed() -> None:
    s = three([["5♠", "K♣"], ["4♣", "Q♣"]], "2♠", ["8♦", "9♥"])
    s.play(0, "5♠")
    s.call(0, 0, "failure to say five of spades")  # self-penalty with the right phrase
    assert s.notes() == [(0, "failure to say five of spades")]
    assert s.hand(0) == ["K♣", "8♦"]
    s.call(1, 0, "no such penalty")  # a made-up phrase, no secret rules: bad call
    assert s.notes()[-1] == (1, "bad call") and s.hand(1) == ["4♣", "Q♣", "9♥"]


def test_M18_one_penalty_per_violation() -> None:
    s = three([["5♠", "K♠", "2♣"], ["4♣", "Q♣", "3♣"], ["6♣", "J♦", "2♦"]], "2♠")
    s.play(0, "5♠")
    s.call(1, 0, "failure to say five of spades")
    s.call(2, 0, "failure to say five of spades")  # already given: nothing happens
    assert s.notes() == [(0, "failure to say five of spades")]
    s.play(1, "4♣", "hello")
    s.play(2, "6♣")
    # not said by the close of the window after that: continued failure, once
    assert s.notes().count((0, "continued failure to say five of spades")) == 1


def test_M19_penalty_window_closes_when_the_next_turn_starts() -> None:
    s = three([["5♣", "K♣", "2♣"], ["4♥", "Q♣", "3♣"], ["6♣", "J♦", "2♦"]], "10♣")
    s.play(0, "5♣")
    s.play(1, "4♥")  # bad card: penalised at once
    s.play(1, "Q♣")
    s.play(2, "6♣")  # a new turn: the bad card can no longer be called
    s.call(0, 1, "bad card")
    assert s.notes()[-1] == (0, "bad call")


def test_M20_incorrect_penalty_is_bad_call() -> None:
    s = three([["5♣", "K♣", "2♣"], ["4♣", "Q♣", "3♣"]], "10♣")
    s.play(0, "5♣")
    s.call(1, 0, "bad card")  # no violation
    s.call(1, 0, "failure to say last card")  # wrong reason (two cards left)
    assert s.notes() == [(1, "bad call"), (1, "bad call")]


def test_M21_bad_card_goes_back_and_the_turn_is_not_used() -> None:
    s = three([["5♥", "K♣", "2♣"], ["4♣", "Q♣", "3♣"]], "10♣", ["9♥"])
    s.play(0, "5♥")
    assert s.notes() == [(0, "bad card")]
    assert set(s.hand(0)) == {"5♥", "K♣", "2♣", "9♥"} and turn_of(s.state) == 0
    # everyone saw it: it is public in the hand now
    assert GAME.view(s.state, 1, {})["others"][0]["shown"] == {s.position(0, "5♥"): "5♥"}
    s.play(0, "K♣")
    assert turn_of(s.state) == 1


def test_M22_playing_out_of_turn() -> None:
    s = three([["5♣", "K♣", "2♣"], ["4♣", "Q♣", "3♣"]], "10♣")
    s.play(1, "4♣")
    assert s.notes() == [(1, "playing out of turn")] and str(s.state.top) == "10♣"
    assert "4♣" in s.hand(1) and turn_of(s.state) == 0


def test_M23_ten_seconds_as_timer_events() -> None:
    s = three([["5♣", "K♣", "2♣"], ["4♣", "Q♣", "3♣"]], "10♣")
    timer = next(r for r in GAME.pending(s.state) if r.KIND == "timer")
    assert timer.seconds == 10
    s.tick()
    s.tick()
    assert s.notes() == [(0, "failure to play within 10 seconds"),
                         (0, "continued failure to play within 10 seconds")]  # fmt: skip
    with pytest.raises(IllegalMove):
        GAME.apply(s.state, TimerExpired("turn 99.0 seat 0"))


def test_M24_failure_to_say_and_continued_failure() -> None:
    s = three([["7♣", "K♣", "2♣"], ["4♣", "Q♣", "3♣"], ["5♣", "8♣", "3♦"]], "10♣")
    s.play(0, "7♣")
    s.draw(1, "thank you")
    assert s.notes() == [(0, "failure to say have a nice day")]
    s.play(2, "5♣")
    assert s.notes()[-1] == (0, "continued failure to say have a nice day")
    s.say(0, "have a nice day")  # too late: nothing owed any more
    s.play(0, "K♣")
    assert len(s.notes()) == 2


def test_M25_mao_in_vain_costs_three_cards() -> None:
    s = three([["5♣", "K♣", "2♣"], ["4♣", "Q♣", "3♣"]], "10♣")
    s.say(1, "Mao")
    assert s.notes() == [(1, "taking the name of the Chairman in vain")]
    assert len(s.state.hands[1]) == 6
    s = three([["5♣"], ["4♣"]], "2♣")  # one card each: "last card" was never said
    s.play(0, "5♣", "Mao")
    assert s.notes() == [(0, "failure to say last card"),
                         (0, "taking the name of the Chairman in vain")]  # fmt: skip
    assert s.state.wins == (0, 0) and len(s.state.hands[0]) == 1 + 3


# -- rounds and secret rules ---------------------------------------------------------------


def _won(hands=None, **cfg) -> Script:
    s = three(hands or [["5♣", "K♣"], ["4♣", "Q♥"]], "2♣", **cfg)
    s.play(0, "5♣", "last card")
    s.play(1, "4♣", "last card")
    s.play(0, "K♣", "Mao")
    return s


def test_M26_a_win_ends_the_round_everything_is_reshuffled_and_dealt_again() -> None:
    s = three([["5♣", "K♣"], ["4♣", "Q♥"]], "2♣")
    s.play(0, "5♣", "last card")
    s.play(1, "4♣", "last card")
    before = s.state.next_position
    s.table.submit(PlayCard(0, s.position(0, "K♣"), C("K♣"), ("Mao",)))
    kinds = [r.KIND for r in GAME.pending(s.state)]
    assert kinds[:2] == ["reveal", "reshuffle"] and kinds.count("deal") == 2
    reshuffle = next(r for r in GAME.pending(s.state) if isinstance(r, Reshuffle))
    assert len(reshuffle.positions) == 54 and min(reshuffle.new_positions) == before
    s.serve()
    assert [len(h) for h in s.state.hands] == [2, 2] and s.state.round == 1
    assert s.state.phase == "play" and s.state.awaiting_rule == 0


def test_M27_the_winner_commits_to_a_new_secret_rule() -> None:
    s = _won()
    with pytest.raises(IllegalMove):
        s.add_rule(1, M29_EXAMPLES["two skips twice"])  # only the winner
    with pytest.raises(IllegalMove):
        s.draw(1)  # play waits for the rule
    slot = s.add_rule(0, M29_EXAMPLES["two skips twice"])
    assert s.state.rules[slot].author == 0 and s.state.rules[slot].rule is None
    assert s.state.awaiting_rule == -1
    with pytest.raises(IllegalMove):
        s.add_rule(0, M29_EXAMPLES["red on black"])  # one rule per win


def _with_rule(rule: Rule, hands, top: str, draws=()) -> tuple[Script, int]:
    """A round won by seat 0, who adds ``rule``; then the scripted deal of round 1
    (seat 1 starts it)."""
    s = three([["5♣", "K♣"], ["4♣", "Q♥"]] + [["6♣", "8♥"]] * (len(hands) - 2), "2♣")
    s.play(0, "5♣", "last card")
    s.play(1, "4♣", "last card")
    if len(hands) > 2:
        s.play(2, "6♣", "last card")
    s.table.submit(PlayCard(0, s.position(0, "K♣"), C("K♣"), ("Mao",)))
    s.deal(hands, top, list(draws))
    slot = s.add_rule(0, rule)
    return s, slot


def test_M28_author_enforces_others_may_call_and_false_verdicts_are_caught() -> None:
    rule = M29_EXAMPLES["red on black"]
    hands = [["5♦", "9♠"], ["5♠", "2♥"], ["6♠", "8♥"]]
    s, slot = _with_rule(rule, hands, "5♣")
    assert turn_of(s.state) == 1  # round 1 starts with seat 1
    s.play(1, "5♠", "five of spades", "last card")
    with pytest.raises(IllegalMove):  # nobody moves on before the author's verdict
        s.draw(2)
    s.judge()
    s.draw(2)
    s.judge()
    s.play(0, "5♦")  # red on black: the author's own peer penalises it
    s.judge()
    assert s.notes() == [(0, "colour clash")] and "5♦" in s.hand(0)
    assert turn_of(s.state) == 0  # the card went back: the turn is not used
    s.call(2, 0, "Colour clash!")  # a player who worked it out: upheld, no bad call
    s.judge()
    assert s.notes() == [(0, "colour clash")]
    s.call(2, 1, "colour clash")  # wrong seat: bad call
    s.judge()
    assert s.notes()[-1] == (2, "bad call")
    lie = s.state.seq
    s.play(0, "9♠", "nine of spades")
    # the author lies once: a penalty the rule does not give
    s.false_verdict(slot, VerdictEffect("penalty", 0, 1, "colour clash"))
    s.vote_all("end")
    assert s.state.phase == "ending"
    s.reveal(slot)
    out = GAME.outcome(s.state)
    assert out is not None and out.cheaters == (0,)
    assert s.state.rules[slot].faults == (f"wrong verdict on event {lie}",)


def test_M28_a_revealed_rule_must_match_its_commitment() -> None:
    s, slot = _with_rule(M29_EXAMPLES["two skips twice"], [["5♦", "K♣"], ["5♠", "2♥"]], "5♣")
    s.vote_all("end")
    other = M29_EXAMPLES["red on black"]
    s.submit(RevealRule(0, slot, bytes(range(32)).hex(), other))
    assert s.state.rules[slot].faults and GAME.outcome(s.state).cheaters == (0,)


def test_M29_two_skips_the_next_player_twice_in_a_game() -> None:
    rule = M29_EXAMPLES["two skips twice"]
    hands = [["5♦", "K♣", "9♣"], ["2♣", "3♥", "4♥"], ["6♠", "8♥", "8♣"]]
    s, slot = _with_rule(rule, [h[:2] for h in hands], "5♣")
    s.play(1, "2♣")
    s.judge()
    assert turn_of(s.state) == 0  # seat 2 misses this turn …
    s.play(0, "K♣", "last card")
    s.judge()
    assert turn_of(s.state) == 1  # … and the next one
    s.vote_all("end")
    s.reveal(slot)
    assert GAME.outcome(s.state).cheaters == ()


def test_M29_red_may_not_go_on_black_in_a_game() -> None:
    rule = M29_EXAMPLES["red on black"]
    s, slot = _with_rule(rule, [["5♦", "K♣"], ["5♥", "2♠"]], "5♣")
    s.play(1, "5♥")
    s.judge()
    assert (1, "colour clash") in s.notes() and "5♥" in s.hand(1) and turn_of(s.state) == 1
    s.play(1, "2♠", "two of spades")  # not a colour clash? 2♠ on 5♣: black on black, but
    s.judge()  # not valid: bad card (base rules compose with the secret rule)
    assert s.notes()[-1] == (1, "bad card")
    s.vote_all("end")
    s.reveal(slot)
    assert GAME.outcome(s.state).cheaters == ()


def test_M29_eight_on_eight_must_say_two_fat_ladies_in_a_game() -> None:
    rule = M29_EXAMPLES["two fat ladies"]
    s, slot = _with_rule(rule, [["8♦", "K♣"], ["8♥", "2♠"]], "8♣")
    s.play(1, "8♥", "two fat ladies", "last card")
    s.judge()
    s.play(0, "8♦", "last card")
    s.judge()
    assert s.notes() == [(0, "failure to say two fat ladies")]
    s.vote_all("end")
    s.reveal(slot)
    assert GAME.outcome(s.state).cheaters == ()


def test_M29_a_verdict_contradicting_the_revealed_rule_is_caught() -> None:
    rule = M29_EXAMPLES["two fat ladies"]
    s, slot = _with_rule(rule, [["8♦", "K♣"], ["8♥", "2♠"]], "8♣")
    s.play(1, "8♥", "last card")  # 8 on 8 without the phrase …
    s.false_verdict(slot)  # … and the author says nothing
    s.draw(0)
    s.false_verdict(slot, VerdictEffect("penalty", 0, 1, "failure to say two fat ladies"))
    s.vote_all("end")
    s.reveal(slot)
    out = GAME.outcome(s.state)
    assert out.cheaters == (0,) and 0 not in out.winners
    assert len(s.state.rules[slot].faults) == 2


def test_M30_majority_drops_or_changes_a_rule() -> None:
    s, slot = _with_rule(M29_EXAMPLES["two skips twice"], [["5♦", "K♣"], ["5♠", "2♥"]], "5♣")
    s.vote_all("drop", slot, yes=1)  # 1 of 2 is no majority
    assert s.state.rules[slot].status == "active"
    s.vote_all("change", slot)
    assert s.state.rules[slot].status == "dropped" and s.state.credits[0] == 1
    s.reveal(slot)  # a dropped rule is revealed and checked
    assert s.state.rules[slot].rule == M29_EXAMPLES["two skips twice"]
    s.submit(AddRule(0, "ab" * 32))  # the change: a new rule in its place
    assert len(s.state.rules) == 2 and s.state.credits[0] == 0


def test_M31_no_end_condition_until_the_table_votes() -> None:
    s = _won()
    s.submit(AddRule(0, ""))
    assert s.state.round == 1 and not GAME.is_over(s.state)
    s.vote_all("end")
    out = GAME.outcome(s.state)
    assert out is not None and out.winners == (0,) and "M31" in out.reason
    with pytest.raises(IllegalMove):
        s.draw(1)


# -- point of order ---------------------------------------------------------------------


def test_M32_point_of_order_pauses_play_and_timers() -> None:
    s = three([["5♣", "K♣", "2♣"], ["4♣", "Q♣", "3♣"]], "10♣")
    s.say(1, "Point of order!")
    assert s.state.poo == 1
    assert not any(r.KIND == "timer" for r in GAME.pending(s.state))
    s.play(0, "5♣")
    assert (0, "touching cards during a point of order") in s.notes()
    assert str(s.state.top) == "10♣" and turn_of(s.state) == 0
    s.say(1, "Mao")  # all other rules still apply
    assert (1, "taking the name of the Chairman in vain") in s.notes()


def test_M33_point_of_order_during_a_point_of_order() -> None:
    s = three([["5♣", "K♣", "2♣"], ["4♣", "Q♣", "3♣"]], "10♣")
    s.say(1, "point of order")
    s.say(0, '"point of order"')  # the name, quoted: safe
    assert s.notes() == []
    s.say(0, "point of order")
    assert s.notes() == [(0, "saying point of order during a point of order")]


def test_M34_touching_cards_during_a_point_of_order() -> None:
    s = three([["5♣", "K♣", "2♣"], ["4♣", "Q♣", "3♣"]], "10♣")
    s.say(0, "秩序点")
    s.draw(0)
    assert s.notes() == [(0, "touching cards during a point of order")]
    assert turn_of(s.state) == 0


@pytest.mark.parametrize(
    "ender",
    ["point of order over", "end point of order", "point taken", "disorder", "pick up your cards",
     "秩序点结束", "要点已记下", "秩序混乱", "拿起你们的牌"],
)  # fmt: skip
def test_M35_any_ending_phrase_ends_the_point_of_order(ender: str) -> None:
    s = three([["5♣", "K♣", "2♣"], ["4♣", "Q♣", "3♣"]], "10♣")
    s.say(1, "point of order")
    s.say(0, ender)
    assert s.state.poo == -1
    s.play(0, "5♣")
    assert s.notes() == [] and str(s.state.top) == "5♣"


# -- variants -------------------------------------------------------------------------------


def test_M36_continuous_play_winner_leaves_and_rejoins() -> None:
    s = three([["5♣", "K♣"], ["4♣", "Q♥"], ["6♣", "9♥"]], "2♣", continuous=True)
    s.play(0, "5♣", "last card")
    s.play(1, "4♣", "last card")
    s.play(2, "6♣", "last card")
    s.play(0, "K♣", "Mao")
    assert s.state.out == (True, False, False) and s.state.round == 0
    assert turn_of(s.state) == 1 and s.state.credits == (1, 0, 0)
    s.say(0, "Mao")  # outside the game no rule binds
    assert s.notes() == []
    s.say(0, "rejoining the game", "introducing a new rule")
    assert s.state.out == (False, False, False) and len(s.state.hands[0]) == 2
    assert s.state.awaiting_rule == 0
    s.add_rule(0, M29_EXAMPLES["two skips twice"])
    assert s.state.credits == (0, 0, 0)


def test_M37_no_talking() -> None:
    s = three([["5♣", "K♣", "2♣"], ["4♣", "Q♣", "3♣"]], "10♣", no_talking=True)
    s.say(1, "nice weather")
    assert s.notes() == [(1, "talking")]
    s.say(1, "point of order")
    s.say(1, "nice weather")  # free talk during a point of order
    s.say(0, "point taken")
    s.play(0, "5♣", "mysterious words")  # no secret rule in force: talk, even with a play
    assert s.notes() == [(1, "talking"), (0, "talking")]


def test_M38_lying_swearing_conduct_explaining_asking() -> None:
    s = three([["5♣", "K♣", "2♣"], ["4♣", "Q♣", "3♣"]], "10♣", conduct=True)
    s.say(1, "damn it")
    s.say(0, "why was I penalised, what is the rule?")
    s.say(1, "you must say the badger because of the rule")
    assert s.notes() == [(1, "swearing"), (0, "asking about the rules"),
                         (1, "explaining the rules")]  # fmt: skip
    s.call(0, 1, "lying")  # player-called: taken as said
    s.call(1, 0, "ungentlemanly conduct")
    assert s.notes()[-2:] == [(1, "lying"), (0, "ungentlemanly conduct")]
    plain = three([["5♣", "K♣", "2♣"], ["4♣", "Q♣", "3♣"]], "10♣")
    plain.say(1, "damn it")
    plain.call(0, 1, "lying")  # the variant is off: bad call
    assert plain.notes() == [(0, "bad call")]


def test_M39_dictator_alone_penalises_and_adds_rules_and_may_hold_no_cards() -> None:
    config = MaoConfig(hand_size=2, dictator=2, dictator_plays=False)
    s = Script([["5♣", "K♣"], ["4♣", "Q♥"]], "2♣", config=config, seats=3)
    assert s.state.hands[2] == () and s.state.out == (False, False, True)
    s.play(0, "5♣")
    with pytest.raises(IllegalMove):
        s.call(1, 0, "failure to say last card")
    s.call(2, 0, "failure to say last card")
    assert s.notes() == [(0, "failure to say last card")]
    s.play(1, "4♣", "last card")
    assert turn_of(s.state) == 0


def test_M40_mini_mao_starts_from_one_secret_rule_with_no_preset_rules() -> None:
    s = Script([["7♣", "5♠"], ["A♣", "Q♥"]], "2♣", config=MaoConfig(hand_size=2, mini=True))
    assert s.state.awaiting_rule == 0
    with pytest.raises(IllegalMove):
        s.play(0, "7♣")
    slot = s.add_rule(0, M29_EXAMPLES["two fat ladies"])
    s.play(0, "7♣")  # no "have a nice day", no chain
    s.judge()
    s.play(1, "A♣")  # no skip
    s.judge()
    assert turn_of(s.state) == 0 and s.state.flow.chain == 0
    s.draw(0)
    s.judge()
    assert s.notes() == []
    s.play(1, "Q♥")  # bad card still exists (M5 stays)
    s.judge()
    assert s.notes() == [(1, "bad card")]
    assert slot == 0


# -- decoding, views, replays -------------------------------------------------------------


def test_events_decode_strictly_and_print_readably() -> None:
    mao = game("mao")
    event = PlayCard(0, 3, C("9♦"), ("that's the badger",))
    assert mao.decode_event(event.to_data()) == event
    assert str(event) == "seat 0 plays 9♦ (#3) “that's the badger”"
    rule_event = RevealRule(0, 0, "ab" * 32, M29_EXAMPLES["red on black"])
    assert mao.decode_event(rule_event.to_data()) == rule_event
    verdict = RuleVerdict(0, 0, 5, (VerdictEffect("skip", 1, 2),))
    assert mao.decode_event(verdict.to_data()) == verdict
    for bad in (
        {"kind": "play", "seat": 0, "position": -1, "card": 5, "says": []},
        {"kind": "play", "seat": 0, "position": 1, "card": 5},
        {"kind": "say", "seat": 0, "says": []},
        {"kind": "say", "seat": 0, "says": ["x"] * 13},
        {"kind": "add_rule", "seat": 0, "commitment": "xyz"},
        {"kind": "call", "seat": 0, "target": -2, "phrase": "bad card"},
        {"kind": "reveal_rule", "seat": 0, "slot": 0, "salt": "ab" * 32,
         "rule": {"trigger": "eval", "conditions": [], "effects": [], "phrase": ""}},
        {"kind": "propose", "seat": 0, "action": "explode", "slot": 0},
    ):  # fmt: skip
        with pytest.raises(MalformedEvent):
            mao.decode_event(bad)


def test_illegal_events_change_nothing() -> None:
    s = three([["5♣", "K♣", "2♣"], ["4♣", "Q♣", "3♣"]], "10♣")
    before = GAME.encode(s.state)
    for event in (
        PlayCard(0, s.position(1, "4♣"), C("4♣")),  # not in my hand
        PlayCard(0, s.position(0, "5♣"), C("10♣")),  # the face is already on the pile
        RuleVerdict(0, 0, 0),  # no such rule
        Call(0, 7, "bad card"),  # no such seat
        Call(0, 1, "   "),  # no phrase
        RevealRule(0, 0, "ab" * 32, M29_EXAMPLES["red on black"]),
        AddRule(1, "ab" * 32),
    ):
        with pytest.raises(IllegalMove):
            GAME.apply(s.state, event)
    assert GAME.encode(s.state) == before


def test_views_show_own_faces_and_public_ones_only() -> None:
    s = three([["5♥", "K♣", "2♣"], ["4♣", "Q♣", "3♣"]], "10♣")
    view1 = GAME.view(s.state, 1, s.table.known[1])
    assert [h["card"] for h in view1["hand"]] == ["4♣", "Q♣", "3♣"]
    assert view1["others"][0] == {"cards": 3, "shown": {}}
    leak = GAME.view(s.state, 1, s.table.faces)  # an oversized "known" leaks nothing
    assert leak["others"][0] == {"cards": 3, "shown": {}}
    assert "5♥" not in str(leak)


def test_rules_compose_skip_and_reverse_with_base_effects() -> None:
    queen = Rule("play", (Cond("rank", (12,)),), (Effect("reverse"),))
    s, _slot = _with_rule(queen, [["Q♦", "K♣"], ["6♦", "2♥"], ["6♠", "8♥"]], "5♦")
    s.play(1, "6♦", "last card")
    s.judge()
    s.draw(2)
    s.judge()
    s.play(0, "Q♦", "last card")  # the secret rule reverses: seat 2 is next, not seat 1
    s.judge()
    assert turn_of(s.state) == 2
    s.draw(2)
    s.judge()
    assert turn_of(s.state) == 1


def test_legal_kinds_follow_the_state() -> None:
    s, slot = _with_rule(M29_EXAMPLES["two skips twice"], [["5♦", "K♣"], ["5♠", "2♥"]], "5♣")
    assert {"play", "draw", "say", "call"} <= GAME.legal_kinds(s.state, 0)
    s.play(1, "5♠", "five of spades", "last card")
    assert "verdict" in GAME.legal_kinds(s.state, 0)  # the author owes a verdict
    assert "play" not in GAME.legal_kinds(s.state, 1)  # turns wait for it
    assert not any(r.KIND == "timer" for r in GAME.pending(s.state))  # no clock meanwhile
    s.judge()
    assert "verdict" not in GAME.legal_kinds(s.state, 0) and slot == 0
    s.vote_all("end")
    assert GAME.legal_kinds(s.state, 0) == frozenset({"reveal_rule"})
    s.reveal(slot)
    assert GAME.legal_kinds(s.state, 0) == frozenset() and GAME.is_over(s.state)


def test_a_verdict_out_of_order_or_by_another_seat_is_refused() -> None:
    s, slot = _with_rule(M29_EXAMPLES["two skips twice"], [["5♦", "K♣"], ["5♠", "2♥"]], "5♣")
    on = s.state.seq
    s.play(1, "5♠", "five of spades", "last card")
    for bad in (RuleVerdict(1, slot, on), RuleVerdict(0, slot, on + 1),
                RuleVerdict(0, slot + 1, on),
                RuleVerdict(0, slot, on, (VerdictEffect("uphold", 1),)),
                RuleVerdict(0, slot, on, (VerdictEffect("penalty", 1, 1, " ! "),))):  # fmt: skip
        with pytest.raises(IllegalMove):
            GAME.apply(s.state, bad)

"""Bluff / 吹牛: one test per rule (B1–B13), codec, views and replay."""

from __future__ import annotations

import doctest
import random

import pytest

import engines.bluff as bluff_module
from engines.bluff import (
    GAME,
    Accept,
    BluffConfig,
    Challenge,
    Claim,
    Phase,
    PlayFaceDown,
    Show,
    Start,
)
from engines.bots import Simulator
from engines.cards import Card, full_deck
from engines.core import (
    Deal,
    Dealt,
    IllegalMove,
    MalformedEvent,
    RandomDraw,
    RandomValue,
    Reveal,
    Revealed,
    Timer,
    TimerExpired,
    Transfer,
)

C = Card.parse


def table(
    seats: int = 2, config: BluffConfig | None = None, order: list[str] | None = None
) -> Simulator:
    """A table whose deck order starts with ``order`` (the rest in index
    order), dealt and with a starter chosen (seat 0 unless A♠ says else)."""
    config = config or BluffConfig(start=Start.RANDOM)
    t = Simulator(GAME, config, seats, deck_seed=0)
    first = [C(x) for x in order or []]
    assert set(first) <= set(GAME.deck(config))
    rest = [c for c in GAME.deck(config) if c not in first]
    t.faces = dict(enumerate(first + rest))
    while t.state.phase is Phase.DEAL:
        assert t.serve()
    return t


def start(t: Simulator, seat: int = 0) -> Simulator:
    (request,) = GAME.pending(t.state)
    assert request == RandomDraw("starter", t.seats)
    t.submit(RandomValue("starter", seat))
    return t


def hand(t: Simulator, seat: int) -> tuple[int, ...]:
    return t.state.hands[seat]


def pos(t: Simulator, card: str) -> int:
    return next(p for p, c in t.faces.items() if c == C(card))


def test_doctests() -> None:
    assert doctest.testmod(bluff_module).failed == 0


# -- B1–B3: deal and start ----------------------------------------------------------
def test_b1_even_split_and_odd_card_aside() -> None:
    state = GAME.new(BluffConfig(), 2)
    assert [len(h) for h in state.hands] == [26, 26] and state.aside == ()
    state = GAME.new(BluffConfig(jokers=True), 4)  # 54 cards, 4 seats: 13 each, 2 aside
    assert [len(h) for h in state.hands] == [13] * 4 and state.aside == (52, 53)
    state = GAME.new(BluffConfig(), 3)
    assert [len(h) for h in state.hands] == [17] * 3 and len(state.aside) == 1
    every = sorted(p for h in state.hands for p in h) + list(state.aside)
    assert every == list(range(52))
    assert GAME.deck(BluffConfig(jokers=True)) == tuple(full_deck(1))
    assert len(GAME.deck(BluffConfig())) == 52


def test_b1_deal_requests_then_dealt_events() -> None:
    state = GAME.new(BluffConfig(), 2)
    assert GAME.pending(state) == (Deal(0, tuple(range(26))), Deal(1, tuple(range(26, 52))))
    with pytest.raises(IllegalMove):
        GAME.apply(state, Dealt(0, (1, 2)))
    state = GAME.apply(state, Dealt(1, tuple(range(26, 52))))
    assert GAME.pending(state) == (Deal(0, tuple(range(26))),)
    with pytest.raises(IllegalMove, match="waiting"):
        GAME.apply(state, PlayFaceDown(0, (0,), Claim(1, 1)))


def test_b2_each_player_sees_only_their_own_hand() -> None:
    t = start(table())
    for seat in (0, 1):
        everything = dict(t.faces)  # even a mapping that knows the whole deck
        view = GAME.view(t.state, seat, everything)
        assert all(face is not None for _, face in view["hand"])
        shown = {p for p, face in view["hand"] if face is not None}
        assert shown == set(hand(t, seat))
        assert view["counts"] == [26, 26] and "hands" not in view
    view = GAME.view(t.state, 0, {})
    assert all(face is None for _, face in view["hand"])


def test_b3_ace_of_spades_holder_starts_by_showing_it() -> None:
    t = table(2, BluffConfig())
    ace = pos(t, "A♠")
    holder = t.state.holder(ace)
    assert GAME.pending(t.state) == (Timer("starter", 10),)
    assert GAME.legal_kinds(t.state, holder) == {"show"}
    t.submit(Show(holder, ace))
    assert GAME.pending(t.state) == (Reveal((ace,), "starter"),)
    t.serve()
    assert t.state.phase is Phase.PLAY and t.state.turn == holder
    assert t.state.face(ace) == C("A♠")
    assert GAME.view(t.state, 1 - holder, {})["public"] == [[ace, 0]]


def test_b3_false_show_is_caught_and_the_wait_goes_on() -> None:
    t = table(2, BluffConfig())
    liar = 1 - t.state.holder(pos(t, "A♠"))
    other = hand(t, liar)[0]
    t.submit(Show(liar, other))
    t.serve()
    assert t.state.phase is Phase.STARTER and t.state.cheaters == (liar,)
    assert GAME.pending(t.state) == (Timer("starter", 10),)
    with pytest.raises(IllegalMove, match="not in your hand"):
        GAME.apply(t.state, Show(liar, pos(t, "A♠")))


def test_b3_nobody_shows_then_a_random_seat_starts() -> None:
    t = table(3, BluffConfig(), order=[])
    with pytest.raises(IllegalMove):
        GAME.apply(t.state, TimerExpired("other"))
    t.submit(TimerExpired("starter"))
    assert GAME.pending(t.state) == (RandomDraw("starter", 3),)
    assert GAME.legal_kinds(t.state, 0) == frozenset()
    with pytest.raises(IllegalMove, match="not a seat"):
        GAME.apply(t.state, RandomValue("starter", 3))
    t.submit(RandomValue("starter", 2))
    assert t.state.phase is Phase.PLAY and t.state.turn == 2


# -- B4–B6: plays and claims ----------------------------------------------------------
def test_b4_claim_need_not_match_cards_placed() -> None:
    t = start(table())
    t.submit(PlayFaceDown(0, hand(t, 0)[:1], Claim(3, 7)))  # one card, "three sevens"
    assert t.state.last.claim == Claim(3, 7) and len(hand(t, 0)) == 25
    assert GAME.view(t.state, 1, {})["last"] == {"seat": 0, "placed": 1, "claim": "3 × 7"}
    with pytest.raises(IllegalMove, match="not in your hand"):
        GAME.apply(t.state, PlayFaceDown(1, hand(t, 0)[:1], Claim(4, 1)))
    with pytest.raises(MalformedEvent, match="at least one"):
        GAME.decode_event(
            {"kind": "play", "seat": 1, "positions": [], "claim": {"count": 1, "rank": 1}}
        )
    with pytest.raises(MalformedEvent, match="1…13"):
        GAME.decode_event(
            {"kind": "play", "seat": 1, "positions": [30], "claim": {"count": 1, "rank": 14}}
        )
    with pytest.raises(MalformedEvent, match="claim names"):
        GAME.decode_event(
            {"kind": "play", "seat": 1, "positions": [30], "claim": {"count": 0, "rank": 3}}
        )


def test_b5_claim_must_beat_the_previous_one() -> None:
    assert Claim(3, 2).beats(Claim(2, 13))  # more cards, any rank
    assert Claim(3, 8).beats(Claim(3, 7)) and not Claim(3, 7).beats(Claim(3, 7))
    assert not Claim(3, 1).beats(Claim(3, 13))  # A is lowest
    t = start(table())
    t.submit(PlayFaceDown(0, hand(t, 0)[:2], Claim(3, 7)))
    for weak in (Claim(3, 7), Claim(3, 6), Claim(2, 13)):
        with pytest.raises(IllegalMove, match="does not beat"):
            GAME.apply(t.state, PlayFaceDown(1, hand(t, 1)[:1], weak))
    t.submit(PlayFaceDown(1, hand(t, 1)[:1], Claim(3, 8)))


def test_b6_opponent_challenges_or_continues() -> None:
    t = start(table())
    with pytest.raises(IllegalMove, match="turn"):
        GAME.apply(t.state, PlayFaceDown(1, hand(t, 1)[:1], Claim(1, 1)))
    with pytest.raises(IllegalMove, match="latest play"):
        GAME.apply(t.state, Challenge(1))  # nothing to challenge yet
    t.submit(PlayFaceDown(0, hand(t, 0)[:1], Claim(1, 5)))
    assert GAME.legal_kinds(t.state, 1) == {"play", "challenge"}
    assert GAME.legal_kinds(t.state, 0) == frozenset()
    with pytest.raises(IllegalMove):
        GAME.apply(t.state, Challenge(0))  # not your own play
    t.submit(PlayFaceDown(1, hand(t, 1)[:1], Claim(1, 6)))  # continues
    assert GAME.legal_kinds(t.state, 0) == {"play", "challenge"}


# -- B7–B10: challenges -----------------------------------------------------------
def test_b7_successful_challenge_claimant_takes_whole_pile() -> None:
    t = start(table(order=["5♥", "5♣", "10♦"] + ["K♦"] * 0))
    # seat 0 holds positions 0.. : 5♥ 5♣ 10♦ …; seat 1 positions 26..
    t.submit(PlayFaceDown(0, (0, 1), Claim(2, 5)))  # true
    t.submit(PlayFaceDown(1, (26,), Claim(3, 5)))  # seat 1's card at 26 is not a 5 (index order)
    t.submit(PlayFaceDown(0, (2,), Claim(4, 5)))  # a lie: 10♦
    t.submit(Challenge(1))
    assert GAME.pending(t.state) == (Reveal((2,), "challenge"),)  # only the latest play
    t.serve()
    assert t.state.face(2) == C("10♦") and t.state.face(0) is None
    assert set(hand(t, 0)) >= {0, 1, 2, 26} and t.state.pile == ()
    # the hidden cards seat 0 did not place move to it privately
    assert GAME.pending(t.state) == (Transfer(0, (26,)),)
    t.serve()
    assert 26 in t.known[0] and t.state.turn == 1 and t.state.phase is Phase.PLAY


def test_b7_failed_challenge_challenger_takes_pile() -> None:
    t = start(table(order=["5♥", "5♣", "10♦"]))
    t.submit(PlayFaceDown(0, (0, 1), Claim(2, 5)))
    t.submit(Challenge(1))
    t.serve()
    assert GAME.pending(t.state) == ()  # both cards are face up: nothing to transfer
    assert {0, 1} <= set(hand(t, 1)) and len(hand(t, 1)) == 28 and len(hand(t, 0)) == 24
    assert t.state.turn == 1  # B10: the challenger plays next


def test_b7_more_than_claimed_still_true() -> None:
    t = start(table(order=["5♥", "5♣", "5♦"]))
    t.submit(PlayFaceDown(0, (0, 1, 2), Claim(2, 5)))
    t.submit(Challenge(1))
    t.serve()
    assert len(hand(t, 1)) == 29


def test_b8_joker_counts_as_any_rank_when_turned_up() -> None:
    cfg = BluffConfig(jokers=True, start=Start.RANDOM)
    t = start(table(config=cfg, order=["8♥", "8♣", "RJ"]))
    t.submit(PlayFaceDown(0, (0, 1, 2), Claim(3, 8)))
    t.submit(Challenge(1))
    t.serve()
    assert len(hand(t, 1)) == 27 + 3  # claim stood: challenger takes the pile


def test_b8_without_variant_a_joker_is_not_wild() -> None:
    # the same cards without the variant cannot occur; a non-matching card is not wild
    t = start(table(order=["8♥", "8♣", "9♣"]))
    t.submit(PlayFaceDown(0, (0, 1, 2), Claim(3, 8)))
    t.submit(Challenge(1))
    t.serve()
    assert len(hand(t, 0)) == 26


def test_b9_twos_reset_the_claim_sequence() -> None:
    cfg = BluffConfig(twos_reset=True, start=Start.RANDOM)
    t = start(table(config=cfg))
    t.submit(PlayFaceDown(0, hand(t, 0)[:1], Claim(3, 9)))
    t.submit(PlayFaceDown(1, hand(t, 1)[:1], Claim(1, 2)))  # a 2: allowed and resets
    assert t.state.claim is None
    t.submit(PlayFaceDown(0, hand(t, 0)[:1], Claim(1, 1)))  # anything, as at the start
    plain = start(table())
    plain.submit(PlayFaceDown(0, hand(plain, 0)[:1], Claim(3, 9)))
    with pytest.raises(IllegalMove, match="does not beat"):
        GAME.apply(plain.state, PlayFaceDown(1, hand(plain, 1)[:1], Claim(1, 2)))


def test_b10_after_challenge_pile_empty_and_claims_start_over() -> None:
    t = start(table(order=["5♥", "5♣"]))
    t.submit(PlayFaceDown(0, (0,), Claim(4, 13)))
    t.submit(Challenge(1))
    t.serve()
    assert t.state.pile == () and t.state.claim is None and t.state.turn == 1
    t.submit(PlayFaceDown(1, hand(t, 1)[:1], Claim(1, 1)))  # the lowest claim is fine again


# -- B11–B13: winning and more players -------------------------------------------------
def _down_to_one_card(t: Simulator, seat: int) -> None:
    """Leave ``seat`` one card (the rest set aside): a late-game position
    without playing half a game to reach it."""
    from dataclasses import replace

    hands = list(t.state.hands)
    hands[seat], extra = hands[seat][:1], hands[seat][1:]
    t.state = replace(t.state, hands=tuple(hands), aside=t.state.aside + extra)


def test_b11_empty_hand_and_claim_accepted_wins() -> None:
    t = start(table())
    _down_to_one_card(t, 0)
    t.submit(PlayFaceDown(0, hand(t, 0), Claim(1, 3)))
    assert t.state.phase is Phase.LAST_CLAIM
    assert GAME.legal_kinds(t.state, 1) == {"challenge", "accept"}
    with pytest.raises(IllegalMove):
        GAME.apply(t.state, PlayFaceDown(1, hand(t, 1)[:1], Claim(2, 3)))
    t.submit(Accept(1))
    outcome = GAME.outcome(t.state)
    assert outcome.winners == (0,) and outcome.losers == (1,) and "B11" in outcome.reason
    with pytest.raises(IllegalMove, match="over"):
        GAME.apply(t.state, Challenge(1))


def test_b11_last_claim_successfully_challenged_does_not_win() -> None:
    t = start(table(order=["9♠"]))
    _down_to_one_card(t, 0)
    t.submit(PlayFaceDown(0, (0,), Claim(1, 3)))  # 9♠ claimed as a 3
    t.submit(Challenge(1))
    t.serve()
    assert not GAME.is_over(t.state) and hand(t, 0) == (0,)
    assert t.state.turn == 1


def test_b12_other_holds_all_the_cards_wins() -> None:
    t = start(table(order=["9♠"]))
    _down_to_one_card(t, 0)
    t.submit(PlayFaceDown(0, (0,), Claim(1, 9)))  # true
    t.submit(Challenge(1))
    t.serve()
    outcome = GAME.outcome(t.state)
    assert outcome.winners == (0,) and len(hand(t, 1)) == 27 and hand(t, 0) == ()


def test_b13_three_to_six_players_any_opponent_may_challenge() -> None:
    with pytest.raises(IllegalMove, match="2 to 6"):
        GAME.new(BluffConfig(), 7)
    t = start(table(4))
    t.submit(PlayFaceDown(0, hand(t, 0)[:1], Claim(2, 4)))
    assert GAME.legal_kinds(t.state, 1) == {"play", "challenge"}
    assert GAME.legal_kinds(t.state, 3) == {"challenge"}
    t.submit(Challenge(3))  # the first challenge in the log counts
    with pytest.raises(IllegalMove):
        GAME.apply(t.state, Challenge(2))
    while GAME.pending(t.state):
        t.serve()
    assert t.state.turn == 3
    t.submit(PlayFaceDown(3, hand(t, 3)[:2], Claim(1, 1)))
    assert t.state.turn == 0  # round the table in seat order
    t.submit(PlayFaceDown(0, hand(t, 0)[:1], Claim(1, 2)))
    with pytest.raises(IllegalMove):
        GAME.apply(t.state, Challenge(0))  # not by its claimant
    t.submit(Challenge(3))  # only the latest play is turned up, not seat 3's own
    assert GAME.pending(t.state) == (Reveal(t.state.last.positions, "challenge"),)
    assert len(t.state.last.positions) == 1


# -- codec, views, replay --------------------------------------------------------------
def test_events_and_config_round_trip() -> None:
    for e in (PlayFaceDown(1, (3, 9), Claim(2, 12)), Challenge(0), Accept(1), Show(0, 4)):
        assert GAME.decode_event(e.to_data()) == e
    assert str(PlayFaceDown(1, (3, 9), Claim(2, 12))) == "seat 1 places 2, claims 2 × Q"
    cfg = BluffConfig(jokers=True, twos_reset=True, start=Start.RANDOM)
    assert (
        GAME.decode_config(
            {"jokers": True, "twos_reset": True, "start": "random", "show_seconds": 10}
        )
        == cfg
    )
    with pytest.raises(MalformedEvent):
        GAME.decode_config({"jokers": 1, "twos_reset": True, "start": "random", "show_seconds": 10})
    with pytest.raises(MalformedEvent):
        GAME.decode_config(
            {"jokers": True, "twos_reset": True, "start": "dice", "show_seconds": 10}
        )


def test_same_events_same_bytes() -> None:
    from engines.bots.bluff import SensibleBluffBot

    t = Simulator(GAME, BluffConfig(), 3, deck_seed=5)
    t.play([SensibleBluffBot(random.Random(i)) for i in range(3)], seed=5)
    replay = GAME.new(BluffConfig(), 3)
    for e in t.events:
        replay = GAME.apply(replay, GAME.decode_event(e.to_data()))
    assert GAME.encode(replay) == GAME.encode(t.state)
    assert GAME.outcome(replay) == GAME.outcome(t.state)


def test_system_event_that_answers_nothing_is_refused() -> None:
    t = start(table())
    before = GAME.encode(t.state)
    for stray in (
        Revealed((0,), (C("A♠"),)),
        Dealt(0, (0,)),
        RandomValue("starter", 0),
        TimerExpired("starter"),
    ):
        with pytest.raises(IllegalMove):
            GAME.apply(t.state, stray)
    assert GAME.encode(t.state) == before

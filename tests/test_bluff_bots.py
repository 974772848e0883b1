"""Bluff as whole games: random legal (and illegal) event sequences keep
every card, never leak a hidden face into another seat's view, and replay to
identical bytes; 1000 bot games finish without error."""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engines.bluff import GAME, Accept, BluffConfig, Challenge, Claim, PlayFaceDown, Show, Start
from engines.bots import Simulator
from engines.bots.bluff import RandomBluffBot, SensibleBluffBot
from tests.engine_walk import assert_replays, walk_with_strays

configs = st.builds(
    BluffConfig,
    jokers=st.booleans(),
    twos_reset=st.booleans(),
    start=st.sampled_from(list(Start)),
)


def check_invariants(t: Simulator) -> None:
    state = t.state
    n = len(GAME.deck(state.config))
    zones = [p for h in state.hands for p in h]
    zones += [p for e in state.pile for p in e.positions] + list(state.aside)
    assert sorted(zones) == list(range(n)), "a card was lost or duplicated"
    for card_pos, card in state.public:
        assert t.faces[card_pos] == card, "a public face differs from the deck"
    for seat in range(t.seats):
        # the whole truth gives a seat no more than its own knowledge does
        assert GAME.view(state, seat, t.faces) == GAME.view(state, seat, t.known[seat])


def stray_event(rng: random.Random, t: Simulator):
    seat = rng.randrange(t.seats)
    n = len(t.faces)
    positions = tuple(rng.sample(range(n), rng.randint(1, 3)))
    return rng.choice(
        [
            PlayFaceDown(seat, positions, Claim(rng.randint(1, 6), rng.randint(1, 13))),
            Challenge(seat),
            Accept(seat),
            Show(seat, positions[0]),
        ]
    )


@settings(max_examples=40, deadline=None)
@given(
    config=configs,
    seats=st.integers(2, 6),
    seed=st.integers(0, 2**32),
    stray_rate=st.floats(0, 0.5),
)
# B11/B7: a failed challenge ends the game while the pile's hidden cards are
# still on their way to the challenger: they must stay hidden in its view
@example(
    config=BluffConfig(jokers=True, twos_reset=True, start=Start.ACE_OF_SPADES),
    seats=4,
    seed=132,
    stray_rate=0.34375,
)
def test_random_event_sequences_keep_cards_hide_faces_and_replay(
    config: BluffConfig, seats: int, seed: int, stray_rate: float
) -> None:
    rng = random.Random(seed)
    t = Simulator(GAME, config, seats, deck_seed=seed)
    bots = [RandomBluffBot(random.Random(f"{seed}/{s}")) for s in range(seats)]
    order = random.Random(seed + 1)
    walk_with_strays(t, bots, rng, order, 400, stray_rate, stray_event, check_invariants)
    assert_replays(t)


@pytest.mark.slow
def test_1000_bot_games_finish() -> None:
    lengths = []
    sensible_wins = 0
    for seed in range(1000):
        seats = 2 + seed % 5
        config = BluffConfig(
            jokers=seed % 2 == 0, twos_reset=seed % 3 == 0, start=list(Start)[seed % 2]
        )
        kinds = [(SensibleBluffBot if (s + seed) % 2 else RandomBluffBot) for s in range(seats)]
        bots = [k(random.Random(f"{seed}/{s}")) for s, k in enumerate(kinds)]
        t = Simulator(GAME, config, seats, deck_seed=seed)
        outcome = t.play(bots, seed, max_events=20_000)
        assert len(outcome.winners) == 1 and outcome.cheaters == ()
        lengths.append(len(t.events))
        sensible_wins += kinds[outcome.winners[0]] is SensibleBluffBot
    assert max(lengths) < 20_000
    # counting and truth-telling should beat random play clearly (~50% seats each)
    assert sensible_wins > 600, sensible_wins


def test_b5_sensible_bot_beats_a_four_of_a_kind_claim_with_one_card_left() -> None:
    # B5: with 4 × K standing, only a larger count beats it; a bot holding one
    # card it cannot claim truthfully must still make a legal (lying) claim.
    for seed in range(30):
        t = Simulator(GAME, BluffConfig(), 2, deck_seed=seed)
        while t.serve():
            pass
        state = t.state
        bot = SensibleBluffBot(random.Random(seed), lie_rate=1.0)
        seat = 0
        standing = Claim(4, 13)
        hands = (state.hands[0][:1], *state.hands[1:])
        state = dataclasses.replace(state, claim=standing, hands=hands)
        event = bot._play(state, seat, t.known[seat])
        assert event.claim.beats(standing), f"{event.claim} does not beat {standing}"
